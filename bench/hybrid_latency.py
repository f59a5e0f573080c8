"""Hybrid search latency on the generated corpus, next to keyword search from the same run.

    .venv/bin/python bench/hybrid_latency.py --mb 200                 # the issue's corpus
    .venv/bin/python bench/hybrid_latency.py --mb 200 --work /tmp/hl  # keep it for the next run

The corpus is ``corpus.generate`` in the shape ``bench/archive.py`` uses (200 messages a
session), ingested, with one vector per text turn as the background embedder would choose them.
The vectors are synthetic: random unit vectors of the real model's dimension (384), stored
under the deterministic test embedder's name (``hash-384``), which also embeds the queries.
Embedding the 200 MB corpus with the real model costs about 30 CPU-minutes, and search cost
depends on how many vectors there are and their dimension, not on their values.

Search times exclude the query's embedding (every query is embedded once before timing, and the
index caches query vectors); the real model's time to embed one query is measured separately
when the model is installed, and is what a cold hybrid query adds.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from clawback.core.startup import prepare_process

prepare_process()  # as every clawback process does first: BLAS on one thread

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.embeddings.embedder import (
    Embedder,
    EmbeddingsUnavailable,
    HashEmbedder,
    load_embedder,
)
from clawback.core.embeddings.semantic import SemanticIndex
from clawback.core.embeddings.store import VectorStore
from clawback.core.embeddings.worker import EmbeddingWorker
from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source
from clawback.core.search.engine import search
from corpus import generate
from synthetic_vectors import fill_with_random_vectors
from timing import percentiles

MODES = ("keyword", "semantic", "hybrid")
DIM = 384
QUERIES = [
    "the index search session",
    "python sqlite table",
    "memory window prompt",
    "where did the config file go",
    "token summary reply",
    "error in the query column",
    "cache layer",
    "how do we parse the output",
    "retry the request after a timeout",
    "build the schema",
]


def build(work: Path, mb: float) -> Home:
    """The corpus, its index and its vectors under ``work`` (reused when already there)."""
    home_dir = work / "home"
    store_path = home_dir / "embeddings.db"
    if store_path.exists():
        home = Home.open(home_dir)
        print(f"reusing {work}")
        return home
    root = work / "projects"
    sessions = max(1, int(mb * 1_000_000 / (200 * 2300)))
    started = time.perf_counter()
    generate(root, sessions=sessions, messages=200, plant_every=max(1, sessions // 200))
    home = Home.open(home_dir)
    stats = home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, root, "bench")])
    print(f"corpus: {sessions} sessions x 200 messages, {stats.entries:,} entries "
          f"(generated and ingested in {time.perf_counter() - started:.0f}s)")  # fmt: skip
    embedder = HashEmbedder(DIM)
    partial = store_path.with_suffix(".partial")
    store = VectorStore.open(partial)
    store.claim(embedder.name, embedder.dim)
    fill_with_random_vectors(EmbeddingWorker(home.db, store, embedder), store, DIM)
    store.close()
    partial.rename(store_path)
    return home


class Renamed:
    """The real model under the synthetic vectors' name, to time cold queries with it."""

    def __init__(self, model: Embedder, name: str) -> None:
        self.model, self.name, self.dim = model, name, model.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.embed(texts)


def real_model(home: Home, store: VectorStore, rounds: int, limit: int) -> None:
    """The real model's time to embed one query, and hybrid searches that include it (cold
    queries: the embedding overlaps the keyword side, see ``search._vector_search``)."""
    try:
        started = time.perf_counter()
        model = load_embedder("minilm")
        loaded = time.perf_counter() - started
    except EmbeddingsUnavailable as exc:
        print(f"  real model not measured ({exc})")
        return
    model.embed(["warm up"])
    embedding = []
    for query in QUERIES * 2:
        started = time.perf_counter()
        model.embed([query])
        embedding.append(time.perf_counter() - started)
    p50, p95 = percentiles(embedding)
    print(f"  one query's embedding by the real model ({model.name}, loaded in {loaded:.1f}s):"
          f" {p50:.1f} / {p95:.1f}")  # fmt: skip
    cold = SemanticIndex(Renamed(model, f"hash-{DIM}"), store)
    cold.index.refresh()
    samples = []
    for _ in range(rounds):
        for query in QUERIES:
            cold.forget_queries()
            samples.append(search(home.db, query, mode="hybrid", nearest=cold, limit=limit).seconds)
    p50, p95 = percentiles(samples)
    print(f"  hybrid, cold: each query embedded by the real model: {p50:.1f} / {p95:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=200, help="approximate corpus size")
    parser.add_argument("--rounds", type=int, default=5, help="times each query is run")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--work", type=Path, help="keep the corpus here and reuse it")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="clawback-hybrid-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        home = build(work, args.mb)
        store = VectorStore.open(work / "home" / "embeddings.db")
        index = SemanticIndex(HashEmbedder(DIM), store)
        started = time.perf_counter()
        index.index.refresh()
        print(f"{len(index.index):,} synthetic {DIM}-d vectors loaded in "
              f"{time.perf_counter() - started:.2f}s; {home.db.execute('SELECT count(*) FROM entries').fetchone()[0]:,} entries")  # fmt: skip
        for query in QUERIES:  # embed every query once: the timed searches exclude it
            search(home.db, query, mode="hybrid", nearest=index, limit=args.limit)
        samples: dict[str, list[float]] = {mode: [] for mode in MODES}
        for _ in range(args.rounds):
            for query in QUERIES:
                for mode in MODES:
                    results = search(home.db, query, mode=mode, nearest=index, limit=args.limit)
                    samples[mode].append(results.seconds)
        print(f"search p50/p95 ms (limit {args.limit}, {len(QUERIES)} queries x {args.rounds}, "
              "query embedding excluded), keyword is the baseline from the same run:")  # fmt: skip
        for mode in MODES:
            p50, p95 = percentiles(samples[mode])
            print(f"  {mode:9} {p50:6.1f} / {p95:6.1f}")
        real_model(home, store, args.rounds, args.limit)
        home.close()
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
