"""Live updates: watch every source folder in a thread and tell the app what changed.

This follows :func:`clawback.core.watch.watch_sources` (same debounce, same catch-up ingest
once watching has started) with two differences the app needs: ingestion goes through the
:class:`~clawback.tui.store.Store`, so it never overlaps the app's other writes on the shared
connection, and each batch reports the changed *paths*, so an open memory file can notice an
edit made outside the app.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import watchfiles
from clawback.core.watch import DEBOUNCE_MS, STARTUP_TIMEOUT_MS
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
    watching) is done, so nothing falls between "started" and "watching".
    """
    folders = store.clawback.watch_folders()
    if not folders:
        return
    caught_up = False
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
            if not caught_up:
                stats = store.ingest_all()
                on_batch(ChangeBatch(errors=tuple(stats.errors)))
                caught_up = True
                if ready is not None:
                    ready.set()
            continue
        paths = frozenset(Path(path) for _, path in changes)
        deleted = any(change == watchfiles.Change.deleted for change, _ in changes)
        stats = store.ingest_changed(set(paths), deleted=deleted)
        on_batch(ChangeBatch(paths, tuple(stats.errors)))
