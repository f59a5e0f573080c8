"""What a ``clawback`` command costs to start, next to a bare Python process in the same run.

    .venv/bin/python bench/cli_startup.py [--runs 30] [--files 2000]
    .venv/bin/python bench/cli_startup.py --clawback /other/venv/bin/clawback   # another install

Every row is a fresh process timed from start to exit, with bytecode cached as an installed
command has it, interleaved round by round after one untimed warm-up each; wall time and CPU time (user + system,
which a loaded machine stretches far less) side by side:

- ``clawback search`` on the demo archive (about 20 sessions) against a bare ``sqlite3`` process
  running one FTS5 query, the floor any Python search pays (target: within 2x);
- ``clawback --version`` and ``clawback ingest`` with nothing to do over ``--files`` unchanged
  transcripts, against ``python -c pass`` (target, issue 32: an unchanged re-scan at most 0.1 s
  beyond ``--version``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def transcripts(root: Path, files: int) -> None:
    """``files`` small Claude Code sessions, 100 to a project folder."""
    for n in range(files):
        session = f"{n:08d}-0000-4000-8000-000000000000"
        folder = root / f"-work-project-{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            json.dumps({"type": "user", "sessionId": session, "uuid": f"u{i}", "cwd": "/work",
                        "timestamp": "2026-11-20T10:00:00Z",
                        "message": {"role": "user", "content": f"line {i} of session {n}"}})
            for i in range(3)
        ]  # fmt: skip
        (folder / f"{session}.jsonl").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--files", type=int, default=2000, help="transcripts the ingest re-scans")
    parser.add_argument("--clawback", default=None, help="another install's clawback script")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    clawback = args.clawback or (
        shutil.which("clawback", path=str(Path(sys.executable).parent)) or "clawback"
    )
    with tempfile.TemporaryDirectory() as tmp:
        demo = build_demo_home(Path(tmp) / "demo")
        projects, many = Path(tmp) / "projects", Path(tmp) / "many"
        transcripts(projects, args.files)
        many.mkdir()
        (many / "config.toml").write_text(
            f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
        )
        subprocess.run([clawback, "--home", str(many), "ingest"], env=env, check=True,
                       capture_output=True)  # fmt: skip
        rows = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "clawback --version": [clawback, "--version"],
            f"clawback ingest, {args.files} unchanged": [clawback, "--home", str(many), "ingest"],
            "bare sqlite3 + FTS5": [sys.executable, "-c", BARE, str(demo / "clawback.db")],
            "clawback search": [clawback, "--home", str(demo), "search", "sqlite"],
        }
        times: dict[str, list[float]] = {name: [] for name in rows}
        cpu: dict[str, list[float]] = {name: [] for name in rows}
        for argv in rows.values():  # warm-up (bytecode)
            subprocess.run(argv, capture_output=True, env=env, check=True)
        for _ in range(args.runs):
            for name, argv in rows.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run(argv, capture_output=True, env=env, check=True)
                times[name].append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(
                    after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                )
    ms = {name: statistics.median(samples) * 1000 for name, samples in times.items()}
    cpu_ms = {name: statistics.median(samples) * 1000 for name, samples in cpu.items()}
    load = os.getloadavg()[0]
    print(f"median of {args.runs} fresh processes each, interleaved (load average {load:.1f} on"
          f" {os.cpu_count()} cores); clawback: {clawback}")  # fmt: skip
    print(f"  {'':32} {'wall':>9} {'CPU':>9}")
    for name, value in ms.items():
        print(f"  {name:32} {value:6.1f} ms {cpu_ms[name]:6.1f} ms")
    scan = f"clawback ingest, {args.files} unchanged"
    for what, took in (("wall", ms), ("CPU", cpu_ms)):
        print(f"unchanged ingest ({what}): {took[scan] - took['clawback --version']:+.0f} ms beyond"
              f" --version (target +100), {took[scan] - took['python -c pass']:+.0f} ms beyond"
              f" python -c pass; search: {took['clawback search'] / took['bare sqlite3 + FTS5']:.2f}x"
              " the bare sqlite3 process (target: within 2x)")  # fmt: skip


if __name__ == "__main__":
    main()
