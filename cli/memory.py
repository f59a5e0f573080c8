"""``clawback memory list|show|path|new|remember|check``: the memory files.

Like every command, they print for people by default and stable JSON with ``--json``,
and report failures as one line on stderr with a non-zero exit. ``memory check`` exits 1 when
it found a problem (a flagged ``MEMORY.md``, a broken link), so scripts can act on it.

Nothing here decides anything: the rules live in :mod:`~clawback.core.memory.files`.
"""

from __future__ import annotations

import difflib
import sys

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out, print_json
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.memory import MAX_BYTES, MAX_LINES, Workspace

#: a note from stdin is bounded (a person's note, not a file to import)
MAX_REMEMBER_BYTES = 64 * 1024


def _workspace(ctx: click.Context) -> Workspace:
    return Workspace(open_home(ctx).workspace).ensure()


def _print_problems(workspace: Workspace) -> None:
    """What the listing left out (a link out of the workspace, a FIFO...), one line each."""
    for name, why in workspace.problems:
        err.print(
            f"[yellow]skipped:[/] {escape(why if why.startswith(name) else f'{name}: {why}')}"
        )


@click.group()
def memory() -> None:
    """Memory files: MEMORY.md and the daily notes in memory/ (names relative to the workspace)."""


@memory.command(name="list")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def memory_list(ctx: click.Context, as_json: bool) -> None:
    """MEMORY.md first, then daily notes, newest first."""
    workspace = _workspace(ctx)
    files = workspace.list()
    _print_problems(workspace)
    if as_json:
        print_json(
            [
                {
                    "name": f.name,
                    "path": str(f.path),
                    "bytes": f.size,
                    "lines": f.lines,
                    "modified": f.modified,
                }
                for f in files
            ]
        )
        return
    if not files:
        err.print("No memory files yet. `clawback memory new` starts today's note.")
        return
    for f in files:
        out.print(f"{escape(f.name):28} {f.lines:6} lines {f.size:9,} bytes")


@memory.command(name="show")
@click.argument("name")
@click.pass_context
def memory_show(ctx: click.Context, name: str) -> None:
    """Print one memory file (MEMORY.md, memory/2026-11-22.md, or just 2026-11-22)."""
    workspace = _workspace(ctx)
    whole = workspace.expand_name(name)
    try:
        text = workspace.read(whole)
    except NotFoundError:
        names = [found.name for found in workspace.list()]
        near = difflib.get_close_matches(whole, names, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(near)}?" if near else "`clawback memory list` shows them"
        raise NotFoundError(f"no memory file {whole} ({hint})") from None
    click.echo(text, nl=False)


@memory.command(name="path")
@click.pass_context
def memory_path(ctx: click.Context) -> None:
    """Print the workspace folder."""
    click.echo(str(_workspace(ctx).root))


@memory.command(name="new")
@click.pass_context
def memory_new(ctx: click.Context) -> None:
    """Create today's note (memory/YYYY-MM-DD.md) if needed; print its path."""
    home = open_home(ctx)
    path = _workspace(ctx).new_daily()
    home.ingest_changed({path})  # searchable at once, like any save
    click.echo(str(path))


@memory.command(name="remember")
@click.argument("words", nargs=-1, required=True)
@click.pass_context
def memory_remember(ctx: click.Context, words: tuple[str, ...]) -> None:
    """Append WORDS (or, for -, what stdin holds) to today's note under the time; print its path.

    Secrets are masked first, as everywhere clawback stores text.
    """
    if words == ("-",):
        data = sys.stdin.buffer.read(MAX_REMEMBER_BYTES + 1)
        if len(data) > MAX_REMEMBER_BYTES:
            raise UsageError(f"the note is longer than {MAX_REMEMBER_BYTES:,} bytes")
        text = data.decode("utf-8", errors="replace")
    else:
        text = " ".join(words)
    home = open_home(ctx)
    path = _workspace(ctx).remember(text)
    home.ingest_changed({path})  # searchable at once, like any save
    click.echo(str(path))


@memory.command(name="check")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def memory_check(ctx: click.Context, as_json: bool) -> None:
    """Flag MEMORY.md over 200 lines or 25 KB, and relative links that lead nowhere."""
    workspace = _workspace(ctx)
    report = workspace.check()
    _print_problems(workspace)
    size = report.size
    if as_json:
        print_json(
            {
                "ok": report.ok,
                "memory": None
                if size is None
                else {
                    "name": size.name,
                    "lines": size.lines,
                    "bytes": size.bytes,
                    "over_lines": size.over_lines,
                    "over_bytes": size.over_bytes,
                    "max_lines": MAX_LINES,
                    "max_bytes": MAX_BYTES,
                },
                "broken_links": [
                    {"file": name, "line": line, "target": target}
                    for name, line, target in report.broken_links
                ],
            }
        )
        sys.exit(0 if report.ok else 1)
    if size is None:
        out.print("MEMORY.md: not there yet")
    elif size.flagged:
        over = []
        if size.over_lines:
            over.append(f"{size.lines} lines (limit {MAX_LINES})")
        if size.over_bytes:
            over.append(f"{size.bytes:,} bytes (limit {MAX_BYTES:,})")
        out.print(
            f"[yellow]MEMORY.md is too long:[/] {', '.join(over)}. Claude Code stops loading it "
            "there; move older parts into memory/ notes."
        )
    else:
        out.print(f"MEMORY.md: {size.lines} lines, {size.bytes:,} bytes (ok)")
    for name, line, target in report.broken_links:
        out.print(f"[yellow]broken link[/] {escape(name)}:{line} -> {escape(target)}")
    if report.ok:
        out.print("All memory files are fine.")
    sys.exit(0 if report.ok else 1)
