"""Live updates: watch every source folder in a thread and tell the app what changed.

This uses :func:`clawback.core.watch.watch_changes` (the same batches and catch-up point as
``clawback watch``) with two differences the app needs: ingestion goes through the
:class:`~clawback.tui.store.Store`, so it never overlaps the app's other writes on the shared
connection, and each batch reports the changed *paths*, so an open memory file can notice an
edit made outside the app.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from clawback.core.watch import watch_changes
from textual.message import Message

from .store import Store


@dataclass(frozen=True)
class ChangeBatch:
    paths: frozenset[Path] = field(default_factory=frozenset)
    errors: tuple[str, ...] = ()


@dataclass
class ArchiveChanged(Message):
    """Posted to the app after each ingested batch (from the watcher's thread)."""

    batch: ChangeBatch


def watch_archive(
    store: Store,
    *,
    on_batch: Callable[[ChangeBatch], None],
    stop_event: threading.Event,
    ready: threading.Event | None = None,
) -> None:
    """Block, ingesting each debounced batch of changes, until ``stop_event`` is set.

    ``ready`` is set once the watcher runs and the catch-up ingest (what changed before it was
    watching) is done, so nothing falls between "started" and "watching". An empty archive is
    not caught up: the first-run offer asks before indexing it.
    """
    folders = store.home.watch_folders()
    if not folders:
        return
    for changes in watch_changes(folders, stop_event=stop_event):
        reopened = store.follow_index()
        if reopened is not None:
            stats = store.ingest_all()
            on_batch(ChangeBatch(errors=(reopened, *stats.errors)))
            if changes is not None:
                continue
        if changes is None:
            # An empty archive is the first-run offer's to fill (it asks, then shows progress);
            # catching up in silence behind it would answer the question for the user.
            if store.count_sessions() > 0:
                stats = store.ingest_all()
                on_batch(ChangeBatch(errors=tuple(stats.errors)))
            if ready is not None:
                ready.set()
            continue
        stats = store.ingest_changed(set(changes.paths), deleted=changes.deleted)
        on_batch(ChangeBatch(changes.paths, tuple(stats.errors)))
