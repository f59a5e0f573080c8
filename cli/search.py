"""``clawback search``: the one command people run most, so it starts fast.

It opens a plain read connection (no migrations, no sqlite-utils) and prints with click alone
(no rich): its start-up is measured against a bare one-query Python process in ``bench/``.
"""

from __future__ import annotations

import click
from clawback.cli.home import open_index
from clawback.cli.output import print_json
from clawback.core.archive.search import MARK_END, MARK_START, SearchFilters, search
from clawback.core.records import KIND_FILTERS, Source

_HIGHLIGHT_ON, _HIGHLIGHT_OFF = "\x1b[1;7m", "\x1b[22;27m"


def _render_snippet(snippet: str) -> str:
    """One line, the matches in bold reverse video (click drops the codes when piped)."""
    return (
        " ".join(snippet.split())
        .replace(MARK_START, _HIGHLIGHT_ON)
        .replace(MARK_END, _HIGHLIGHT_OFF)
    )


@click.command(name="search")
@click.argument("query")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.option("--source", type=click.Choice([s.value for s in Source]))
@click.option("--session", "session_id", help="Only this session (id or id prefix).")
@click.option("--role", type=click.Choice(["user", "assistant", "system", "tool"]))
@click.option("--kind", type=click.Choice(list(KIND_FILTERS)), default="all", show_default=True)
@click.option("--since", help="Only entries on or after this date (YYYY-MM-DD).")
@click.option("--until", help="Only entries before this date (YYYY-MM-DD).")
@click.option("--project", help="Only sessions whose working directory contains this.")
@click.option("--no-sidechains", is_flag=True, help="Leave out sub-agent messages.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of hits.")
@click.pass_context
def search_command(
    ctx: click.Context,
    query: str,
    limit: int,
    source: str | None,
    session_id: str | None,
    role: str | None,
    kind: str,
    since: str | None,
    until: str | None,
    project: str | None,
    no_sidechains: bool,
    as_json: bool,
) -> None:
    """Full-text search across every session (quotes for phrases, foo* prefixes, -word)."""
    conn = open_index(ctx)
    filters = SearchFilters(
        source=source,
        session_id=session_id,
        role=role,
        kind=kind,
        since=since,
        until=until,
        project=project,
        sidechains=not no_sidechains,
    )
    results = search(conn, query, filters, limit=limit)
    if as_json:
        print_json([hit.to_json() for hit in results.hits])
        return
    if not results.hits:
        click.echo(f"No matches for {query!r}.", err=True)
        return
    style = click.style
    for hit in results.hits:
        when = (hit.timestamp or "")[:16].replace("T", " ")
        title = " ".join((hit.session_title or hit.file).split())[:70]
        click.echo(
            f"{style(f'{hit.score:.2f}', fg='cyan', bold=True)} {style(hit.source, fg='magenta')}"
            f" {when} {style(title, bold=True)}"
            f" {style(f'{hit.file}:{hit.line} {hit.role}/{hit.kind}', dim=True)}"
        )
        click.echo(f"    {_render_snippet(hit.snippet)}")
    count = len(results.hits)
    click.secho(
        f"{count} {'hit' if count == 1 else 'hits'} in {results.seconds * 1000:.0f} ms",
        err=True,
        dim=True,
    )
