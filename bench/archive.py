"""Archive benchmark: ingest throughput vs a bare loader, re-scan, search latency, recall, RSS.

    .venv/bin/python bench/archive.py --mb 200            # the issue's 200 MB corpus
    .venv/bin/python bench/archive.py --mb 20 --rescan-files 10000

Ingest is measured in one process without and with secret masking, and with the parse worker
(the default on a machine with a second core). Every figure is printed next to a baseline
measured in the same run on the same machine: the bare loader (``json.loads`` + one
``executemany`` into a bare FTS5 table in one transaction) for ingest, and a bare
``MATCH ... ORDER BY rank LIMIT 20`` for search.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source
from clawback.core.search.engine import SearchFilters, search
from corpus import generate


def corpus_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.jsonl"))


def bare_loader(root: Path, db_path: Path) -> tuple[float, int]:
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    started = time.perf_counter()
    rows = 0

    def lines() -> Iterator[tuple[str]]:
        nonlocal rows
        for path in root.rglob("*.jsonl"):
            with path.open("rb") as handle:
                for raw in handle:
                    obj = json.loads(raw)
                    message = obj.get("message") if isinstance(obj, dict) else None
                    body = json.dumps(message["content"]) if isinstance(message, dict) else ""
                    rows += 1
                    yield (body,)

    with conn:
        conn.executemany("INSERT INTO t (body) VALUES (?)", lines())
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed, rows


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return statistics.median(ordered) * 1000, p95 * 1000


def bare_search(db_path: Path, match: str) -> float:
    conn = sqlite3.connect(db_path)
    started = time.perf_counter()
    conn.execute(
        "SELECT rowid, snippet(entries_fts, 0, '[', ']', '…', 16) FROM entries_fts"
        " WHERE entries_fts MATCH ? ORDER BY rank LIMIT 20",
        (match,),
    ).fetchall()
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def small_files(corpus: Path, folder: Path, count: int) -> None:
    """A first ingest of ``count`` one-line files, each its own session, with the parse worker
    allowed (the default) and not: the worker must cost nothing where it cannot help."""
    line = next(raw for raw in next(corpus.rglob("*.jsonl")).open() if '"type": "user"' in raw)
    session = json.loads(line)["sessionId"]
    for i in range(count):
        path = folder / f"-p{i % 100}" / f"s{i}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(line.replace(session, f"{i:08d}-0000-4000-8000-000000000000"))
    for worker in (True, False):
        os.sync()
        home = Home.open(folder.with_name(f"small-home-{worker}"))
        home.config.archive.parse_worker = worker
        started = time.perf_counter()
        home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, folder, "small")])
        print(f"first ingest of {count} one-line sessions, parse_worker={worker}: "
              f"{time.perf_counter() - started:.1f}s")  # fmt: skip
        home.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=50, help="approximate corpus size")
    parser.add_argument("--messages", type=int, default=200, help="messages per session")
    parser.add_argument("--rescan-files", type=int, default=10_000)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--small-files", type=int, default=0, help="also time N one-line sessions, worker on/off"
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="clawback-bench-"))
    root = work / "projects"
    # ~2.3 KB per message in this generator's shape.
    sessions = max(1, int(args.mb * 1_000_000 / (args.messages * 2300)))
    t0 = time.perf_counter()
    planted = generate(
        root, sessions=sessions, messages=args.messages, plant_every=max(1, sessions // 200)
    )
    size = corpus_size(root)
    print(f"corpus: {sessions} sessions x {args.messages} messages, {size / 1e6:.1f} MB "
          f"(generated in {time.perf_counter() - t0:.1f}s), {len(planted)} planted phrases")  # fmt: skip

    os.sync()  # the corpus's dirty pages written out now, not during a timed run
    base_time, base_rows = bare_loader(root, work / "bare.db")
    base_mbs = size / 1e6 / base_time
    print(f"bare loader: {base_mbs:.1f} MB/s ({base_rows / base_time:,.0f} lines/s)")
    roots = [SourceRoot(Source.CLAUDE_CODE, root, "bench")]
    # Both ways clawback ingests: all in this process, and (the default on a machine with a
    # second core) with a worker process reading files ahead while this one writes. The run
    # without masking prices the secret masking (issue 11's guards) in one process; the run
    # without kept copies prices the masked, compressed copy of every line (issue 23).
    for label, home, worker, mask, keep in (
        ("one process, no masking", work / "home-no-masking", False, False, True),
        ("one process", work / "home-one-process", False, True, True),
        ("with parse worker, no kept copies", work / "home-no-copies", True, True, False),
        ("with parse worker", work / "home", True, True, True),
    ):
        os.sync()
        opened = Home.open(home)
        opened.config.archive.parse_worker = worker
        opened.config.archive.mask_secrets = mask
        opened.config.archive.keep_lines = keep
        started = time.perf_counter()
        stats = opened.ingestor().ingest(roots)
        ingest_time = time.perf_counter() - started
        ours_mbs = size / 1e6 / ingest_time
        print(f"ingest, {label}: clawback {ours_mbs:.1f} MB/s "
              f"({stats.entries / ingest_time:,.0f} entries/s, {stats.entries:,} entries) "
              f"| ratio to the bare loader {ours_mbs / base_mbs:.2f}x")  # fmt: skip
        if label != "with parse worker":
            opened.close()
    kept = sum(p.stat().st_size for p in opened.paths.kept.rglob("*.kept"))
    print(f"kept copies: {kept / 1e6:.1f} MB for {size / 1e6:.1f} MB of transcripts "
          f"= {kept / size:.3f} bytes stored per corpus byte")  # fmt: skip

    started = time.perf_counter()
    again = opened.ingestor().ingest(roots)
    print(
        f"re-scan unchanged corpus ({again.unchanged} files): {time.perf_counter() - started:.3f}s"
    )

    # Re-scan of many small unchanged files.
    many = work / "many"
    line = (root.rglob("*.jsonl").__next__()).open().readline()
    for i in range(args.rescan_files):
        folder = many / f"-p{i % 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"s{i}.jsonl").write_text(line)
    many_roots = [SourceRoot(Source.CLAUDE_CODE, many, "many")]
    os.sync()
    many_base, _ = bare_loader(many, work / "bare-many.db")
    started = time.perf_counter()
    opened.ingestor().ingest(many_roots)
    print(f"first ingest of {args.rescan_files} small files: {time.perf_counter() - started:.2f}s "
          f"(bare loader: {many_base:.2f}s)")  # fmt: skip
    started = time.perf_counter()
    for dirpath, _, files in os.walk(many):
        for name in files:
            os.stat(os.path.join(dirpath, name))
    walk = time.perf_counter() - started
    started = time.perf_counter()
    rescan = opened.ingestor().ingest(many_roots)
    rescan_time = time.perf_counter() - started
    print(f"re-scan {rescan.unchanged} unchanged files: {rescan_time:.3f}s "
          f"(bare os.walk+stat: {walk:.3f}s)")  # fmt: skip

    if args.small_files:
        small_files(root, work / "small", args.small_files)

    rng = random.Random(5)
    rare = [p.phrase for p in rng.sample(planted, min(40, len(planted))) if p.place != "cjk"]
    classes = {
        "rare phrase": rare,
        "common word": ["the", "search", "index", "python", "error"] * 4,
        "4-letter prefix": ["sear*", "inde*", "quer*", "comp*", "tran*"] * 4,
        "1-3 letter prefix": ["s*", "in*", "que*", "co*"] * 5,
    }
    print("search (LIMIT 20 with snippets)        clawback p50/p95 |   bare p50/p95 (ms)")
    for name, queries in classes.items():
        ours = [search(opened.db, q, limit=20).seconds for q in queries]
        bare = [
            bare_search(work / "home" / "clawback.db", q if q.endswith("*") else f'"{q}"')
            for q in queries
        ]
        o50, o95 = percentiles(ours)
        b50, b95 = percentiles(bare)
        print(f"  {name:20} {o50:14.1f} / {o95:6.1f} | {b50:6.1f} / {b95:6.1f}")
    filtered = [
        search(opened.db, q, SearchFilters(kind="tool"), limit=20).seconds
        for q in classes["common word"]
    ]
    f50, f95 = percentiles(filtered)
    print(f"  {'common, kind=tool':20} {f50:14.1f} / {f95:6.1f}")

    found = 0
    for item in planted:
        hits = search(opened.db, item.phrase, limit=20).hits
        if any(hit.session_id == item.session_id for hit in hits):
            found += 1
    print(f"recall of planted phrases: {found}/{len(planted)} = {100 * found / len(planted):.1f}%")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    index_mb = (work / "home" / "clawback.db").stat().st_size / 1e6
    print(
        f"peak RSS: {peak:.0f} MB (parse worker: {worker_rss:.0f} MB); index size {index_mb:.0f} MB"
    )
    opened.close()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
