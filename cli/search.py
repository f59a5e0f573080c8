"""``clawback search``: the one command people run most, so it starts fast.

It opens a plain read connection (no migrations, no sqlite-utils) and prints with click alone
(no rich): its start-up is measured against a bare one-query Python process in ``bench/``.
A home without vectors never loads settings or numpy, so keyword search keeps its start-up.
Semantic and hybrid modes ask the home's warm process for the chunks nearest the query (it
holds the model and the vectors, shared with Claude Code's hooks): a search that finds none
loads them itself (0.5-1 s) and, once its results are out, starts one for the next search,
which then costs about what a keyword search does, but only where Claude Code's hooks are
installed (they start one anyway) or ``hooks.warm_for_search`` asks for it: a process holding
the model and the vectors is not left behind for someone who never chose one. The first search
that starts one says so, once. The warm process exits after ``hooks.warm_minutes`` idle; 0 (or
``CLAWBACK_WARM=0``) turns it off and every search loads its own. The results, ``--json``
included, are the same either way; the summary line says ``warm`` when it answered.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import click
from clawback.cli.home import home_option, open_index
from clawback.cli.output import duration, note, print_json, waited
from clawback.core.errors import UsageError
from clawback.core.paths import Paths
from clawback.core.records import KIND_FILTERS, Source
from clawback.core.search import (
    FAIR,
    MARK_END,
    MARK_START,
    MODES,
    STRONG,
    TIERS,
    WEAK,
    NearestChunks,
    SearchFilters,
    SearchResults,
    find,
    says_nothing,
    why_nothing,
)

_HIGHLIGHT_ON, _HIGHLIGHT_OFF = "\x1b[1;7m", "\x1b[22;27m"
# A hit's strength (search.strength) leads its line, in a colour of its own.
STRENGTH_STYLES: dict[str, dict[str, Any]] = {
    STRONG: {"fg": "green", "bold": True},
    FAIR: {"fg": "yellow"},
    WEAK: {"dim": True},
}
WIDEST = max(len(tier) for tier in TIERS)


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
@click.option("--since", help="Only entries on or after this local date (YYYY-MM-DD).")
@click.option("--until", help="Only entries on or before this local date (YYYY-MM-DD).")
@click.option("--project", help="Only sessions whose working directory contains this.")
@click.option("--no-sidechains", is_flag=True, help="Leave out sub-agent messages.")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    help="keyword (exact words), semantic (meaning) or hybrid (both). Default: hybrid once"
    " `clawback embed` has run, else keyword.",
)
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
    mode: str | None,
    as_json: bool,
) -> None:
    """Search every session by words and meaning (quotes for phrases, foo* prefixes, -word)."""
    # An empty query (or --session) would search for nothing, or for everything, in silence.
    if not query.strip():
        raise UsageError("QUERY is empty: give the words to search for")
    if session_id is not None and not session_id.strip():
        raise UsageError("--session is empty: give a session id or id prefix (clawback sessions)")
    conn = open_index(ctx)
    nearest, why, recency = None, None, False
    if mode != "keyword":
        nearest, why, recency = _vector_side(ctx)
    if mode in ("semantic", "hybrid") and nearest is None and why is None:
        why = "nothing is embedded yet (run `clawback embed`); showing keyword results"
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
    results = find(
        conn, query, filters, limit=limit, mode=mode, nearest=nearest, recency=recency
    ).results
    if why or (results.note and not says_nothing(results.note)):
        note(why or results.note or "")
    try:
        _show(query, results, as_json, warm=getattr(nearest, "warm", False))
    finally:
        # A search that loaded the vectors itself starts a warm process for the next one, now
        # that the results are out (not while this one loads the same vectors).
        if nearest is not None:
            from clawback.core.warm import start_for_next

            if start_for_next(nearest):
                _say_once_it_started(Paths.resolve(home_option(ctx)))


TOLD = "warm.told"  # in the hooks folder: the person was told a search starts one


def _say_once_it_started(paths: Paths) -> None:
    """The first warm process a search starts is said in one line, with how to turn it off."""
    from clawback.core.paths import touch_private

    told = paths.hooks / TOLD
    if told.exists():
        return
    note(
        "Started a warm process for the next searches by meaning (it holds the model and the"
        " vectors, and leaves after hooks.warm_minutes idle; `clawback health` shows it);"
        " hooks.warm_minutes = 0 turns it off."
    )
    with contextlib.suppress(OSError):
        touch_private(told)


def _hooks_installed(cwd: Path) -> bool:
    """Whether Claude Code runs clawback's hooks here: a settings file (user, project, local)
    holds them, or clawback's plugin is enabled. What is unreadable counts as no."""
    from clawback.core.errors import ClawbackError
    from clawback.core.hooks.plugin import plugin_state
    from clawback.core.hooks.settings import (
        SETTINGS_SCOPES,
        installed_events,
        read_settings,
        settings_path,
    )

    for scope in SETTINGS_SCOPES:
        try:
            if installed_events(read_settings(settings_path(scope, cwd=cwd))):
                return True
        except ClawbackError:
            continue
    state = plugin_state(cwd)
    return state is not None and state.enabled


def _show(query: str, results: SearchResults, as_json: bool, *, warm: bool) -> None:
    if as_json:
        print_json([hit.to_json() for hit in results.hits])
        return
    if not results.hits:
        click.echo(f"No matches for {query!r}: {why_nothing(results)}.", err=True)
        return
    style = click.style
    for hit in results.hits:
        when = (hit.timestamp or "")[:16].replace("T", " ")
        title = " ".join((hit.session_title or hit.file).split())[:70]
        click.echo(
            f"{style(hit.strength.ljust(WIDEST), **STRENGTH_STYLES[hit.strength])}"
            f" {style(hit.source, fg='magenta')}"
            + (f" {style(hit.project, fg='green')}" if hit.project else "")
            + f" {when} {style(title, bold=True)}"
            f" {style(f'{hit.file}:{hit.line} {hit.role}/{hit.kind}', dim=True)}"
            + (style(f" [{hit.found_by}]", fg="yellow") if results.mode != "keyword" else "")
        )
        click.echo(f"    {_render_snippet(hit.snippet)}")
    count = len(results.hits)
    if results.window is not None:  # a question naming only a time: say how it was read
        span = results.window.described()
        click.secho(f"what you asked {span}, a session each, newest first", err=True, dim=True)
    elif results.read_as is not None and count:  # a time among words: say how it was read
        span = results.read_as.described()
        click.secho(f"read as {span}: what was said then comes first", err=True, dim=True)
    how = f" ({results.mode}{', warm' if warm else ''})" if results.mode != "keyword" else ""
    # What the person waited (start-up, loading, printing), beside the search's own time.
    click.secho(
        f"{count} {'hit' if count == 1 else 'hits'} in {duration(waited())},"
        f" the search itself {duration(results.seconds)}{how}",
        err=True,
        dim=True,
    )


def _vector_side(ctx: click.Context) -> tuple[NearestChunks | None, str | None, bool]:
    """The vector side when this home has vectors (else ``None``), why not if it should have
    them, and whether to favour recent hits. Settings load only when there are vectors, so a
    keyword search stays quick to start; the model and the vectors load only if the query
    needs them and no warm process answers
    (:func:`~clawback.core.warm.nearest.one_shot_nearest`)."""
    home = ctx.find_root().obj
    if home is not None and hasattr(home, "paths") and hasattr(home, "config"):
        paths, config = home.paths, home.config  # a home handed in (tests) or already open
    else:
        paths = Paths.resolve(home_option(ctx))
        if not paths.vectors.exists():
            return None, None, False
        from clawback.core.config import load_config

        config = load_config(paths.config)
    from clawback.core.warm import one_shot_nearest

    def may_start() -> bool:
        return config.hooks.warm_for_search or _hooks_installed(Path.cwd())

    nearest, why = one_shot_nearest(paths, config, may_start=may_start)
    return nearest, why and f"{why}; showing keyword results", config.embeddings.recency_boost
