"""The archive of ``../shared`` transcripts the quality benches search, with real vectors.

``open_shared`` ingests ``../shared/real-transcripts`` and ``../shared/peer-fixtures`` into a
home under ``work``; ``embed_all`` embeds it with the real model. A ``work`` folder kept between
runs (``--work``) is reused as it is: embedding the 2,300 turns takes a minute or two of CPU,
and the same vectors make the runs comparable.
"""

from __future__ import annotations

import time
from pathlib import Path

from clawback.core.startup import prepare_process

prepare_process()  # as every clawback process does first: BLAS on one thread

from clawback.core.embeddings.embedder import load_embedder
from clawback.core.embeddings.semantic import SemanticIndex
from clawback.core.embeddings.store import VectorStore
from clawback.core.embeddings.worker import EmbeddingWorker
from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def open_shared(work: Path) -> Home:
    """A home holding the shared transcripts (ingested once; an unchanged re-run reads nothing)."""
    home = Home.open(work / "home")
    roots = [
        SourceRoot(Source.CLAUDE_CODE, SHARED / "real-transcripts" / "claude-code", "real"),
        SourceRoot(Source.OPENCLAW, SHARED / "real-transcripts" / "openclaw-pi", "real-pi"),
    ]
    home.ingestor().ingest(roots)
    home.ingest_paths([SHARED / "peer-fixtures"])
    return home


def embed_all(
    home: Home, store_path: Path, threads: int, *, quiet: bool = False
) -> tuple[SemanticIndex, float, int]:
    """Embed what is not embedded yet; the index, chunks per second and how many were new."""
    embedder = load_embedder("minilm", threads=threads)
    store = VectorStore.open(store_path)
    worker = EmbeddingWorker(home.db, store, embedder)
    cpu = time.process_time()
    stats = worker.run()
    cpu = time.process_time() - cpu
    if not quiet and stats.embedded:
        print(f"embedded {stats.embedded:,} chunks in {stats.seconds:.1f}s wall, {cpu:.1f}s CPU: "
              f"{stats.per_second:.1f} chunks/s, {stats.embedded / max(cpu, 1e-9):.1f} per "
              f"CPU-second ({threads} thread{'s' * (threads > 1)})")  # fmt: skip
    return SemanticIndex(embedder, store), stats.per_second, stats.embedded
