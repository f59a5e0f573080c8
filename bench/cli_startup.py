"""``clawback search`` end to end, next to a bare one-query Python process, on a small archive.

    .venv/bin/python bench/cli_startup.py [--runs 30]

Both are fresh processes on the demo archive (about 20 sessions), timed from start to exit;
the figure that matters is the ratio of the medians (the issue's target: within 2x). The
baseline opens the same database with ``sqlite3`` and runs one FTS5 query, the floor any Python
search pays. Both run after one untimed warm-up each, with bytecode caching on, as an installed
command runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clawback.core.demo import build_demo_home

BARE = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1])\n"
    "rows = conn.execute(\"SELECT rowid FROM entries_fts WHERE entries_fts MATCH 'sqlite'"
    ' ORDER BY rank LIMIT 20").fetchall()\n'
    "print(len(rows))\n"
)


def timed(argv: list[str], runs: int, env: dict[str, str]) -> list[float]:
    subprocess.run(argv, capture_output=True, env=env, check=True)  # warm-up (bytecode)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=True)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    clawback = shutil.which("clawback", path=str(Path(sys.executable).parent)) or "clawback"
    with tempfile.TemporaryDirectory() as tmp:
        home = build_demo_home(Path(tmp) / "home")
        database = home / "clawback.db"
        ours = timed([clawback, "--home", str(home), "search", "sqlite"], args.runs, env)
        bare = timed([sys.executable, "-c", BARE, str(database)], args.runs, env)
    ours_ms, bare_ms = statistics.median(ours) * 1000, statistics.median(bare) * 1000
    print(f"clawback search (median of {args.runs}): {ours_ms:6.1f} ms")
    print(f"bare sqlite3 + FTS5 process (same run): {bare_ms:6.1f} ms")
    print(f"ratio: {ours_ms / bare_ms:.2f}x (target: within 2x)")


if __name__ == "__main__":
    main()
