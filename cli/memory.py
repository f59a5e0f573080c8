"""Memory commands: ``memory list|show|path|new|remember|check`` and ``facts``.

Like every command, they print for people by default and stable JSON with ``--json``,
and report failures as one line on stderr with a non-zero exit. ``memory check`` and ``process``
exit 1 when they found a problem (a flagged ``MEMORY.md``, a broken link, a conversation that
failed), so scripts can act on it.

Nothing here decides anything: the rules live in :mod:`~clawback.core.memory.files`,
:mod:`~clawback.core.memory.facts` and :mod:`~clawback.core.memory.librarian`.
"""

from __future__ import annotations

import difflib
import sys

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out, print_json
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.memory.facts import FACT_TYPES, Fact, FactStore
from clawback.core.memory.files import MAX_BYTES, MAX_LINES, Workspace

#: a note from stdin is bounded (a person's note, not a file to import)
MAX_REMEMBER_BYTES = 64 * 1024

# -- memory files ----------------------------------------------------------------------------


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


# -- facts -----------------------------------------------------------------------------------


def _print_fact(fact: Fact) -> None:
    flags = []
    if fact.superseded_by is not None:
        flags.append(f"[dim]superseded by {fact.superseded_by}[/]")
    if fact.edited:
        flags.append("[cyan]edited[/]")
    when = (fact.source_ts or fact.created_at)[:10]
    style = "dim" if fact.superseded_by is not None else "bold"
    out.print(
        f"[{style}]{fact.id:5}[/] [magenta]{fact.type:14}[/] {when} {escape(fact.content)}"
        + (f" [dim]({escape(fact.context)})[/]" if fact.context else "")
        + (" " + " ".join(flags) if flags else "")
    )


@click.group(invoke_without_command=True)
@click.option("--type", "kind", type=click.Choice(FACT_TYPES), help="Only facts of this type.")
@click.option("--all", "include_superseded", is_flag=True, help="Include superseded facts.")
@click.option("--search", "query", help="Only facts matching this (search syntax).")
@click.option("--session", "session_id", help="Only facts from this session id.")
@click.option("--limit", "-n", type=click.IntRange(1), help="At most this many.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def facts(
    ctx: click.Context,
    kind: str | None,
    include_superseded: bool,
    query: str | None,
    session_id: str | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """Knowledge facts, newest first (`facts edit` and `facts supersede` change them)."""
    if ctx.invoked_subcommand is not None:
        return
    store = FactStore(open_home(ctx).db)
    if query is not None:
        found = store.search(
            query, limit=limit or 50, type=kind, include_superseded=include_superseded
        )
        if session_id is not None:
            found = [fact for fact in found if fact.session_id == session_id]
    else:
        found = store.list(
            type=kind, include_superseded=include_superseded, session_id=session_id, limit=limit
        )
    if as_json:
        print_json([fact.to_json() for fact in found])
        return
    if not found:
        err.print("No facts yet. `clawback process` extracts them from finished conversations.")
        return
    for fact in found:
        _print_fact(fact)


@facts.command(name="edit")
@click.argument("fact_id", type=int)
@click.argument("text")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def facts_edit(ctx: click.Context, fact_id: int, text: str, as_json: bool) -> None:
    """Correct a fact in place (marked edited: no automatic rule rewrites it)."""
    fact = FactStore(open_home(ctx).db).edit(fact_id, text)
    if as_json:
        print_json(fact.to_json())
        return
    _print_fact(fact)


@facts.command(name="supersede")
@click.argument("fact_id", type=int)
@click.argument("text")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def facts_supersede(ctx: click.Context, fact_id: int, text: str, as_json: bool) -> None:
    """Replace a fact with TEXT; the old one is kept, marked superseded (see --all)."""
    store = FactStore(open_home(ctx).db)
    new = store.supersede(fact_id, text)
    if as_json:
        print_json({"superseded": store.get(fact_id).to_json(), "fact": new.to_json()})
        return
    _print_fact(new)
    err.print(f"[dim]fact {fact_id} is now superseded by {new.id}[/]")


# -- process -----------------------------------------------------------------------------------
