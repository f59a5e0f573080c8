"""``clawback resume``: carry a found session on in Claude Code.

It replaces this process with ``claude --resume <id>`` in the session's folder, so the terminal
is Claude Code's. What can and cannot be resumed is decided in the core
(:mod:`clawback.core.archive.resume`); this module asks and prints.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, fail
from clawback.core.archive import (
    FolderGone,
    ResumePlan,
    claude_executable,
    plan_resume,
    resolve_session,
    unique_prefixes,
)


@click.command()
@click.argument("session")
@click.option("--here", is_flag=True, help="Run it from the current folder, not the session's.")
@click.pass_context
def resume(ctx: click.Context, session: str, here: bool) -> None:
    """Continue a Claude Code session in Claude Code (`claude --resume <id>` in its folder)."""
    home = open_home(ctx)
    found = resolve_session(home.db, session)
    [shown] = unique_prefixes(home.db, [found.id])
    claude = claude_executable(home.config.chat.claude_command)
    current = Path.cwd()
    try:
        plan = plan_resume(home.db, found, claude, here=current if here else None, shown_as=shown)
    except FolderGone as gone:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise
        where = f"ran in {gone.folder}, which no longer exists" if gone.folder else "has no folder"
        err.print(f"Session {escape(shown)} {escape(where)}.")
        if not click.confirm(f"Resume it from the current folder ({current})?", err=True):
            sys.exit(1)
        plan = plan_resume(home.db, found, claude, here=current, shown_as=shown)
    home.close()
    _exec(plan)


def _exec(plan: ResumePlan) -> None:
    """Become Claude Code: same terminal, same environment, no shell."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.chdir(plan.cwd)
        os.execvp(plan.argv[0], plan.argv)
    except FileNotFoundError:
        fail(
            f"{plan.argv[0]}: Claude Code is not installed or not on PATH"
            " (install it, or set chat.claude_command / $CLAWBACK_CLAUDE)"
        )
    except OSError as exc:
        fail(f"cannot run {plan.argv[0]} in {plan.cwd}: {exc.strerror}")
