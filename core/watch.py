"""Keep the index fresh while clawback runs: watch every source folder and ingest changes.

Changes arrive in debounced batches from :mod:`watchfiles`; a batch is one set of paths, so a
file written many times in a burst is ingested once. Ingestion itself stays incremental (only
the new lines are read), which is what makes following a live Claude Code session cheap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from .context import Clawback
from .ingest import IngestStats

DEBOUNCE_MS = 200
STARTUP_TIMEOUT_MS = 300  # first idle tick after the watcher starts: time for the catch-up


def watch_sources(
    app: Clawback,
    *,
    on_batch: Callable[[IngestStats], None] | None = None,
    on_ready: Callable[[list[Path]], None] | None = None,
    stop_event: threading.Event | None = None,
) -> None:
    """Block, ingesting each batch of changes, until ``stop_event`` is set or Ctrl-C.

    Once the watcher is running, one catch-up ingest of every source picks up what changed
    while nothing was watching, so no change falls between "started" and "watching".
    """
    folders = app.watch_folders()
    if not folders:
        return
    ready = False
    for changes in watchfiles.watch(
        *folders,
        debounce=DEBOUNCE_MS,
        step=50,
        stop_event=stop_event,
        raise_interrupt=False,
        yield_on_timeout=True,
        rust_timeout=STARTUP_TIMEOUT_MS,
    ):
        if not changes:
            if not ready:
                ready = True
                stats = app.ingest_all()
                if on_batch is not None:
                    on_batch(stats)
                if on_ready is not None:
                    on_ready(folders)
            continue
        deleted = any(change == watchfiles.Change.deleted for change, _ in changes)
        stats = app.ingest_changed({Path(path) for _, path in changes}, deleted=deleted)
        if on_batch is not None:
            on_batch(stats)
