"""Commands that build the index: ``ingest`` (new and changed transcripts) and ``reindex``.

Each opens the home, does one job and prints: a progress bar on a terminal, ``--json`` for
programs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape, out, print_json
from clawback.core.ingest.stats import ProgressFactory
from clawback.core.records import Source

if TYPE_CHECKING:
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
    click.echo(stats.summary())  # plain text: rich is for the warnings below, if any
    for problem in stats.errors:
        err.print(f"[yellow]warning:[/] {escape(problem)}")
    # Each file not read is named once, when it first is; after that, one line says how many.
    for path, reason in stats.skipped_files:
        if (path, reason) not in stats.known_skips:
            err.print(f"[yellow]not read:[/] {escape(path)}: {escape(reason)}")
    if stats.known_skips:
        err.print(f"[dim]{escape(stats.known_skips_note())}[/]")
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
