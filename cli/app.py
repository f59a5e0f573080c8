"""Opening the terminal app, for ``clawback`` with no command (or ``--demo``) and ``clawback demo``.

Textual is imported only here, when the app actually opens, which keeps the other commands
quick to start.
"""

from __future__ import annotations

from pathlib import Path

import click


def launch_app(ctx: click.Context, home: Path | None) -> None:
    """Run the app on ``home`` until it quits, and exit with its code."""
    from clawback.core.db_guard import guard_bus_errors
    from clawback.core.home import Home
    from clawback.tui.app import make_app

    app = make_app(Home.open(home))
    guard_bus_errors()  # a cut clawback.db-shm is mended, never a silent SIGBUS
    exit_code = app.run()
    ctx.exit(exit_code or 0)
