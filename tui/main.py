"""The ``clawback`` console script: the core's CLI, plus the terminal app as its default.

The core must not import the UI, so the UI registers itself with the CLI here. Textual is only
imported when the app actually opens, which keeps ``clawback search`` quick to start.
"""

from __future__ import annotations

from pathlib import Path

import click
from clawback.core import cli as core_cli


def launch_app(ctx: click.Context, home: Path | None, demo: bool) -> None:
    from clawback.core.context import Clawback
    from clawback.core.demo import build_demo_home

    from .app import make_app

    if demo:
        home = build_demo_home()
    app = make_app(Clawback.open(home))
    exit_code = app.run()
    ctx.exit(exit_code or 0)


def main(argv: list[str] | None = None) -> None:
    core_cli.set_app_launcher(launch_app)
    core_cli.main(argv)
