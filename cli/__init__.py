"""clawback's command line: a click group whose commands each open the home, do one job and exit.

The CLI sits above everything else: it may import the core and, to open the terminal app, the UI.
Commands are loaded lazily (:mod:`clawback.cli.main`), so ``clawback search`` imports only what a
search needs.
"""
