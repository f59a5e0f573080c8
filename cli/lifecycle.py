"""Lifecycle commands: ``flush``, ``compact``, ``compactions`` and ``process`` (the librarian).

They print for people by default and stable JSON with ``--json``, and report failures as one
line on stderr with a non-zero exit; ``process`` exits 1 when a conversation failed.
Nothing here decides anything: the rules live in :mod:`~clawback.core.memory`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out, print_json
from clawback.core.chat.engine import ChatEngine
from clawback.core.chat.sessions import ChatSession
from clawback.core.errors import ClawbackError, NotFoundError
from clawback.core.home import Home
from clawback.core.memory.compaction import (
    CompactionProposal,
    describe_changes,
    extract_compacted_facts,
    list_compactions,
)
from clawback.core.memory.facts import FactChange
from clawback.core.memory.flush import FlushProposal
from clawback.core.memory.librarian import ConversationOutcome

# -- memory files ----------------------------------------------------------------------------


def _print_outcome(outcome: ConversationOutcome) -> None:
    head = f"{outcome.id:6} [magenta]{outcome.source:11}[/] {outcome.message_count:4} msgs"
    if outcome.status == "archived":
        counts = outcome.counts()
        parts = [f"+{counts['add']} new"]
        parts += [
            f"{counts[k]} {label}"
            for k, label in (
                ("update", "updated"),
                ("supersede", "superseding"),
                ("none", "already known"),
            )
            if counts[k]
        ]
        summary = escape((outcome.summary or "")[:100])
        out.print(f"{head} [green]archived[/] facts: {', '.join(parts)}  [dim]{summary}[/]")
    elif outcome.status == "skipped":
        out.print(f"{head} [dim]skipped ({escape(outcome.reason or 'too short')})[/]")
    else:
        err.print(f"{head} [red]failed[/], left ready: {escape(outcome.error or '')}")


@click.command()
@click.option(
    "--limit", "-n", type=click.IntRange(1), help="At most this many claude calls (skips are free)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end.")
@click.pass_context
def process(ctx: click.Context, limit: int | None, as_json: bool) -> None:
    """Turn finished conversations into knowledge facts and a summary (the librarian)."""
    home = open_home(ctx)
    librarian = home.librarian(on_outcome=None if as_json else _print_outcome)
    report = asyncio.run(librarian.process(limit=limit))
    if as_json:
        print_json(report.to_json())
    else:
        _print_totals(report.to_json())
    if report.failed:
        sys.exit(1)


def _print_totals(data: dict[str, Any]) -> None:
    if data["recovered"]:
        err.print(
            f"[yellow]{data['recovered']} conversation(s) left mid-way by an earlier run "
            "were returned to ready.[/]"
        )
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


def _chat_session(home: Home, engine: ChatEngine, ref: str) -> ChatSession:
    """The chat session ``ref`` names: a key (its current session), an id or an id prefix."""
    ref = ref.strip()
    if ":" in ref:
        found = engine.store.current(ref)
        if found is None:
            raise NotFoundError(f"no chat session for key {ref!r} (see `clawback sessions`)")
        return found
    found = engine.store.find(ref)
    if found is None:
        raise NotFoundError(
            f"no clawback chat session {ref!r}: flush and compaction work on sessions of"
            " `clawback chat` (see `clawback sessions --source native`)"
        )
    return found


def _interactive() -> bool:
    return sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()


def print_flush(proposal: FlushProposal) -> None:
    if proposal.empty:
        out.print("Nothing worth storing: claude replied NO_REPLY.")
        return
    out.print(f"[bold]Proposed notes[/] for {escape(proposal.target_name)}:\n")
    click.echo(proposal.notes.rstrip() + "\n")
    out.print("[bold]Diff:[/]")
    for line in proposal.diff.splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        out.print(f"[{style}]{escape(line)}[/]")


@click.command(name="flush")
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
    home = open_home(ctx)
    engine = home.chat_engine()
    target = _chat_session(home, engine, session)
    flusher = home.memory_flush(engine)
    proposal = asyncio.run(flusher.propose(target))
    if not as_json:
        print_flush(proposal)
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
        print_json({**proposal.to_json(), "applied": apply, "written": str(written or "") or None})
    elif written is not None:
        out.print(f"Saved to {escape(str(written))} (indexed: `clawback search` finds it).")
    elif dry_run:
        err.print("Dry run: nothing was written.")


def print_compaction(session: ChatSession, proposal: CompactionProposal) -> None:
    out.print(
        f"Session {session.id[:8]} ({escape(session.key)}): {proposal.messages_removed}"
        f" message(s) become a summary, {len(proposal.kept)} stay verbatim;"
        f" ~{proposal.tokens_before:,} → ~{proposal.tokens_after:,} tokens.\n"
    )
    out.print("[bold]Summary:[/]")
    click.echo(proposal.summary.rstrip() + "\n")


@click.command(name="compact")
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
    home = open_home(ctx)
    engine = home.chat_engine()
    target = _chat_session(home, engine, session)
    compactor = home.compactor(engine)
    proposal = asyncio.run(compactor.propose(target, keep=keep))
    commit = yes
    if not as_json:
        print_compaction(target, proposal)
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
            facts = asyncio.run(extract_compacted_facts(home.db, engine.runner, proposal))
        except ClawbackError as exc:
            failed = " ".join(str(exc).split())
    if as_json:
        print_json(
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


@click.command(name="compactions")
@click.argument("session", required=False)
@click.option("--limit", "-n", type=click.IntRange(1), help="At most this many.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def compactions_command(
    ctx: click.Context, session: str | None, limit: int | None, as_json: bool
) -> None:
    """The compaction ledger, newest first: when, how much, and the summary."""
    home = open_home(ctx)
    session_id = None
    if session is not None:
        session_id = _chat_session(home, home.chat_engine(), session).id
    rows = list_compactions(home.db, session_id, limit=limit)
    if as_json:
        print_json([row.to_json() for row in rows])
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
