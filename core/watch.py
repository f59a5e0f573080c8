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


def watch_sources(
    app: Clawback,
    *,
    on_batch: Callable[[IngestStats], None] | None = None,
    stop_event: threading.Event | None = None,
) -> None:
    """Block, ingesting each batch of changes, until ``stop_event`` is set or Ctrl-C."""
    app.ingestor().recover()
    folders = app.watch_folders()
    if not folders:
        return
    for changes in watchfiles.watch(
        *folders,
        debounce=DEBOUNCE_MS,
        step=50,
        stop_event=stop_event,
        raise_interrupt=False,
    ):
        deleted = any(change == watchfiles.Change.deleted for change, _ in changes)
        stats = app.ingest_changed({Path(path) for _, path in changes}, deleted=deleted)
        if on_batch is not None:
            on_batch(stats)
