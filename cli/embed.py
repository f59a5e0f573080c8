"""``clawback embed``: bring the vectors for semantic search up to date, in the foreground.

The same worker the app runs in the background, with a progress bar; Ctrl-C stops after the
batch in flight and the next run resumes there. Only one process writes vectors at a time: one
started while another embeds (the few hundred chunks a Claude Code hook queues, the app's
background embedder) waits for it, says so, and then embeds what is left.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from clawback.cli.home import open_home
from clawback.cli.output import err, out, print_json
from clawback.core.errors import ClawbackError


def _bar(enabled: bool) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A rich progress bar on a terminal: ``(progress callback, closer)``."""
    if not enabled or not sys.stderr.isatty():
        return None, lambda: None
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("[bold]Embedding[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("chunks"),
        TimeRemainingColumn(),
        console=err.console,
        transient=True,
    )
    task = bar.add_task("embed", total=None)
    bar.start()

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return update, bar.stop


WAIT_POLL_S = 0.5


@contextmanager
def _one_embedder(path: Path, *, quiet: bool) -> Iterator[None]:
    """Hold the embedding lock, waiting (and saying so, unless ``quiet``) while another
    process holds it."""
    from clawback.core.embeddings.worker import EmbedderBusy, embed_lock

    told = False
    while True:
        held = False
        try:
            with embed_lock(path):
                held = True
                yield
                return
        except EmbedderBusy:
            if held:
                raise
        if not told and not quiet:
            err.print(
                "[yellow]Another clawback embed is running[/] (one a Claude Code hook queued, or"
                " the app's): waiting for it to finish, then embedding what is left."
                " Ctrl-C stops waiting."
            )
        told = True
        time.sleep(WAIT_POLL_S)


@click.command(name="embed")
@click.option(
    "--model", help="Embed with this model (minilm, or a .onnx file) instead of the setting."
)
@click.option("--rebuild", is_flag=True, help="Forget every vector and embed everything again.")
@click.option(
    "--limit", type=click.IntRange(1), help="Embed at most this many chunks (newest first)."
)
@click.option("--threads", type=click.IntRange(1, 64), help="CPU threads for the model.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@click.pass_context
def embed(
    ctx: click.Context,
    model: str | None,
    rebuild: bool,
    limit: int | None,
    threads: int | None,
    as_json: bool,
) -> None:
    """Embed messages, memory files and facts for semantic search (newest first, resumable)."""
    home = open_home(ctx)
    settings = home.config.embeddings
    try:
        from clawback.core.embeddings.embedder import load_embedder
        from clawback.core.embeddings.store import VectorStore
        from clawback.core.embeddings.worker import EmbeddingWorker
    except ImportError as exc:
        raise ClawbackError(
            f"semantic search needs {exc.name}: pip install 'clawback[embeddings]'"
        ) from None
    embedder = load_embedder(model or settings.model, threads=threads or max(1, settings.threads))
    store = VectorStore.open(home.paths.vectors, replace_damaged=True)
    if store.replaced:
        err.print(f"[yellow]{store.replaced}.[/]")
    stats: Any = None
    try:
        with _one_embedder(home.paths.embed_lock, quiet=as_json):
            progress, close = _bar(not as_json)
            if rebuild:
                store.clear()
            worker = EmbeddingWorker(
                home.db, store, embedder, tools_and_thinking=settings.tools_and_thinking
            )
            try:
                stats = worker.run(progress=progress, limit=limit)
            except KeyboardInterrupt:
                close()
                err.print("[yellow]Stopped.[/] Run `clawback embed` again to go on from here.")
                ctx.exit(130)
            finally:
                close()
            covered = worker.coverage()
    finally:
        store.close()
    if as_json:
        outcome = {
            "model": embedder.name,
            "embedded": stats.embedded,
            "removed": stats.removed,
            "rebuilt": rebuild or stats.wiped,
            "seconds": round(stats.seconds, 3),
            "per_second": round(stats.per_second, 2),
            "coverage": covered.to_json(),
        }
        print_json(outcome)
        return
    if stats.wiped and not rebuild:
        out.print(f"[yellow]The model changed to {embedder.name}:[/] every chunk is embedded anew.")
    out.print(
        f"Embedded {stats.embedded:,} chunks in {stats.seconds:.1f}s ({stats.per_second:.1f}/s)"
        f" with {embedder.name}; {covered.vectors:,} of {covered.total:,} covered"
        f" ({100 * covered.ratio:.0f}%)"
    )
