"""Commands that read and maintain the archive: ingest, reindex, sessions, show, health, watch.

Each opens the home, does one job and prints: rich text for people, ``--json`` for programs.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out, print_json
from clawback.core.archive.origins import CHANNELS
from clawback.core.archive.sessions import (
    SessionSummary,
    export_markdown,
    list_conversations,
    list_sessions,
    resolve_session,
    session_messages,
    unique_prefixes,
)
from clawback.core.ingest.ingestor import ProgressFactory
from clawback.core.records import Source

if TYPE_CHECKING:
    from clawback.core.config import EmbeddingsConfig
    from clawback.core.home import Home


def _progress(enabled: bool) -> tuple[ProgressFactory | None, Callable[[], None]]:
    """A rich progress bar on a terminal, made once there are files to read (an ingest with
    nothing to do never imports rich); returns (factory for the ingestor, closer)."""
    if not enabled or not sys.stderr.isatty():
        return None, lambda: None
    bars: list[Any] = []

    def factory(files: int, total: int) -> Callable[[int], None]:
        if files == 0:
            return lambda n: None
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        bar = Progress(
            TextColumn("[bold]Ingesting[/] {task.fields[files]} files"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=err.console,
            transient=True,
        )
        bars.append(bar)
        bar.start()
        task = bar.add_task("ingest", total=total, files=files)
        return lambda n: bar.advance(task, n)

    def stop() -> None:
        for bar in bars:
            bar.stop()

    return factory, stop


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--source",
    type=click.Choice(["auto", *[s.value for s in Source if s is not Source.MEMORY]]),
    default="auto",
    help="Format of PATHs (default: detected per file).",
)
@click.option("--reimport", is_flag=True, help="Re-read files from scratch.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def ingest(
    ctx: click.Context, paths: tuple[Path, ...], source: str, reimport: bool, as_json: bool
) -> None:
    """Index transcripts: all configured sources, or the given files/folders."""
    home = open_home(ctx)
    factory, stop = _progress(not as_json)
    try:
        if paths:
            chosen = None if source == "auto" else Source(source)
            stats = home.ingest_paths(list(paths), chosen, reimport=reimport, progress=factory)
        else:
            stats = home.ingest_all(reimport=reimport, progress=factory)
    finally:
        stop()
    if as_json:
        print_json(stats.to_dict())
        return
    mb = stats.bytes / 1_048_576
    click.echo(  # plain text: rich is for the warnings below, when there are any
        f"Ingested {stats.files} files ({mb:.1f} MB, {stats.entries} entries) in "
        f"{stats.seconds:.2f}s; {stats.unchanged} unchanged, {stats.skipped_lines} lines skipped"
        + (f", {stats.empty_files} empty files" if stats.empty_files else "")
        + (f", {stats.missing} source files missing" if stats.missing else "")
        + (
            f", {stats.unsupported_files} files in unknown formats"
            if stats.unsupported_files
            else ""
        )
    )
    for problem in stats.errors:
        err.print(f"[yellow]warning:[/] {escape(problem)}")
    # Each file not read is named once, when it first is; after that, one line says how many.
    for path, reason in stats.skipped_files:
        if (path, reason) not in stats.known_skips:
            err.print(f"[yellow]not read:[/] {escape(path)}: {escape(reason)}")
    if stats.known_skips:
        err.print(
            f"[dim]{len(stats.known_skips)} files not read, as before (`clawback health` names"
            " them)[/]"
        )
    if not paths and not stats.files and not stats.unchanged:
        _where_it_looked(home)


def _where_it_looked(home: Home) -> None:
    """Nothing was found: name the folders that were searched, so a new user knows where
    clawback expects transcripts (and what to configure if theirs are elsewhere)."""
    from clawback.core.ingest.sources import configured_roots

    err.print("No transcripts found. Looked in:")
    for root in configured_roots(home.config, home.paths):
        state = "" if root.root.exists() else " [dim](no such folder)[/]"
        err.print(f"  {root.name}: {escape(str(root.root))}{state}")
    err.print(
        "Give folders or files as arguments (`clawback ingest PATH`), or set"
        " sources.claude_code_path / sources.openclaw_path (`clawback config`)."
    )


@click.command()
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the index from the transcripts (labels and other user data are kept)."""
    home = open_home(ctx, set_aside_damaged=True)
    if home.replace_damaged_index() and home.salvaged is not None:
        err.print(f"[yellow]{escape(home.salvaged.notice)}[/]")
    factory, stop = _progress(True)
    try:
        stats = home.reindex(progress=factory)
    finally:
        stop()
    out.print(f"Re-indexed {stats.files} files, {stats.entries} entries in {stats.seconds:.2f}s")


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
        usage = _usage(open_home(ctx), [row.id for row in rows])
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


@click.command()
@click.argument("session")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown")
@click.pass_context
def show(ctx: click.Context, session: str, fmt: str) -> None:
    """Print a whole session (markdown export, or JSON)."""
    home = open_home(ctx)
    if fmt == "markdown":
        click.echo(export_markdown(home.db, session), nl=False)
        return
    found = resolve_session(home.db, session)
    shown = found.to_json()
    transcript = home.paths.sessions / f"{found.id}.jsonl"
    if found.source == Source.NATIVE.value and transcript.is_file():
        from clawback.core.chat.spend import SessionSpend  # a chat's tokens, from its transcript

        shown["usage"] = SessionSpend.of_transcript(transcript).to_json()
    else:  # what the archive counted (as `clawback usage` does)
        shown["usage"] = _usage(home, [found.id]).get(found.id)
    print_json(
        {"session": shown, "messages": [m.to_json() for m in session_messages(home.db, found.id)]}
    )


def _usage(home: Home, session_ids: list[str]) -> dict[str, dict[str, Any]]:
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


@click.command(name="health")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def health_command(ctx: click.Context, as_json: bool) -> None:
    """Counts per source, stuck files, skipped lines, database size, and `claude` status."""
    from clawback.core.embeddings.coverage import coverage
    from clawback.core.gateway.status import read_status
    from clawback.core.hooks.log import last_runs, recent_failures
    from clawback.core.ingest.health import health

    home = open_home(ctx)
    report = health(home.db, home.paths, home.config.chat.claude_command)
    vectors = coverage(
        home.db, home.paths.vectors, tools_and_thinking=home.config.embeddings.tools_and_thinking
    )
    from clawback.core.warm.server import status as warm_status

    hook_runs = last_runs(home.paths.hooks)
    hook_failures = recent_failures(home.paths.hooks)
    warm = warm_status(home.paths)
    gateway = read_status(home.paths.gateway, "telegram")
    if as_json:
        embeddings = {**vectors.to_json(), "setting": home.config.embeddings.model}
        hooks = {
            "last_runs": {event: asdict(run) for event, run in hook_runs.items()},
            "failures": [asdict(run) for run in hook_failures],
            "warm_process": warm,
        }
        gateways = {"telegram": gateway.to_json()}
        print_json(
            {**report.to_json(), "embeddings": embeddings, "hooks": hooks, "gateways": gateways}
        )
        return
    out.print(f"[bold]Database[/] {report.database} ({report.database_bytes / 1_048_576:.1f} MB)")
    for source, counts in sorted(report.sources.items()):
        parts = ", ".join(f"{v or 0} {k.replace('_', ' ')}" for k, v in counts.items())
        out.print(f"  [magenta]{source:12}[/] {parts}")
    if report.stuck_ingesting:
        out.print(f"[yellow]Files left mid-ingest:[/] {len(report.stuck_ingesting)}")
    if report.set_aside:
        out.print("[yellow]Set aside as damaged[/] (delete once nothing in them is needed)")
        for name in report.set_aside:
            out.print(f"  {escape(name)}")
    if report.skipped_files:
        out.print(f"[bold]Files not read[/] {len(report.skipped_files)}")
        for item in report.skipped_files:
            out.print(f"  {escape(item['path'])}: {escape(item['reason'])}")
    if report.incomplete_tails:
        out.print("[bold]Files ending in an unfinished line[/] (being written, or cut off)")
        for item in report.incomplete_tails:
            out.print(f"  {escape(item['path'])}: last {item['bytes']:,} bytes not indexed")
    out.print(f"[bold]Skipped lines[/] {report.skipped_lines}")
    # Every reason, and every line the report names (the first SKIPPED_LINES_SHOWN).
    for reason, n in report.skipped_reasons.items():
        out.print(f"  {n:6}  {escape(reason)}")
    for item in report.skipped_line_list:
        out.print(f"  [dim]{escape(item['path'])}:{item['line']}[/] {escape(item['reason'])}")
    if report.skipped_lines > len(report.skipped_line_list):
        more = report.skipped_lines - len(report.skipped_line_list)
        out.print(f"  [dim]… and {more:,} more lines of the reasons above[/]")
    if report.conversations:
        out.print(
            "[bold]Conversations[/] "
            + ", ".join(f"{n} {status}" for status, n in sorted(report.conversations.items()))
        )
    _print_embeddings(vectors, home.config.embeddings)
    _print_hooks(hook_runs, hook_failures)
    _print_warm(warm, home.config.hooks.warm_minutes)
    _print_gateway(gateway, home.paths.gateway / "telegram")
    if report.claude_path:
        out.print(f"[bold]claude[/] {report.claude_path} ({report.claude_version or 'unknown'})")
    else:
        out.print(
            "[bold]claude[/] [yellow]not found on PATH[/]"
            " (npm install -g @anthropic-ai/claude-code)"
        )


def _print_hooks(runs: dict[str, Any], failures: list[Any]) -> None:
    """Claude Code hooks: when they last ran, and the latest failures (which printed nothing)."""
    if not runs:
        return
    latest = max(run.at for run in runs.values())
    out.print(f"[bold]Claude Code hooks[/] last ran {latest.replace('T', ' ').rstrip('Z')} UTC")
    for run in failures:
        when = run.at.replace("T", " ").rstrip("Z")
        out.print(f"  [yellow]{run.event} {run.outcome}[/] {when}: {escape(run.detail)}")


def _print_warm(said: dict[str, Any] | None, minutes: int) -> None:
    """The warm process: what it holds and how long it stays, when one runs."""
    from clawback.core.warm.server import summary

    if said is not None:
        pid = said.get("pid")
        out.print(f"[bold]Warm process[/] running (pid {pid}): {summary(said)}")
    elif minutes > 0:
        out.print(
            f"[bold]Warm process[/] not running (started by the hooks; stays {minutes} min idle)"
        )


def _print_gateway(status: Any, folder: Path) -> None:
    """The Telegram gateway: running or not, its last update and recent errors (once used)."""
    if not status.running and not folder.exists():
        return
    out.print(f"[bold]Gateway[/] {escape(status.summary())}")
    for error in status.errors:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(error.get("at", 0)))
        out.print(f"  [yellow]{when}[/] {escape(str(error.get('what', '')))}")


def _print_embeddings(vectors: Any, settings: EmbeddingsConfig) -> None:
    """One line: which model, how much of the archive it covers, what to run next."""
    if not settings.enabled:
        out.print("[bold]Embeddings[/] off (embeddings.model = 'none'): search is keyword-only")
        return
    model = vectors.model or settings.model
    line = (
        f"[bold]Embeddings[/] {model}: {vectors.vectors:,} of {vectors.total:,}"
        f" chunks ({100 * vectors.ratio:.0f}%)"
    )
    if vectors.ratio < 1:
        line += " [dim]- `clawback embed` covers the rest[/]"
    out.print(line)


@click.command()
@click.pass_context
def watch(ctx: click.Context) -> None:
    """Keep the index fresh: ingest changes from every source as they happen (Ctrl-C stops)."""
    from clawback.core.db_guard import guard_bus_errors
    from clawback.core.watch import watch_sources

    home = open_home(ctx)
    guard_bus_errors()  # a cut clawback.db-shm is mended, never a silent SIGBUS

    def ready(folders: list[Path]) -> None:
        err.print("[dim]Watching " + ", ".join(map(str, folders)) + " (Ctrl-C stops)[/]")

    embedder = home.background_embedder(
        on_problem=lambda problem: err.print(f"[yellow]warning:[/] {escape(problem)}")
    )

    def report(stats: Any) -> None:
        if embedder is not None and stats.entries:
            embedder.nudge()
        if stats.entries or stats.missing:
            err.print(f"[dim]+{stats.entries} entries from {stats.files} files[/]")
        for problem in stats.errors:
            err.print(f"[yellow]warning:[/] {escape(problem)}")
        for path, reason in stats.skipped_files:
            if (path, reason) not in stats.known_skips:  # named once, not on every batch
                err.print(f"[yellow]not read:[/] {escape(path)}: {escape(reason)}")

    if embedder is not None:
        embedder.start()  # new messages get their vectors as they arrive
    try:
        watch_sources(
            home,
            on_batch=report,
            on_ready=ready,
            on_notice=lambda line: err.print(f"[yellow]{escape(line)}[/]"),
        )
    except KeyboardInterrupt:
        # Ctrl-C is how watch stops. Idle, watchfiles returns quietly; in the middle of a batch
        # the interrupt lands in Python code instead, and must not turn into "Aborted." and 130:
        # the ingest it cut short is crash-safe and resumes on the next run.
        pass
    finally:
        if embedder is not None:
            embedder.stop()


#: settings whose value ``clawback config`` never prints
SECRET_SETTINGS = frozenset({"telegram.token"})


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show every setting: its value, default and what it does."""
    from clawback.core.config import describe

    home = open_home(ctx)
    values = home.config.to_dict()
    rows = []
    for dotted, default, doc in describe():
        section, key = dotted.split(".")
        value = values[section][key]
        if dotted in SECRET_SETTINGS and value:
            value = "(set, not shown)"
        rows.append({"key": dotted, "value": value, "default": default, "doc": doc})
    if as_json:
        print_json(rows)
        return
    out.print(f"[dim]{home.paths.config}[/]")
    for row in rows:
        changed = "" if row["value"] == row["default"] else " [yellow](changed)[/]"
        out.print(
            f"[bold]{row['key']}[/] = {escape(repr(row['value']))}{changed}  [dim]{row['doc']}[/]"
        )
