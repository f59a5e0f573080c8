"""The ``clawback`` command line: the contract scripts and the acceptance checks rely on.

Each command opens the home, does one job and exits. ``--json`` output is stable and meant for
programs; the rest is for people. Errors are one line on stderr and a non-zero exit, never a
traceback: :func:`main` turns every :class:`ClawbackError` (and the few OS/SQLite failures a
user can cause) into that.

The terminal app is not imported here (the core never imports the UI): ``clawback.tui.main``
registers a launcher with :func:`set_app_launcher` and then runs this group.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from . import __version__
from .archive import (
    export_markdown,
    health,
    list_conversations,
    list_sessions,
    resolve_session,
    session_messages,
)
from .context import Clawback
from .errors import ClawbackError
from .ingest import ProgressFactory
from .model import KIND_FILTERS, Source
from .search import MARK_END, MARK_START, SearchFilters, search

AppLauncher = Callable[[click.Context, Path | None, bool], None]
_app_launcher: AppLauncher | None = None

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def set_app_launcher(launcher: AppLauncher) -> None:
    """Let the UI package say how ``clawback`` with no command opens the app."""
    global _app_launcher
    _app_launcher = launcher


def _home(ctx: click.Context) -> Path | None:
    return ctx.find_root().params.get("home")


def _open(ctx: click.Context) -> Clawback:
    obj = ctx.find_root().obj
    if isinstance(obj, Clawback):
        return obj
    app = Clawback.open(_home(ctx))
    ctx.find_root().obj = app
    ctx.call_on_close(app.close)
    return app


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="CLAWBACK_HOME",
    help="Home folder (default ~/.clawback, or $CLAWBACK_HOME).",
)
@click.option("--demo", is_flag=True, help="Open the app on the bundled demo archive.")
@click.version_option(__version__, "--version", "-V", prog_name="clawback")
@click.pass_context
def cli(ctx: click.Context, home: Path | None, demo: bool) -> None:
    """clawback: a durable, searchable memory of your Claude sessions."""
    if ctx.invoked_subcommand is not None:
        return
    if _app_launcher is None:
        click.echo(ctx.get_help())
        return
    _app_launcher(ctx, home, demo)


# -- ingest -------------------------------------------------------------------------------------


def _progress(enabled: bool) -> tuple[ProgressFactory | None, Callable[[], None]]:
    """A rich progress bar on a terminal; returns (factory for the ingestor, closer)."""
    if not enabled or not sys.stderr.isatty():
        return None, lambda: None
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
        console=err,
        transient=True,
    )

    def factory(files: int, total: int) -> Callable[[int], None]:
        if files == 0:
            return lambda n: None
        bar.start()
        task = bar.add_task("ingest", total=total, files=files)
        return lambda n: bar.advance(task, n)

    return factory, bar.stop


@cli.command()
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
    app = _open(ctx)
    factory, stop = _progress(not as_json)
    try:
        if paths:
            chosen = None if source == "auto" else Source(source)
            stats = app.ingest_paths(list(paths), chosen, reimport=reimport, progress=factory)
        else:
            stats = app.ingest_all(reimport=reimport, progress=factory)
    finally:
        stop()
    if as_json:
        _print_json(stats.to_dict())
        return
    mb = stats.bytes / 1_048_576
    out.print(
        f"Ingested {stats.files} files ({mb:.1f} MB, {stats.entries} entries) in "
        f"{stats.seconds:.2f}s; {stats.unchanged} unchanged, {stats.skipped_lines} lines skipped"
        + (f", {stats.missing} source files missing" if stats.missing else "")
        + (
            f", {stats.unsupported_files} files in unknown formats"
            if stats.unsupported_files
            else ""
        )
    )
    for problem in stats.errors:
        err.print(f"[yellow]warning:[/] {escape(problem)}")


@cli.command()
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the index from the transcripts (labels and other user data are kept)."""
    app = _open(ctx)
    factory, stop = _progress(True)
    try:
        stats = app.reindex(progress=factory)
    finally:
        stop()
    out.print(f"Re-indexed {stats.files} files, {stats.entries} entries in {stats.seconds:.2f}s")


# -- search -------------------------------------------------------------------------------------


def _render_snippet(snippet: str) -> str:
    return (
        escape(" ".join(snippet.split()))
        .replace(MARK_START, "[bold reverse]")
        .replace(MARK_END, "[/bold reverse]")
    )


@cli.command(name="search")
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
    app = _open(ctx)
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
    results = search(app.db, query, filters, limit=limit)
    if as_json:
        _print_json([hit.to_json() for hit in results.hits])
        return
    if not results.hits:
        err.print(f"No matches for {query!r}.")
        return
    for hit in results.hits:
        when = (hit.timestamp or "")[:16].replace("T", " ")
        title = escape((hit.session_title or hit.file)[:70])
        out.print(
            f"[bold cyan]{hit.score:.2f}[/] [magenta]{hit.source}[/] {when} "
            f"[bold]{title}[/] [dim]{escape(hit.file)}:{hit.line} {hit.role}/{hit.kind}[/]"
        )
        out.print(f"    {_render_snippet(hit.snippet)}")
    err.print(f"[dim]{len(results.hits)} hits in {results.seconds * 1000:.0f} ms[/]")


# -- sessions -----------------------------------------------------------------------------------


@cli.command()
@click.option("--source", type=click.Choice([s.value for s in Source if s is not Source.MEMORY]))
@click.option("--limit", "-n", default=50, show_default=True, type=click.IntRange(1))
@click.option("--project", help="Only sessions whose working directory contains this.")
@click.option("--filter", "text", help="Only sessions whose title, key, project or id match.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def sessions(
    ctx: click.Context,
    source: str | None,
    limit: int,
    project: str | None,
    text: str | None,
    as_json: bool,
) -> None:
    """List sessions, newest first."""
    rows = list_sessions(
        _open(ctx).db, source=source, project_contains=project, text=text, limit=limit
    )
    if as_json:
        _print_json([row.to_json() for row in rows])
        return
    if not rows:
        if source or project or text:
            err.print("No sessions match.")
        else:
            err.print("No sessions yet. Run `clawback ingest` (or `clawback demo`).")
        return
    for row in rows:
        when = (row.updated_at or "")[:16].replace("T", " ")
        missing = " [yellow](source deleted)[/]" if row.source_missing else ""
        out.print(
            f"[dim]{row.id[:8]}[/] {when} [magenta]{row.source:11}[/] "
            f"{row.message_count:5} msgs  {escape(row.title[:80])}{missing}"
        )


@cli.command()
@click.argument("session")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown")
@click.pass_context
def show(ctx: click.Context, session: str, fmt: str) -> None:
    """Print a whole session (markdown export, or JSON)."""
    app = _open(ctx)
    if fmt == "markdown":
        click.echo(export_markdown(app.db, session), nl=False)
        return
    found = resolve_session(app.db, session)
    _print_json(
        {
            "session": found.to_json(),
            "messages": [m.to_json() for m in session_messages(app.db, found.id)],
        }
    )


@cli.command()
@click.option(
    "--status", type=click.Choice(["active", "ready", "processing", "archived", "skipped"])
)
@click.option("--limit", "-n", default=100, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def conversations(ctx: click.Context, status: str | None, limit: int, as_json: bool) -> None:
    """Conversations (sessions split at long gaps) and their processing status."""
    rows = list_conversations(_open(ctx).db, status=status, limit=limit)
    if as_json:
        _print_json(rows)
        return
    for row in rows:
        when = (row["ended_at"] or "")[:16].replace("T", " ")
        out.print(
            f"{row['id']:6} {row['status']:10} {when} {row['message_count']:4} msgs "
            f"[magenta]{row['source']}[/] [dim]{escape(row['file'])}:{row['first_line']}[/]"
        )


@cli.command(name="health")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def health_command(ctx: click.Context, as_json: bool) -> None:
    """Counts per source, stuck files, skipped lines, database size, and `claude` status."""
    app = _open(ctx)
    report = health(app.db, app.paths, app.config.chat.claude_command)
    if as_json:
        _print_json(report.to_json())
        return
    out.print(f"[bold]Database[/] {report.database} ({report.database_bytes / 1_048_576:.1f} MB)")
    for source, counts in sorted(report.sources.items()):
        parts = ", ".join(f"{v or 0} {k.replace('_', ' ')}" for k, v in counts.items())
        out.print(f"  [magenta]{source:12}[/] {parts}")
    if report.stuck_ingesting:
        out.print(f"[yellow]Files left mid-ingest:[/] {len(report.stuck_ingesting)}")
    out.print(f"[bold]Skipped lines[/] {report.skipped_lines}")
    for reason, n in list(report.skipped_reasons.items())[:10]:
        out.print(f"  {n:6}  {escape(reason)}")
    if report.conversations:
        out.print("[bold]Conversations[/] " + ", ".join(
            f"{n} {status}" for status, n in sorted(report.conversations.items())))  # fmt: skip
    if report.claude_path:
        out.print(f"[bold]claude[/] {report.claude_path} ({report.claude_version or 'unknown'})")
    else:
        out.print(
            "[bold]claude[/] [yellow]not found on PATH[/]"
            " (npm install -g @anthropic-ai/claude-code)"
        )


@cli.command()
@click.pass_context
def watch(ctx: click.Context) -> None:
    """Keep the index fresh: ingest changes from every source as they happen (Ctrl-C stops)."""
    from .watch import watch_sources

    app = _open(ctx)

    def ready(folders: list[Path]) -> None:
        err.print("[dim]Watching " + ", ".join(map(str, folders)) + " (Ctrl-C stops)[/]")

    def report(stats: Any) -> None:
        if stats.entries or stats.missing:
            err.print(f"[dim]+{stats.entries} entries from {stats.files} files[/]")

    watch_sources(app, on_batch=report, on_ready=ready)


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show every setting: its value, default and what it does."""
    from .config import describe

    app = _open(ctx)
    values = app.config.to_dict()
    rows = []
    for dotted, default, doc in describe():
        section, key = dotted.split(".")
        rows.append({"key": dotted, "value": values[section][key], "default": default, "doc": doc})
    if as_json:
        _print_json(rows)
        return
    out.print(f"[dim]{app.paths.config}[/]")
    for row in rows:
        changed = "" if row["value"] == row["default"] else " [yellow](changed)[/]"
        out.print(
            f"[bold]{row['key']}[/] = {escape(repr(row['value']))}{changed}  [dim]{row['doc']}[/]"
        )


@cli.command()
@click.option("--ingest-only", is_flag=True, help="Build the demo home and print its path.")
@click.pass_context
def demo(ctx: click.Context, ingest_only: bool) -> None:
    """Try clawback on a bundled demo archive in a throwaway home."""
    from .demo import build_demo_home

    home = build_demo_home()
    if ingest_only or _app_launcher is None:
        click.echo(str(home))
        if not ingest_only:
            err.print(f"Demo home ready. Try: clawback --home {home} search sqlite")
        return
    _app_launcher(ctx, home, False)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user-facing failures become one line on stderr and an exit code."""
    try:
        # Without standalone mode click returns a command's ``ctx.exit(n)`` instead of exiting.
        code = cli.main(args=argv, prog_name="clawback", standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except click.exceptions.Abort:
        err.print("Aborted.")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except ClawbackError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except sqlite3.OperationalError as exc:
        err.print(f"[red]error:[/] database: {escape(str(exc))}")
        sys.exit(1)
    except BrokenPipeError:
        sys.exit(0)


# Command groups that live in their own modules register themselves on ``cli`` when imported.
from . import cli_chat, cli_memory  # noqa: E402, F401
