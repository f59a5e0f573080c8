"""``python -m clawback.cli``: the ``clawback`` script, for clients given a path to Python."""

from clawback.cli.entry import main

main()
