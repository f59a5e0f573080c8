"""Keep the index fresh while clawback runs: watch every source folder and ingest changes.

Changes arrive in debounced batches from :mod:`watchfiles`; a batch is one set of paths, so a
file written many times in a burst is ingested once. Ingestion itself stays incremental (only
the new lines are read), which is what makes following a live Claude Code session cheap.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import watchfiles
from clawback.core.db_guard import CUT, IndexFile
from clawback.core.faults import set_aside
from clawback.core.home import Home
from clawback.core.ingest.stats import IngestStats

# Ctrl-C is how a watch stops: watchfiles would log "KeyboardInterrupt caught, stopping watch"
# as a warning, which Python prints on stderr when no logging is set up. Its errors still show.
logging.getLogger("watchfiles.main").setLevel(logging.ERROR)

DEBOUNCE_MS = 200
STARTUP_TIMEOUT_MS = 300  # first idle tick after the watcher starts: time for the catch-up


@dataclass(frozen=True)
class Changes:
    paths: frozenset[Path]
    deleted: bool  # some path was removed: sources may have gone missing


def watch_changes(
    folders: list[Path], *, stop_event: threading.Event | None = None
) -> Iterator[Changes | None]:
    """Yield ``None`` once the watcher is running, then every batch of changes.

    The ``None`` is the moment for a catch-up ingest of every source: anything that changed
    before it is found by that ingest, anything after it arrives as a batch, so no change falls
    between "started" and "watching". Ends when ``stop_event`` is set or on Ctrl-C.
    """
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
                yield None
            continue
        yield Changes(
            frozenset(Path(path) for _, path in changes),
            any(change == watchfiles.Change.deleted for change, _ in changes),
        )


def watch_sources(
    home: Home,
    *,
    on_batch: Callable[[IngestStats], None] | None = None,
    on_ready: Callable[[list[Path]], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    stop_event: threading.Event | None = None,
) -> None:
    """Block, ingesting each batch of changes, until ``stop_event`` is set or Ctrl-C.

    Before each batch the index is checked (:class:`~clawback.core.db_guard.IndexFile`): a
    cut ``-shm`` is mended, and an index removed or replaced under the watch is reopened by its
    path and caught up from every source, with one ``on_notice`` line.
    """
    folders = home.watch_folders()
    if not folders:
        return
    index = IndexFile(home.paths.database)
    for changes in watch_changes(folders, stop_event=stop_event):
        starting = changes is None
        index.mend()
        why = index.changed()
        if why is not None:
            if why == CUT:  # nothing left to read back: set it aside, start a new one
                set_aside(home.paths.database)
            home.reopen_index()
            index.opened()
            if on_notice is not None:
                on_notice(
                    f"the index was {why} under this watch: reopened {home.paths.database}"
                    " and reading every source into it"
                )
            changes = None  # a new index knows nothing yet: catch up with everything
        try:
            if changes is None:
                stats = home.ingest_all()
            else:
                stats = home.ingest_changed(set(changes.paths), deleted=changes.deleted)
        except Exception as exc:  # a busy index, a bug: report it, keep watching
            stats = IngestStats(errors=[f"this batch was not indexed: {type(exc).__name__}: {exc}"])
        if starting and on_ready is not None:
            on_ready(folders)
        if on_batch is not None:
            on_batch(stats)
