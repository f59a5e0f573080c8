"""What a Claude Code hook adds to a prompt: whole ``clawback hook`` processes, timed from start
to exit, next to a bare ``python -c pass`` in the same run.

    .venv/bin/python bench/hooks_latency.py --mb 200 --work /tmp/hl200   # the issue's corpus
    .venv/bin/python bench/hooks_latency.py --mb 5                        # while iterating

The corpus, its index and its vectors are ``hybrid_latency.build``'s (the generated corpus of
``bench/archive.py``, one synthetic 384-d vector per text turn, stored under the test embedder's
name ``hash-384``, which also embeds the queries: search cost depends on how many vectors there
are, not on their values; the real model adds 4-5 ms per query, see ``hybrid_latency.py``).

Each row gives wall time and the process's CPU time (user + system): on a shared, loaded machine
the wall time grows with the load, the CPU time much less, and on a quiet one the two agree.

Rows, each a fresh process per run, interleaved round by round so they share the machine's load:
``python -c pass``; ``user-prompt`` by words alone (``embeddings.model = "none"``); ``user-prompt``
by meaning too, through the warm process (started by the first prompt, as in use, and
warmed before timing); ``session-start`` (the brief). The prompts are natural-language
questions; every event carries the cwd of one of the corpus's projects.
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
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.hooks.log import read_runs
from clawback.core.paths import Paths
from clawback.core.warm.server import stop
from hybrid_latency import build
from processes import compile_clawback, wait_for_warm
from timing import percentiles

CLAWBACK = str(Path(sys.executable).with_name("clawback"))
PROMPTS = [
    "what did we decide about the cache layer",
    "how do we parse the output of the index search",
    "where did the config file go after the move",
    "why does the python sqlite table lock up",
    "remind me how the memory window prompt is built",
    "can you retry the request after a timeout",
    "what was the error in the query column",
    "how should we build the schema for sessions",
]
CWD = "/home/user/project3"


def event(name: str, **fields: str) -> str:
    session = str(uuid.uuid4())
    base = {"session_id": session, "transcript_path": f"/nonexistent/{session}.jsonl",
            "cwd": CWD, "hook_event_name": name}  # fmt: skip
    return json.dumps({**base, **fields})


#: as an installed clawback runs: with its bytecode cached (this machine's shells set
#: PYTHONDONTWRITEBYTECODE, which makes every process recompile every module it imports)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


CPU: dict[str, list[float]] = {}


def timed(argv: list[str], stdin: str = "", row: str = "") -> float:
    """Wall time of one process; its CPU time (user + system) goes to ``CPU[row]``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False, env=ENV)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"{argv} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(row, []).append(cpu)
    return elapsed


def configure(home: Path, model: str) -> None:
    (home / "config.toml").write_text(
        f'[embeddings]\nmodel = "{model}"\n[hooks]\nwarm_minutes = 5\n'
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=200, help="approximate corpus size")
    parser.add_argument("--rounds", type=int, default=40, help="runs of each row")
    parser.add_argument("--work", type=Path, help="keep the corpus here and reuse it")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="clawback-hooks-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    home_dir = work / "home"
    paths = Paths.resolve(home_dir)
    try:
        home = build(work, args.mb)
        entries = home.db.execute("SELECT count(*) FROM entries").fetchone()[0]
        home.close()
        compile_clawback()
        hook = [CLAWBACK, "--home", str(home_dir), "hook"]
        configure(home_dir, "hash-384")
        timed([*hook, "user-prompt"], event("UserPromptSubmit", prompt=PROMPTS[0]))
        if not wait_for_warm(paths, 120):
            raise SystemExit("the warm process did not start")
        timed([*hook, "user-prompt"], event("UserPromptSubmit", prompt=PROMPTS[1]))
        rows: dict[str, list[float]] = {
            "python -c pass": [], "user-prompt, keyword": [], "user-prompt, hybrid": [],
            "session-start": [],
        }  # fmt: skip
        details: dict[str, set[str]] = {"keyword": set(), "hybrid": set()}
        for i in range(args.rounds):
            prompt = PROMPTS[i % len(PROMPTS)]
            rows["python -c pass"].append(
                timed([sys.executable, "-c", "pass"], row="python -c pass")
            )
            configure(home_dir, "none")
            rows["user-prompt, keyword"].append(
                timed(
                    [*hook, "user-prompt"],
                    event("UserPromptSubmit", prompt=prompt),
                    "user-prompt, keyword",
                )
            )
            details["keyword"].add(read_runs(paths.hooks, 1)[-1].detail.split(":")[0])
            configure(home_dir, "hash-384")
            rows["user-prompt, hybrid"].append(
                timed(
                    [*hook, "user-prompt"],
                    event("UserPromptSubmit", prompt=prompt),
                    "user-prompt, hybrid",
                )
            )
            details["hybrid"].add(read_runs(paths.hooks, 1)[-1].detail.split(":")[0])
            rows["session-start"].append(
                timed(
                    [*hook, "session-start"],
                    event("SessionStart", source="startup"),
                    "session-start",
                )
            )
        gave = [run.chars for run in read_runs(paths.hooks) if run.event == "user-prompt"]
        print(f"{entries:,} entries; {args.rounds} runs per row, fresh processes, interleaved;"
              f" answered by {details}; context given: median {statistics.median(gave):.0f}"
              " chars")  # fmt: skip
        load = os.getloadavg()[0]
        print(f"whole process, ms (load average {load:.1f} on {os.cpu_count()} cores):")
        print(f"  {'':24} {'wall p50 / p95':>16}   {'CPU p50 / p95':>16}")
        for name, samples in rows.items():
            p50, p95 = percentiles(samples)
            c50, c95 = percentiles(CPU[name])
            print(f"  {name:24} {p50:7.1f} / {p95:6.1f}   {c50:7.1f} / {c95:6.1f}")
        served = [r.ms for r in read_runs(paths.hooks) if r.event == "user-prompt"]
        print(f"  (inside the hook, from its log: p50 {statistics.median(served):.0f} ms)")
    finally:
        stop(paths)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
