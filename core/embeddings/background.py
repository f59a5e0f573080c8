"""The background embedder: one daemon thread that keeps the vectors up to date, newest first.

Whoever ingests (``clawback watch``, the app) calls :meth:`BackgroundEmbedder.nudge` after each
batch; the thread then embeds what is pending in small committed slices, checking between
slices whether it was paused or stopped, so search and typing never wait for it. It runs the
model on one thread and steps aside while another process holds the embedding lock (a
``clawback embed`` in a terminal), trying again at the next nudge. It opens its own index
connection and never writes the index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from clawback.core.db import connect
from clawback.core.embeddings.coverage import Coverage
from clawback.core.embeddings.embedder import (
    Embedder,
    EmbeddingsUnavailable,
    load_embedder,
)
from clawback.core.embeddings.store import VectorStore
from clawback.core.embeddings.worker import EmbedderBusy, EmbeddingWorker, embed_lock

SLICE = 64  # chunks per slice: a pause or stop waits for at most this many


class BackgroundEmbedder:
    """Embeds pending chunks whenever nudged; :meth:`pause`, :meth:`resume`, :meth:`stop`."""

    def __init__(
        self,
        database: Path,
        store_path: Path,
        lock_path: Path,
        *,
        model: str,
        threads: int = 1,
        tools_and_thinking: bool = False,
        on_progress: Callable[[Coverage], None] | None = None,
        on_problem: Callable[[str], None] | None = None,
    ) -> None:
        self.database = database
        self.store_path = store_path
        self.lock_path = lock_path
        self.model = model
        self.threads = threads
        self.tools_and_thinking = tools_and_thinking
        self.on_progress = on_progress
        self.on_problem = on_problem
        self._work = threading.Event()
        self._stopped = threading.Event()
        self._paused = False
        self._verified = False
        self._thread = threading.Thread(target=self._loop, name="clawback-embed", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self.nudge()

    def nudge(self) -> None:
        """There may be new chunks: embed them when the thread next gets to it."""
        self._work.set()

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self.nudge()

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop after the slice in flight (committed); wait up to ``timeout`` seconds."""
        self._stopped.set()
        self._work.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def idle(self) -> bool:
        """Nothing asked of the thread is left undone (tests wait for this)."""
        return not self._work.is_set() and not self._busy

    _busy = False

    def _loop(self) -> None:
        try:
            embedder = load_embedder(self.model, threads=self.threads)
        except EmbeddingsUnavailable as exc:
            if self.on_problem:
                self.on_problem(str(exc))
            self._work.clear()
            return
        while not self._stopped.is_set():
            self._work.wait()
            if self._stopped.is_set():
                break
            self._busy = True
            self._work.clear()
            try:
                if not self._paused:
                    self._catch_up(embedder)
            except EmbedderBusy:
                pass  # another process is embedding; the next nudge tries again
            except Exception as exc:  # a busy or broken index: say so once, keep the app up
                if self.on_problem:
                    self.on_problem(f"background embedding stopped: {exc}")
            finally:
                self._busy = False

    def _catch_up(self, embedder: Embedder) -> None:
        db = connect(self.database)
        store = VectorStore.open(self.store_path)
        try:
            with embed_lock(self.lock_path):
                worker = EmbeddingWorker(
                    db, store, embedder, tools_and_thinking=self.tools_and_thinking
                )
                while not (self._stopped.is_set() or self._paused):
                    stats = worker.run(
                        verify=not self._verified,
                        limit=SLICE,
                        should_stop=lambda: self._stopped.is_set() or self._paused,
                    )
                    self._verified = True
                    if self.on_progress and (stats.embedded or stats.removed):
                        self.on_progress(worker.coverage())
                    if stats.stopped or stats.pending < SLICE:
                        break  # caught up (or told to stop): wait for the next nudge
        finally:
            store.close()
            db.conn.close()
