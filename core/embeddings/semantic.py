"""What search asks for the nearest chunks to a query: an embedder and the vectors in memory.

:func:`open_semantic` is the one place that decides whether semantic search can run for a home
and, when it cannot, says why in one line (shown once; search then runs on keywords only). A
home whose store is empty never loads the model, so keyword-only users pay nothing.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from pathlib import Path
from typing import NamedTuple

import numpy as np
from clawback.core.config import EmbeddingsConfig
from clawback.core.embeddings.embedder import (
    Embedder,
    EmbeddingsUnavailable,
    load_embedder,
)
from clawback.core.embeddings.store import (
    StoreDamaged,
    StoreMismatch,
    VectorIndex,
    VectorStore,
)

QUERY_CACHE = 64
REFRESH_SECONDS = 2.0  # new vectors from a background worker show up this often


class Neighbour(NamedTuple):
    """A chunk near the query: ``chunk`` is an entry id (or minus a fact id)."""

    chunk: int
    hash: int
    similarity: float


class SemanticIndex:
    """Nearest-chunk search over one store with one embedder; safe to share between threads
    that take turns (the app's search worker is exclusive)."""

    def __init__(self, embedder: Embedder, store: VectorStore) -> None:
        self.embedder = embedder
        self.store = store
        self.index = VectorIndex(store)
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._refreshed = 0.0
        # The last answer, for the same question asked again for fewer (recall asks for the
        # facts among what the search just found): the product is the search's main cost.
        self._last: tuple[str, int, list[Neighbour]] | None = None

    @property
    def model(self) -> str:
        return self.embedder.name

    def nearest(self, query: str, limit: int) -> list[Neighbour]:
        """The ``limit`` chunks most similar to ``query``, best first."""
        now = time.monotonic()
        if now - self._refreshed > REFRESH_SECONDS or not len(self.index):
            self.store.check(self.embedder.name, self.embedder.dim)
            self.index.refresh()
            self._refreshed = now
            self._last = None
        last = self._last
        if last is not None and last[0] == query and limit <= last[1]:
            return last[2][:limit]
        vector = self._queries.get(query)
        if vector is None:
            vector = self.embedder.embed([query])[0]
            self._queries[query] = vector
            if len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(query)
        found = [Neighbour(*hit) for hit in self.index.search(vector, limit)]
        self._last = (query, limit, found)
        return list(found)

    def forget_queries(self) -> None:
        """Drop the cached query vectors and answer (the bench times cold queries)."""
        self._queries.clear()
        self._last = None

    def close(self) -> None:
        self.store.close()


def open_semantic(
    settings: EmbeddingsConfig, store_path: Path
) -> tuple[SemanticIndex | None, str | None]:
    """``(index, None)`` when semantic search can run; ``(None, why)`` when it cannot.

    ``why`` is ``None`` when there is simply nothing to say: embeddings are off, or nothing has
    been embedded yet (search is keyword-only until ``clawback embed`` has run).
    """
    if not settings.enabled or not store_path.exists():
        return None, None
    try:
        store = VectorStore.open(store_path)
        empty = store.count() == 0
    except StoreDamaged as exc:  # set aside already: keywords until `clawback embed`
        return None, f"{exc}; showing keyword results"
    if empty:
        store.close()
        return None, None
    try:
        embedder = load_embedder(settings.model, threads=settings.threads)
        store.check(embedder.name, embedder.dim)
    except EmbeddingsUnavailable as exc:
        store.close()
        return None, f"semantic search unavailable ({exc}); showing keyword results"
    except StoreMismatch as exc:
        store.close()
        return None, f"{exc}: run `clawback embed` to redo them; showing keyword results"
    return SemanticIndex(embedder, store), None


class DeferredIndex:
    """A :class:`SemanticIndex` opened on the first query, so a server (MCP) or the app starts
    before the model loads; when it cannot open, every query raises the same one-line reason,
    which search turns into a keyword fallback with that note."""

    def __init__(self, settings: EmbeddingsConfig, store_path: Path) -> None:
        self.settings = settings
        self.store_path = store_path
        self._index: SemanticIndex | None = None
        self._why: str | None = None

    def nearest(self, query: str, limit: int) -> list[Neighbour]:
        if self._index is None:
            if self._why is None:
                self._index, why = open_semantic(self.settings, self.store_path)
                self._why = why or "nothing is embedded yet (run `clawback embed`)"
            if self._index is None:
                raise EmbeddingsUnavailable(self._why.removesuffix("; showing keyword results"))
        try:
            return self._index.nearest(query, limit)
        except StoreDamaged:  # set aside: the next query opens whatever is there then
            self._index = None
            raise
