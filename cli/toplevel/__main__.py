"""``python -m clawback``: the same command as the ``clawback`` script."""

from clawback.cli.entry import main

main()
