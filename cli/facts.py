"""``clawback facts`` (and ``facts edit|supersede``): the knowledge facts, newest first.

They print for people by default and stable JSON with ``--json``. The rules live in
:mod:`~clawback.core.memory.facts`; ``clawback process`` extracts the facts.
"""

from __future__ import annotations

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out, print_json
from clawback.core.memory import FACT_TYPES, Fact, FactStore


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
