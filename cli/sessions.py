"""Commands that list what the archive holds: ``sessions`` and ``conversations``.

Each opens the home, does one job and prints: rich text for people, ``--json`` for programs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out, print_json
from clawback.core.archive import (
    CHANNELS,
    SessionSummary,
    list_conversations,
    list_sessions,
    unique_prefixes,
)
from clawback.core.records import Source

if TYPE_CHECKING:
    from clawback.core.home import Home


@click.command()
@click.option("--source", type=click.Choice([s.value for s in Source if s is not Source.MEMORY]))
@click.option("--limit", "-n", default=50, show_default=True, type=click.IntRange(1))
@click.option("--project", help="Only sessions whose working directory contains this.")
@click.option(
    "--filter", "text", help="Only sessions where every word is in a name or was said in them."
)
@click.option("--deleted", is_flag=True, help="Only sessions whose source files are gone.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def sessions(
    ctx: click.Context,
    source: str | None,
    limit: int,
    project: str | None,
    text: str | None,
    deleted: bool,
    as_json: bool,
) -> None:
    """List sessions, newest first."""
    rows = list_sessions(
        open_home(ctx).db,
        source=source,
        project_contains=project,
        text=text,
        limit=limit,
        deleted=deleted,
    )
    if as_json:
        usage = usage_json(open_home(ctx), [row.id for row in rows])
        print_json([{**row.to_json(), "usage": usage.get(row.id)} for row in rows])
        return
    if not rows:
        if deleted:
            err.print("No session has lost its source files.")
        elif source or project or text:
            err.print("No sessions match.")
        else:
            err.print("No sessions yet. Run `clawback ingest` (or `clawback demo`).")
        return
    prefixes = unique_prefixes(open_home(ctx).db, [row.id for row in rows])
    width = max(len(prefix) for prefix in prefixes)
    # The project column names what --project matches: the working folder's own name.
    named = [_cut(_one_line(row.project) or "-", 16) for row in rows]
    project_width = max(len(name) for name in named)
    # The source as --source names it, and the channel a chat came through ("native · Telegram").
    origins = [_origin(row) for row in rows]
    origin_width = max(len(origin) for origin in origins)
    for row, prefix, project_shown, origin in zip(rows, prefixes, named, origins, strict=True):
        when = (row.updated_at or "")[:16].replace("T", " ")
        missing = " [yellow](source deleted)[/]" if row.source_missing else ""
        title = _one_line(row.title)[:80]
        out.print(
            f"[dim]{escape(prefix):{width}}[/] {when} [magenta]{origin:{origin_width}}[/] "
            f"[cyan]{escape(project_shown):{project_width}}[/] "
            f"{row.message_count:5} msgs  {escape(title)}{missing}"
        )
    if deleted and any(row.source == Source.CLAUDE_CODE.value for row in rows):
        err.print("Write a Claude Code session back with `clawback restore ID`.")


def _origin(row: SessionSummary) -> str:
    channel = row.channel
    return f"{row.source} · {CHANNELS.get(channel, channel)}" if channel else row.source


def _one_line(text: str | None) -> str:
    """A table cell: a folder or title may hold newlines or terminal escapes (any name a
    file system allows), which would break the row or reach the terminal as codes."""
    return " ".join(_CONTROL.sub("?", text or "").split())


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def usage_json(home: Home, session_ids: list[str]) -> dict[str, dict[str, Any]]:
    """What each session cost (``clawback usage``'s fields), for the JSON of its listing."""
    from clawback.core.usage import load_prices, session_usage

    prices = load_prices(home.config.usage.prices)
    found = session_usage(home.db, prices, session_ids)
    return {session_id: totals.token_json() for session_id, totals in found.items()}


@click.command()
@click.option(
    "--status", type=click.Choice(["active", "ready", "processing", "archived", "skipped"])
)
@click.option("--limit", "-n", default=100, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def conversations(ctx: click.Context, status: str | None, limit: int, as_json: bool) -> None:
    """Conversations (sessions split at long gaps) and their processing status."""
    rows = list_conversations(open_home(ctx).db, status=status, limit=limit)
    if as_json:
        print_json(rows)
        return
    for row in rows:
        when = (row["ended_at"] or "")[:16].replace("T", " ")
        out.print(
            f"{row['id']:6} {row['status']:10} {when} {row['message_count']:4} msgs "
            f"[magenta]{row['source']}[/] [dim]{escape(row['file'])}:{row['first_line']}[/]"
        )
