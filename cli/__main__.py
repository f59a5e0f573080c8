"""``python -m clawback.cli``: the ``clawback`` script, for clients given a path to Python."""

from clawback.cli.main import main

main()
