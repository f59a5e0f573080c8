"""A fresh ``clawback search --mode hybrid`` process, warm and not, next to a keyword one and a
bare ``python -c pass`` in the same run (issue 20: hybrid within 1.5x of keyword).

    .venv/bin/python bench/warm_search.py --work /tmp/ws                # shared transcripts
    .venv/bin/python bench/warm_search.py --mb 200 --work /tmp/ws200    # the 200 MB corpus

Every row is a whole process, timed from start to exit, bytecode cached as an installed
clawback has it, the rows interleaved round by round so they share the machine's load:

* ``python -c pass``: the floor of any process;
* ``keyword``: ``clawback search Q --mode keyword``;
* ``hybrid, warm``: ``--mode hybrid`` with the home's warm process up (started by the first
  search, as in use; the server's own figures are in ``hybrid_latency.py``);
* ``hybrid, loaded here``: ``--mode hybrid`` with ``CLAWBACK_WARM=0``, the model and the vectors
  loaded by the search process itself (what every hybrid search cost before);
* ``hybrid, none warm`` (fewer runs): the warm process stopped before each run, so the search
  loads the model and the vectors itself, then starts one for the next search.

Homes: the shared transcripts (``../shared``, embedded once by the real model, reused from
``--work``), or with ``--mb`` the generated corpus of ``hybrid_latency.build``, whose synthetic
vectors are recorded here under the real model's name so that a fresh process loads the real
model as a person's would (search cost depends on how many vectors there are, not on their
values; the query vectors the real model makes just find random neighbours).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.startup import prepare_process

prepare_process()  # as every clawback process does first: BLAS on one thread

from clawback.core.paths import Paths
from clawback.core.warm.server import STARTED_NAME, running, stop
from processes import compile_clawback, wait_for_warm
from timing import percentiles

CLAWBACK = str(Path(sys.executable).with_name("clawback"))
QUERIES = [
    "cache layer",
    "what did we decide about the deploy target?",
    "how do we parse the output of the index search",
    "python sqlite table",
]
#: as an installed clawback runs: bytecode cached (this machine's shells set
#: PYTHONDONTWRITEBYTECODE, which makes every process recompile every module it imports)
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CLAWBACK_WARM")}


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env or ENV)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr}")
    return elapsed


def shared_home(work: Path) -> Path:
    from shared_archive import embed_all, open_shared

    home = open_shared(work)
    index, _, _ = embed_all(home, home.paths.vectors, threads=1)
    index.close()
    home.close()
    return work / "home"


def corpus_home(work: Path, mb: float) -> Path:
    from clawback.core.embeddings.embedder import load_embedder
    from hybrid_latency import build

    build(work, mb).close()
    real = load_embedder("minilm")
    with sqlite3.connect(work / "home" / "embeddings.db") as store:
        store.execute("UPDATE meta SET value = ? WHERE key = 'model'", (real.name,))
    return work / "home"


def stop_warm(paths: Paths) -> None:
    """No warm process for this home: one still loading is asked again once it listens."""
    deadline = time.monotonic() + 60
    while running(paths) and time.monotonic() < deadline:
        stop(paths)
        time.sleep(0.05)
    (paths.hooks / STARTED_NAME).unlink(missing_ok=True)  # let the next search start one


def warm_up(paths: Paths, argv: list[str], env: dict[str, str] | None = None) -> None:
    """Run ``argv`` (a command that starts the warm process), then wait until it listens."""
    timed(argv, env)
    wait_for_warm(paths)


def bench_home(description: str, rounds: int) -> tuple[argparse.Namespace, Path, Path]:
    """The options both warm benches take (``--mb``, ``--rounds``, ``--starts``, ``--work``),
    and the work folder and home they ask for, made or reused."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--mb", type=float, help="the generated corpus of this size instead")
    parser.add_argument("--rounds", type=int, default=rounds, help="runs of each query and row")
    parser.add_argument("--starts", type=int, default=3, help="runs with no warm process")
    parser.add_argument("--work", type=Path, help="keep the home here and reuse it")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="clawback-warm-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    home = corpus_home(work, args.mb) if args.mb else shared_home(work)
    return args, work, home


def main() -> None:
    args, work, home = bench_home(__doc__.split("\n")[0], rounds=10)
    paths = Paths.resolve(home)
    try:
        compile_clawback()
        search = [CLAWBACK, "--home", str(home), "search"]
        here = {**ENV, "CLAWBACK_WARM": "0"}
        rows: dict[str, list[float]] = {
            "python -c pass": [],
            "keyword": [],
            "hybrid, warm": [],
            "hybrid, loaded here": [],
        }
        load = os.getloadavg()[0]
        starts = []
        for query in QUERIES[: args.starts]:
            stop_warm(paths)
            rows["hybrid, loaded here"].append(timed([*search, query, "--mode", "hybrid"], here))
            starts.append(timed([*search, query, "--mode", "hybrid"]))
        warm_up(paths, [*search, QUERIES[0], "--mode", "hybrid"])
        for _ in range(args.rounds):
            for query in QUERIES:
                rows["python -c pass"].append(timed([sys.executable, "-c", "pass"]))
                rows["keyword"].append(timed([*search, query, "--mode", "keyword"]))
                rows["hybrid, warm"].append(timed([*search, query, "--mode", "hybrid"]))
                rows["hybrid, loaded here"].append(
                    timed([*search, query, "--mode", "hybrid"], env=here)
                )
        load = max(load, os.getloadavg()[0])
        print(f"{home}: whole processes, ms (load average up to {load:.1f} on {os.cpu_count()}"
              " cores)")  # fmt: skip
        print("                           p50 /    p95    vs keyword (p50)")
        keyword = percentiles(rows["keyword"])[0]
        for name, samples in [*rows.items(), ("hybrid, none warm", starts)]:
            p50, p95 = percentiles(samples)
            print(f"  {name:22} {p50:7.0f} / {p95:6.0f}    {p50 / keyword:5.2f}x")
    finally:
        stop_warm(paths)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
