"""``clawback flush``: save durable notes of a chat session to today's memory file.

Claude proposes the notes and this asks before it appends them (or only shows them, off a
terminal). The rules live in :mod:`~clawback.core.memory.flush`; the REPL shows a proposal
with the same :func:`print_flush`.
"""

from __future__ import annotations

import asyncio

import click
from clawback.cli.home import chat_session, open_home
from clawback.cli.output import err, escape, on_a_terminal, out, print_json
from clawback.core.memory import FlushProposal


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
    target = chat_session(engine, session)
    flusher = home.memory_flush(engine)
    proposal = asyncio.run(flusher.propose(target))
    if not as_json:
        print_flush(proposal)
    if dry_run:
        apply = False
    elif yes:
        apply = True
    elif on_a_terminal() and not as_json:
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
