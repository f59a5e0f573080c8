"""``python -m clawback``: the same command as the ``clawback`` script."""

from clawback.cli.main import main

main()
