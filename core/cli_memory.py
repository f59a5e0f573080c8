"""Memory commands: ``memory list|show|path|new|check``, ``facts``, and ``process``.

They register themselves on the main ``cli`` group when :mod:`clawback.core.cli` imports this
module. Like every command, they print for people by default and stable JSON with ``--json``,
and report failures as one line on stderr with a non-zero exit. ``memory check`` and ``process``
exit 1 when they found a problem (a flagged ``MEMORY.md``, a broken link, a conversation that
failed), so scripts can act on it.

Nothing here decides anything: the rules live in :mod:`~clawback.core.memory_files`,
:mod:`~clawback.core.facts` and :mod:`~clawback.core.librarian`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import click
from rich.markup import escape

from .chat import ChatEngine
from .chat_sessions import ChatSession
from .cli import _open, _print_json, cli, err, out
from .cli_chat import _chat_session_id
from .compaction import (
    CompactionProposal,
    Compactor,
    describe_changes,
    extract_compacted_facts,
    list_compactions,
)
from .context import Clawback
from .errors import ClawbackError, NotFoundError
from .facts import FACT_TYPES, Fact, FactChange, FactStore
from .flush import FlushProposal, MemoryFlush
from .librarian import ConversationOutcome, Librarian
from .memory_files import MAX_BYTES, MAX_LINES, Workspace

# -- memory files ----------------------------------------------------------------------------


def _workspace(ctx: click.Context) -> Workspace:
    return Workspace(_open(ctx).workspace).ensure()


@cli.group()
def memory() -> None:
    """Memory files: MEMORY.md and the daily notes in memory/ (names relative to the workspace)."""


@memory.command(name="list")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def memory_list(ctx: click.Context, as_json: bool) -> None:
    """MEMORY.md first, then daily notes, newest first."""
    files = _workspace(ctx).list()
    if as_json:
        _print_json(
            [
                {"name": f.name, "path": str(f.path), "bytes": f.size, "lines": f.lines,
                 "modified": f.modified}
                for f in files
            ]
        )  # fmt: skip
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
    """Print one memory file (e.g. MEMORY.md, memory/2026-11-22.md)."""
    click.echo(_workspace(ctx).read(name), nl=False)


@memory.command(name="path")
@click.pass_context
def memory_path(ctx: click.Context) -> None:
    """Print the workspace folder."""
    click.echo(str(_workspace(ctx).root))


@memory.command(name="new")
@click.pass_context
def memory_new(ctx: click.Context) -> None:
    """Create today's note (memory/YYYY-MM-DD.md) if needed; print its path."""
    app = _open(ctx)
    path = _workspace(ctx).new_daily()
    app.ingest_changed({path})  # searchable at once, like any save
    click.echo(str(path))


@memory.command(name="check")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def memory_check(ctx: click.Context, as_json: bool) -> None:
    """Flag MEMORY.md over 200 lines or 25 KB, and relative links that lead nowhere."""
    report = _workspace(ctx).check()
    size = report.size
    if as_json:
        _print_json(
            {
                "ok": report.ok,
                "memory": None if size is None else {
                    "name": size.name, "lines": size.lines, "bytes": size.bytes,
                    "over_lines": size.over_lines, "over_bytes": size.over_bytes,
                    "max_lines": MAX_LINES, "max_bytes": MAX_BYTES,
                },
                "broken_links": [
                    {"file": name, "line": line, "target": target}
                    for name, line, target in report.broken_links
                ],
            }
        )  # fmt: skip
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


@cli.group(invoke_without_command=True)
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
    store = FactStore(_open(ctx).db)
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
        _print_json([fact.to_json() for fact in found])
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
    fact = FactStore(_open(ctx).db).edit(fact_id, text)
    if as_json:
        _print_json(fact.to_json())
        return
    _print_fact(fact)


@facts.command(name="supersede")
@click.argument("fact_id", type=int)
@click.argument("text")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def facts_supersede(ctx: click.Context, fact_id: int, text: str, as_json: bool) -> None:
    """Replace a fact with TEXT; the old one is kept, marked superseded (see --all)."""
    store = FactStore(_open(ctx).db)
    new = store.supersede(fact_id, text)
    if as_json:
        _print_json({"superseded": store.get(fact_id).to_json(), "fact": new.to_json()})
        return
    _print_fact(new)
    err.print(f"[dim]fact {fact_id} is now superseded by {new.id}[/]")


# -- process -----------------------------------------------------------------------------------


def _print_outcome(outcome: ConversationOutcome) -> None:
    head = f"{outcome.id:6} [magenta]{outcome.source:11}[/] {outcome.message_count:4} msgs"
    if outcome.status == "archived":
        counts = outcome.counts()
        parts = [f"+{counts['add']} new"]
        parts += [f"{counts[k]} {label}" for k, label in (
            ("update", "updated"), ("supersede", "superseding"), ("none", "already known"))
            if counts[k]]  # fmt: skip
        summary = escape((outcome.summary or "")[:100])
        out.print(f"{head} [green]archived[/] facts: {', '.join(parts)}  [dim]{summary}[/]")
    elif outcome.status == "skipped":
        out.print(f"{head} [dim]skipped ({escape(outcome.reason or 'too short')})[/]")
    else:
        err.print(f"{head} [red]failed[/], left ready: {escape(outcome.error or '')}")


@cli.command()
@click.option(
    "--limit", "-n", type=click.IntRange(1), help="At most this many claude calls (skips are free)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end.")
@click.pass_context
def process(ctx: click.Context, limit: int | None, as_json: bool) -> None:
    """Turn finished conversations into knowledge facts and a summary (the librarian)."""
    app = _open(ctx)
    librarian = Librarian(app, on_outcome=None if as_json else _print_outcome)
    report = asyncio.run(librarian.process(limit=limit))
    if as_json:
        _print_json(report.to_json())
    else:
        _print_totals(report.to_json())
    if report.failed:
        sys.exit(1)


def _print_totals(data: dict[str, Any]) -> None:
    if data["recovered"]:
        err.print(f"[yellow]{data['recovered']} conversation(s) left mid-way by an earlier run "
                  "were returned to ready.[/]")  # fmt: skip
    if not data["conversations"]:
        err.print("Nothing to process: no conversations are ready.")
        return
    err.print(
        f"{data['archived']} archived, {data['skipped']} skipped, {data['failed']} failed."
        + (f" Stopped: {escape(data['stopped'])}" if data["stopped"] else "")
    )


# ``flush``, ``compact`` and ``compactions`` belong to the chat engine's memory work and are
# registered beside it.


# -- flush, compact, compactions ---------------------------------------------------------------


def _chat_session(app: Clawback, engine: ChatEngine, ref: str) -> ChatSession:
    """The chat session ``ref`` names: a key (its current session), an id or an id prefix."""
    ref = ref.strip()
    if ":" in ref:
        found = engine.store.current(ref)
        if found is None:
            raise NotFoundError(f"no chat session for key {ref!r} (see `clawback sessions`)")
        return found
    session_id = _chat_session_id(app, ref)
    if session_id is None:
        raise NotFoundError(
            f"no clawback chat session {ref!r}: flush and compaction work on sessions of"
            " `clawback chat` (see `clawback sessions --source native`)"
        )
    return engine.store.require(session_id)


def _interactive() -> bool:
    return sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()


def _print_flush(proposal: FlushProposal) -> None:
    if proposal.empty:
        out.print("Nothing worth storing: claude replied NO_REPLY.")
        return
    out.print(f"[bold]Proposed notes[/] for {escape(proposal.target_name)}:\n")
    click.echo(proposal.notes.rstrip() + "\n")
    out.print("[bold]Diff:[/]")
    for line in proposal.diff.splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        out.print(f"[{style}]{escape(line)}[/]")


@cli.command(name="flush")
@click.argument("session")
@click.option("--yes", "-y", is_flag=True, help="Write the notes without asking.")
@click.option("--dry-run", is_flag=True, help="Show the proposed notes and diff; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def flush_command(
    ctx: click.Context, session: str, yes: bool, dry_run: bool, as_json: bool
) -> None:
    """Save durable memories of a chat SESSION (id, prefix or key) to today's memory file.

    Claude proposes the notes; clawback appends them to memory/YYYY-MM-DD.md under a heading
    naming the session. Without --yes it asks first (on a terminal) or only shows them.
    """
    app = _open(ctx)
    engine = app.chat_engine()
    target = _chat_session(app, engine, session)
    flusher = MemoryFlush(engine)
    proposal = asyncio.run(flusher.propose(target))
    if not as_json:
        _print_flush(proposal)
    if dry_run:
        apply = False
    elif yes:
        apply = True
    elif _interactive() and not as_json:
        # an empty flush is recorded too, so the chat does not ask for one again this cycle
        apply = proposal.empty or click.confirm(
            f"Append these notes to {proposal.target_name}?", default=True
        )
    else:
        apply = False
        if not as_json and not proposal.empty:
            err.print(
                f"Not written. Run `clawback flush {target.id[:8]} --yes` to append notes"
                " (they are proposed anew)."
            )
    written = flusher.apply(proposal) if apply else None
    if as_json:
        _print_json({**proposal.to_json(), "applied": apply, "written": str(written or "") or None})
    elif written is not None:
        out.print(f"Saved to {escape(str(written))} (indexed: `clawback search` finds it).")
    elif dry_run:
        err.print("Dry run: nothing was written.")


def _print_compaction(session: ChatSession, proposal: CompactionProposal) -> None:
    out.print(
        f"Session {session.id[:8]} ({escape(session.key)}): {proposal.messages_removed}"
        f" message(s) become a summary, {len(proposal.kept)} stay verbatim;"
        f" ~{proposal.tokens_before:,} → ~{proposal.tokens_after:,} tokens.\n"
    )
    out.print("[bold]Summary:[/]")
    click.echo(proposal.summary.rstrip() + "\n")


@cli.command(name="compact")
@click.argument("session")
@click.option("--yes", "-y", is_flag=True, help="Commit the summary without asking.")
@click.option("--keep", type=click.IntRange(0), help="Messages kept verbatim (default: config).")
@click.option("--no-facts", is_flag=True, help="Skip extracting facts from what was compacted.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def compact_command(
    ctx: click.Context, session: str, yes: bool, keep: int | None, no_facts: bool, as_json: bool
) -> None:
    """Summarize a chat SESSION's older messages so its context shrinks (the transcript keeps
    every message; `clawback compactions` lists each compaction)."""
    app = _open(ctx)
    engine = app.chat_engine()
    target = _chat_session(app, engine, session)
    compactor = Compactor(engine)
    proposal = asyncio.run(compactor.propose(target, keep=keep))
    commit = yes
    if not as_json:
        _print_compaction(target, proposal)
    if not yes:
        if _interactive():
            commit = click.confirm("Commit this compaction?", default=True)
        elif not as_json:
            err.print(f"Not compacted. Run `clawback compact {target.id[:8]} --yes` to commit.")
    record = compactor.commit(proposal) if commit else None
    facts: list[FactChange] = []
    failed = None
    if record is not None and not no_facts:
        try:
            facts = asyncio.run(extract_compacted_facts(app, engine.runner, proposal))
        except ClawbackError as exc:
            failed = " ".join(str(exc).split())
    if as_json:
        _print_json(
            {
                **proposal.to_json(),
                "committed": record is not None,
                "compaction": record.to_json() if record else None,
                "facts": [change.to_json() for change in facts],
                "facts_error": failed,
            }
        )
        return
    if record is None:
        return
    out.print(f"Compacted: ledger row {record.id}.")
    if failed:
        err.print(f"[yellow]Knowledge extraction failed:[/] {escape(failed)}")
    elif not no_facts:
        out.print(f"Knowledge: {describe_changes(facts)}.")


@cli.command(name="compactions")
@click.argument("session", required=False)
@click.option("--limit", "-n", type=click.IntRange(1), help="At most this many.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def compactions_command(
    ctx: click.Context, session: str | None, limit: int | None, as_json: bool
) -> None:
    """The compaction ledger, newest first: when, how much, and the summary."""
    app = _open(ctx)
    session_id = None
    if session is not None:
        session_id = _chat_session(app, app.chat_engine(), session).id
    rows = list_compactions(app.db, session_id, limit=limit)
    if as_json:
        _print_json([row.to_json() for row in rows])
        return
    if not rows:
        err.print("No compactions yet.")
        return
    for row in rows:
        first = (row.summary.strip().splitlines() or [""])[0][:90]
        out.print(
            f"{row.id:5} {row.created_at[:16].replace('T', ' ')} [cyan]{row.session_id[:8]}[/]"
            f" ~{row.tokens_before:,} → ~{row.tokens_after:,} tokens,"
            f" {row.messages_removed} msgs  [dim]{escape(first)}[/]"
        )
