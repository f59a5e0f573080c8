"""``clawback process``: the librarian turns finished conversations into knowledge facts.

It prints each conversation as it is done, or stable JSON with ``--json``, and exits 1 when a
conversation failed. The rules live in :mod:`~clawback.core.memory.librarian`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out, print_json
from clawback.core.memory import ConversationOutcome


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
