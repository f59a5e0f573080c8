"""Opening the terminal app: ``clawback`` with no command, and ``clawback demo``.

Textual is imported only here, when the app actually opens, which keeps the other commands
quick to start.
"""

from __future__ import annotations

from pathlib import Path

import click
from clawback.cli.output import err


def launch_app(ctx: click.Context, home: Path | None) -> None:
    """Run the app on ``home`` until it quits, and exit with its code."""
    from clawback.core.db_guard import guard_bus_errors
    from clawback.core.home import Home
    from clawback.tui.app import make_app

    app = make_app(Home.open(home))
    guard_bus_errors()  # a cut clawback.db-shm is mended, never a silent SIGBUS
    exit_code = app.run()
    ctx.exit(exit_code or 0)


@click.command()
@click.option("--ingest-only", is_flag=True, help="Build the demo home and print its path.")
@click.option("--reset", is_flag=True, help="Start the demo over from the bundled archive.")
@click.pass_context
def demo(ctx: click.Context, ingest_only: bool, reset: bool) -> None:
    """Try clawback on a bundled demo archive, in its own home (demo/ in your clawback home,
    kept between runs; --reset starts it over)."""
    from clawback.cli.home import home_option
    from clawback.core.demo import demo_home

    home = demo_home(home_option(ctx), reset=reset)
    if ingest_only:
        click.echo(str(home))
        err.print(f"Demo home ready. Try: clawback --home {home} search sqlite")
        return
    launch_app(ctx, home)
