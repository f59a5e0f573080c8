"""The embedding worker: finds chunks without a vector and embeds them, newest first.

What is embedded (the rest stays keyword-only, because it would multiply the cost): user and
assistant text turns, speaker-labelled like the recall block's lines; compaction summaries;
memory file chunks; current knowledge facts. ``tools_and_thinking`` adds thinking, tool calls
and tool output. Order: memory files and facts first, then turns from the newest back, so the
part of the archive a person asks about most is covered first.

One writer: a non-blocking ``flock`` on ``embed.lock`` in the home makes a second worker (the
app's, or another ``clawback embed``) step aside instead of doing the same work twice. Every
batch is committed on its own, so a killed worker resumes where it stopped. This module reads
the index and writes only the vector store; it never writes the index.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sqlite_utils
from clawback.core.embeddings.chunks import fact_text, text_hash
from clawback.core.embeddings.coverage import Coverage, chunk_texts, current_hashes
from clawback.core.embeddings.embedder import Embedder
from clawback.core.embeddings.store import VectorStore
from clawback.core.paths import PRIVATE_FILE

BATCH = 32


class EmbedderBusy(Exception):
    """Another process holds the embedding lock."""


@contextmanager
def embed_lock(path: Path) -> Iterator[None]:
    """Hold the one-writer lock or raise :class:`EmbedderBusy` at once (never wait for it)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EmbedderBusy(f"{path}: another clawback process is embedding") from None
        yield
    finally:
        os.close(fd)


@dataclass
class EmbedStats:
    embedded: int = 0
    reused: int = 0  # vectors kept for text seen before under another id
    removed: int = 0
    pending: int = 0
    seconds: float = 0.0
    stopped: bool = False
    wiped: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return self.embedded / self.seconds if self.seconds else 0.0


Progress = Callable[[int, int], None]  # (done, total)


class EmbeddingWorker:
    """Brings the vector store up to date with the index, one committed batch at a time."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        store: VectorStore,
        embedder: Embedder,
        *,
        tools_and_thinking: bool = False,
        batch: int = BATCH,
    ) -> None:
        self.db = db
        self.store = store
        self.embedder = embedder
        self.tools_and_thinking = tools_and_thinking
        self.batch = max(1, batch)
        self._current: tuple[tuple[int, int], dict[int, int]] | None = None

    def pending(self, *, verify: bool = False) -> tuple[list[int], list[int]]:
        """Chunks that need a vector, in embedding order (facts, then :func:`current`'s), and
        the stored chunks to forget.

        Forgotten: chunks that are gone, and with ``verify`` chunks whose text changed (a row
        id reused for other text). They are removed only once a run has used them: a re-read
        file's text comes back under new ids and reuses their vectors. A fact whose text
        changed is always redone.
        """
        stored = self.store.hashes()
        current = self.current()
        facts = [c for c, digest in current.items() if c < 0 and stored.get(c) != digest]
        wanted: list[int] = []
        stale: list[int] = []
        for chunk, digest in current.items():
            if chunk < 0:
                continue
            if chunk not in stored:
                wanted.append(chunk)
            elif verify and stored[chunk] != digest:
                stale.append(chunk)
                wanted.append(chunk)
        gone = [chunk for chunk in stored if chunk not in current]
        return facts + wanted, gone + stale

    def current(self) -> dict[int, int]:
        """Every chunk that should have a vector and its text's hash (``current_hashes``),
        kept while the index is unchanged.

        The background embedder asks after every slice of 64 (for what is pending and for the
        coverage it shows), and reading every chunk's text and the turn before it takes a
        second or two on an archive of 100,000 turns. Unchanged means no other connection
        committed (``PRAGMA data_version``) and this one wrote nothing (``total_changes``);
        the worker itself never writes the index.
        """
        version = (
            self.db.execute("PRAGMA data_version").fetchone()[0],
            self.db.conn.total_changes,
        )
        if self._current is None or self._current[0] != version:
            self._current = (
                version,
                current_hashes(self.db, tools_and_thinking=self.tools_and_thinking),
            )
        return self._current[1]

    def coverage(self) -> Coverage:
        """What ``clawback health`` reports (``coverage.vector_coverage``), from :meth:`current`."""
        current = self.current()
        model, _ = self.store.meta()
        valid = sum(current.get(chunk) == digest for chunk, digest in self.store.hashes().items())
        return Coverage(model=model, vectors=valid, total=len(current))

    def texts(self, chunks: list[int]) -> list[tuple[int, str]]:
        """The text to embed for each chunk still present (chunks deleted meanwhile drop out)."""
        found = chunk_texts(self.db, [c for c in chunks if c > 0])
        fact_ids = [-c for c in chunks if c < 0]
        for start in range(0, len(fact_ids), 500):
            part = fact_ids[start : start + 500]
            marks = ", ".join("?" * len(part))
            for fact_id, kind, content, context in self.db.execute(
                f"SELECT id, type, content, context FROM facts WHERE id IN ({marks})", part
            ):
                found[-fact_id] = fact_text(kind, content, context)
        return [(chunk, found[chunk]) for chunk in chunks if chunk in found]

    def run(
        self,
        *,
        verify: bool = True,
        should_stop: Callable[[], bool] = lambda: False,
        progress: Progress | None = None,
        limit: int | None = None,
    ) -> EmbedStats:
        """Embed everything pending (at most ``limit`` chunks), checking ``should_stop``
        between batches. The caller holds :func:`embed_lock`."""
        started = time.perf_counter()
        stats = EmbedStats()
        stats.wiped = self.store.claim(self.embedder.name, self.embedder.dim)
        todo, doomed = self.pending(verify=verify or stats.wiped)
        everything = limit is None or len(todo) <= limit
        todo = todo if limit is None else todo[:limit]
        stats.pending = len(todo)
        if progress:
            progress(0, len(todo))
        done: set[int] = set()
        for start in range(0, len(todo), self.batch):
            if should_stop():
                stats.stopped = True
                break
            batch = self.texts(todo[start : start + self.batch])
            if batch:
                self._store_batch(batch, stats)
                done.update(chunk for chunk, _ in batch)
            if progress:
                progress(min(start + self.batch, len(todo)), len(todo))
        if everything and not stats.stopped:
            stats.removed = self.store.remove(c for c in doomed if c not in done)
        stats.seconds = time.perf_counter() - started
        return stats

    def _store_batch(self, batch: list[tuple[int, str]], stats: EmbedStats) -> None:
        """Vectors for one batch, committed together: text embedded before (under an old id,
        before a re-read) keeps its vector; only new text goes through the model."""
        hashes = [text_hash(text) for _, text in batch]
        known = self.store.known(hashes)
        fresh = [i for i, digest in enumerate(hashes) if digest not in known]
        vectors = np.zeros((len(batch), self.embedder.dim), dtype=np.float32)
        if fresh:
            vectors[fresh] = self.embedder.embed([batch[i][1] for i in fresh])
        for i, digest in enumerate(hashes):
            if digest in known:
                vectors[i] = known[digest]
        self.store.add([chunk for chunk, _ in batch], hashes, vectors)
        stats.embedded += len(fresh)
        stats.reused += len(batch) - len(fresh)
