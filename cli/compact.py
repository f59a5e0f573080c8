"""``clawback compact`` and ``clawback compactions``: shrink a chat session's context, and
the ledger of every compaction.

The transcript keeps every message; the rules live in :mod:`~clawback.core.memory.compaction`.
The REPL shows a proposal with the same :func:`print_compaction`.
"""

from __future__ import annotations

import asyncio

import click
from clawback.cli.home import chat_session, open_home
from clawback.cli.output import err, escape, on_a_terminal, out, print_json
from clawback.core.chat.sessions import ChatSession
from clawback.core.errors import ClawbackError
from clawback.core.memory import (
    CompactionProposal,
    FactChange,
    describe_changes,
    extract_compacted_facts,
    list_compactions,
)


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
    target = chat_session(engine, session)
    compactor = home.compactor(engine)
    proposal = asyncio.run(compactor.propose(target, keep=keep))
    commit = yes
    if not as_json:
        print_compaction(target, proposal)
    if not yes:
        if on_a_terminal():
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
        session_id = chat_session(home.chat_engine(), session).id
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
