"""``clawback demo``: the app on a bundled demo archive, in a home of its own."""

from __future__ import annotations

import click
from clawback.cli.app import launch_app
from clawback.cli.output import err


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
