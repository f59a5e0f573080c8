"""``clawback restore``: write a transcript Claude Code deleted back from clawback's kept copy.

Where it may write and what it keeps aside is decided in the core
(:mod:`clawback.core.archive.restore`); this module asks and prints. ``clawback resume``
(:mod:`clawback.cli.resume`) then carries the session on.
"""

from __future__ import annotations

from pathlib import Path

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out
from clawback.core.archive import NotIndexed, resolve_session, unique_prefixes


@click.command()
@click.argument("session")
@click.option(
    "--to",
    "to",
    type=click.Path(file_okay=False, path_type=Path),
    help="A projects folder to write into instead of Claude Code's (~/.claude/projects).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Move an existing file aside (as a backup) first; write a copy of a transcript that"
    " still exists elsewhere.",
)
@click.pass_context
def restore(ctx: click.Context, session: str, to: Path | None, force: bool) -> None:
    """Write a session's transcript back where Claude Code finds it, from clawback's copy."""
    home = open_home(ctx)
    found = resolve_session(home.db, session)
    [shown] = unique_prefixes(home.db, [found.id])
    try:
        written = home.restore(found, to, force=force)
        unindexed = None
    except NotIndexed as exc:
        written, unindexed = exc.written, exc
    for done in written:
        out.print(f"wrote {escape(str(done.path))} ({done.lines} lines)")
        if done.backup:
            out.print(f"  the file that was there is now {escape(str(done.backup))}")
        for original in done.also:
            out.print(f"  a copy: the transcript is still at {escape(str(original))}")
    err.print(
        "Secrets were masked in this copy (as in clawback's index), so a key or password the"
        " session held reads \\[masked] in it."
    )
    if unindexed is not None:
        click.echo(click.style("warning:", fg="yellow") + " " + str(unindexed), err=True)
    if to is None:
        out.print(f"Continue it with: clawback resume {escape(shown)}")
