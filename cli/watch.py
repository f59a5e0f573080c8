"""``clawback watch``: keep the index fresh while it runs (Ctrl-C stops)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, escape


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
