"""Usage benchmark: ``clawback usage`` on a big archive, and what indexing usage costs an ingest.

    .venv/bin/python bench/usage.py --mb 1460                 # the issue's 1.2 GB corpus
    .venv/bin/python bench/usage.py --mb 50 --before 1c35448  # ingest, before and after

Reports: ``clawback usage`` run as an installed command (a fresh process each time, after one
untimed warm-up run, as a person runs it twice) by day, by session and by model as JSON,
next to a bare Python process that sums the same lines by day straight from the ``usage``
table in the same run (the floor of a report that keeps no sums); wall time, and CPU time,
which a busy shared machine does not inflate.

Ingest (``--before REF``): the same corpus ingested by the code at ``REF`` (unpacked from git
into a temporary folder and imported ahead of the installed package) and by this code, in
one process each (no parse worker, so CPU time says what the work costs on a busy machine),
runs interleaved; wall and CPU seconds per run, and the medians.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import generate

BARE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
rows = conn.execute(
    "SELECT date(ts, 'localtime') AS day, model, sum(input_tokens), sum(output_tokens),"
    " sum(cache_read_tokens), sum(cache_write_tokens) FROM usage WHERE counted = 1"
    " GROUP BY day, model").fetchall()
print(len(rows))
"""

INGEST = """
import resource, sys, time
from pathlib import Path
from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source
home = Home.open(Path(sys.argv[1]))
home.config.archive.parse_worker = False
started = time.perf_counter()
stats = home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, Path(sys.argv[2]), "bench")])
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
print(wall, usage.ru_utime + usage.ru_stime, stats.entries)
"""


def timed(argv: list[str], runs: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds (user + system: what a quiet machine's wall time would be near)
    of each run."""
    subprocess.run(argv, capture_output=True, env=env, check=True)  # warm-up
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return walls, cpus


def unpack(ref: str, into: Path) -> Path:
    """The code at ``ref`` as an importable ``clawback`` package; returns its path entry."""
    tree = into / "tree"
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", ref], capture_output=True, check=True, cwd=Path(__file__).parent
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    package = into / "path" / "clawback"
    package.mkdir(parents=True)
    for name in ("core", "cli", "tui", "themes"):
        (package / name).symlink_to(tree / name)
    return into / "path"


def ingest_ab(corpus: Path, work: Path, before: str, runs: int) -> None:
    path = unpack(before, work / "before")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    results: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    for run in range(runs):
        for label in ("before", "after"):
            home = work / f"home-{label}-{run}"
            run_env = {**env, "PYTHONPATH": str(path)} if label == "before" else env
            os.sync()
            done = subprocess.run(
                [sys.executable, "-c", INGEST, str(home), str(corpus)],
                capture_output=True, text=True, env=run_env, check=True,
            )  # fmt: skip
            wall, cpu, entries = done.stdout.split()
            results[label].append((float(wall), float(cpu)))
            load = os.getloadavg()[0]
            print(f"  ingest {label:6} run {run + 1}: {float(wall):6.2f} s wall, "
                  f"{float(cpu):6.2f} s CPU, {int(entries):,} entries (load {load:.1f})")  # fmt: skip
            shutil.rmtree(home, ignore_errors=True)
    for label, rows in results.items():
        median_wall = statistics.median(row[0] for row in rows)
        median_cpu = statistics.median(row[1] for row in rows)
        print(f"ingest {label} ({before if label == 'before' else 'this code'}): "
              f"median {median_wall:.2f} s wall, {median_cpu:.2f} s CPU")  # fmt: skip
    ratio = statistics.median(r[1] for r in results["after"]) / statistics.median(
        r[1] for r in results["before"]
    )
    print(f"ingest CPU, after / before: {ratio:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=50, help="approximate corpus size")
    parser.add_argument("--messages", type=int, default=200, help="messages per session")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each report")
    parser.add_argument("--before", help="also ingest with the code at this git ref")
    parser.add_argument("--ab-runs", type=int, default=3, help="ingest runs of each code")
    parser.add_argument("--home", type=Path, help="an ingested home to reuse (kept)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="clawback-bench-usage-"))
    root = work / "projects"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    clawback = shutil.which("clawback", path=str(Path(sys.executable).parent)) or "clawback"
    home = args.home
    if home is None or args.before:
        sessions = max(1, int(args.mb * 1_000_000 / (args.messages * 2300)))
        started = time.perf_counter()
        generate(root, sessions=sessions, messages=args.messages, plant_every=sessions + 1)
        size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
        print(f"corpus: {sessions} sessions x {args.messages} messages, {size / 1e6:.0f} MB "
              f"(generated in {time.perf_counter() - started:.0f} s)")  # fmt: skip
    if args.before:
        ingest_ab(root, work, args.before, args.ab_runs)
    if home is None:
        home = work / "home"
        started = time.perf_counter()
        subprocess.run([clawback, "--home", str(home), "ingest", str(root), "--source",
                        "claude-code"], capture_output=True, env=env, check=True)  # fmt: skip
        print(f"ingest with the parse worker: {time.perf_counter() - started:.0f} s")
    database = home / "clawback.db"
    import sqlite3

    conn = sqlite3.connect(database)
    lines, counted = conn.execute("SELECT count(*), sum(counted) FROM usage").fetchone()
    buckets = conn.execute("SELECT count(*) FROM usage_buckets").fetchone()[0]
    conn.close()
    print(f"index: {database.stat().st_size / 1e6:.0f} MB, {lines:,} usage lines "
          f"({counted:,} counted), {buckets:,} sums per session and quarter hour")  # fmt: skip
    reports = {
        "clawback usage (by day)": [clawback, "--home", str(home), "usage"],
        "clawback usage --by session -n 20": [
            clawback, "--home", str(home), "usage", "--by", "session", "-n", "20",
        ],
        "clawback usage --by model --json": [
            clawback, "--home", str(home), "usage", "--by", "model", "--json",
        ],
        "bare python: sum the usage lines by day": [sys.executable, "-c", BARE, str(database)],
    }  # fmt: skip
    print(
        f"warm, median of {args.runs} runs (each a fresh process; load {os.getloadavg()[0]:.1f}):"
    )
    for label, argv in reports.items():
        walls, cpus = timed(argv, args.runs, env)
        print(f"  {label:40} {statistics.median(walls) * 1000:7.0f} ms wall "
              f"(max {max(walls) * 1000:.0f}), {statistics.median(cpus) * 1000:5.0f} ms CPU")  # fmt: skip
    if args.keep:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
