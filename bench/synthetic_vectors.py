"""Random unit vectors for every chunk an embedding worker would embed: latency benches need a
store the size of a real one, not the hours the real model takes to fill it."""

from __future__ import annotations

from clawback.core.startup import prepare_process

prepare_process()  # as every clawback process does first: BLAS on one thread

import numpy as np
from clawback.core.embeddings.chunks import text_hash
from clawback.core.embeddings.store import VectorStore
from clawback.core.embeddings.worker import EmbeddingWorker


def fill_with_random_vectors(worker: EmbeddingWorker, store: VectorStore, dim: int) -> None:
    """Store a seeded random unit vector (with the real text hash) for each pending chunk."""
    todo, _ = worker.pending()
    rng = np.random.default_rng(3)
    for start in range(0, len(todo), 5000):
        batch = worker.texts(todo[start : start + 5000])
        vectors = rng.standard_normal((len(batch), dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.add([c for c, _ in batch], [text_hash(t) for _, t in batch], vectors)
