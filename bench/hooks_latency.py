"""What each Claude Code hook costs: whole ``clawback hook`` processes, timed from start to exit,
next to a bare ``python -c pass`` in the same run.

    .venv/bin/python bench/hooks_latency.py --mb 200 --work /tmp/hl200   # the issue's corpus
    .venv/bin/python bench/hooks_latency.py --mb 5                        # while iterating
    .venv/bin/python bench/hooks_latency.py --mb 5 --load 4               # four CPU hogs beside
    .venv/bin/python bench/hooks_latency.py --clawback /other/venv/bin/clawback   # another install

The corpus, its index and its vectors are ``hybrid_latency.build``'s (the generated corpus of
``bench/archive.py``, one synthetic 384-d vector per text turn, stored under the test embedder's
name ``hash-384``, which also embeds the queries). One more session, in a Claude Code projects
folder the home reads, is the session the events come from: before each ``stop`` it gains a
line, so every ``stop`` has new text to index apart, as in use.

Rows, each a fresh process per run, interleaved round by round so they share the machine's load:
``python -c pass``; each event with the home's warm process up (started by the first event, as in
use, and loaded before timing); and ``user-prompt`` with ``CLAWBACK_WARM=0`` (the hook answers in
its own process, by words: what every hook did before the warm process answered them). The
targets (issue 32): each hook's p95 at most 60 ms over the bare start's p95 with the warm process
up; SessionEnd hooks share Claude Code's 1.5 s budget (issue 35). With ``--load N``, N processes
spin on the CPU throughout, and the last lines say whether every run stayed within
``hooks.timeout_s``.
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

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.hooks.log import read_runs
from clawback.core.paths import Paths
from clawback.core.warm.server import STARTED_NAME, stop
from hybrid_latency import build
from processes import compile_clawback, wait_for_warm
from timing import percentiles

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
SESSION = "5e55e55e-0000-4000-8000-00000000b3c4"
EVENTS = {"session-start": "SessionStart", "user-prompt": "UserPromptSubmit",
          "stop": "Stop", "session-end": "SessionEnd"}  # fmt: skip
SESSION_END_BUDGET_S = 1.5  # what Claude Code gives all SessionEnd hooks together

#: as an installed clawback runs: with its bytecode cached (this machine's shells set
#: PYTHONDONTWRITEBYTECODE, which makes every process recompile every module it imports)
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CLAWBACK_WARM")}
CPU: dict[str, list[float]] = {}


def transcript_line(n: int) -> str:
    return json.dumps({"type": "user", "sessionId": SESSION, "uuid": f"b{n}", "cwd": CWD,
                       "timestamp": "2026-11-25T10:00:00Z",
                       "message": {"role": "user", "content": f"bench line {n}"}}) + "\n"  # fmt: skip


def event(name: str, transcript: Path, **fields: str) -> str:
    return json.dumps({"session_id": SESSION, "transcript_path": str(transcript), "cwd": CWD,
                       "hook_event_name": name, **fields})  # fmt: skip


def timed(argv: list[str], stdin: str = "", row: str = "", env: dict[str, str] = ENV) -> float:
    """Wall time of one process; its CPU time (user + system) goes to ``CPU[row]``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"{argv} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(row, []).append(cpu)
    return elapsed


def configure(home: Path, projects: Path) -> None:
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
        '[embeddings]\nmodel = "hash-384"\nbackground = false\n[hooks]\nwarm_minutes = 5\n'
    )


def hogs(count: int) -> list[subprocess.Popen[bytes]]:
    spin = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=200, help="approximate corpus size")
    parser.add_argument("--rounds", type=int, default=40, help="runs of each row")
    parser.add_argument("--work", type=Path, help="keep the corpus here and reuse it")
    parser.add_argument("--load", type=int, default=0, help="CPU hogs running beside")
    parser.add_argument("--clawback", default=str(Path(sys.executable).with_name("clawback")))
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="clawback-hooks-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    home_dir = work / "home"
    paths = Paths.resolve(home_dir)
    spinning: list[subprocess.Popen[bytes]] = []
    try:
        home = build(work, args.mb)
        entries = home.db.execute("SELECT count(*) FROM entries").fetchone()[0]
        home.close()
        compile_clawback()
        projects = work / "claude-projects"
        transcript = projects / "-home-user-project3" / f"{SESSION}.jsonl"
        transcript.parent.mkdir(parents=True, exist_ok=True)
        transcript.write_text(transcript_line(0))
        configure(home_dir, projects)
        hook = [args.clawback, "--home", str(home_dir), "hook"]
        # the first prompt starts the warm process (the code before this one started it there);
        # one started in the last minute (an earlier run's) would hold that back
        (paths.hooks / STARTED_NAME).unlink(missing_ok=True)
        timed([*hook, "user-prompt"], event("UserPromptSubmit", transcript, prompt=PROMPTS[0]))
        if not wait_for_warm(paths, 120):
            raise SystemExit("the warm process did not start")
        timed([*hook, "session-start"], event("SessionStart", transcript, source="startup"))
        spinning = hogs(args.load)
        rows: dict[str, list[float]] = {"python -c pass": []}
        rows.update({f"{name}, warm": [] for name in EVENTS})
        rows["user-prompt, no warm"] = []
        cold = {**ENV, "CLAWBACK_WARM": "0"}
        for i in range(args.rounds):
            prompt = PROMPTS[i % len(PROMPTS)]
            fields = {"session-start": {"source": "startup"}, "user-prompt": {"prompt": prompt},
                      "stop": {}, "session-end": {"reason": "prompt_input_exit"}}  # fmt: skip
            rows["python -c pass"].append(
                timed([sys.executable, "-c", "pass"], row="python -c pass")
            )
            for name, claude_event in EVENTS.items():
                if name == "stop":
                    with transcript.open("a") as handle:
                        handle.write(transcript_line(i + 1))
                payload = event(claude_event, transcript, **fields[name])
                rows[f"{name}, warm"].append(timed([*hook, name], payload, f"{name}, warm"))
            payload = event("UserPromptSubmit", transcript, prompt=prompt)
            rows["user-prompt, no warm"].append(
                timed([*hook, "user-prompt"], payload, "user-prompt, no warm", cold)
            )
        runs = read_runs(paths.hooks)
        gave = [run.chars for run in runs if run.event == "user-prompt"]
        load = os.getloadavg()[0]
        print(f"{entries:,} entries; {args.rounds} runs per row, fresh processes, interleaved;"
              f" {args.load} CPU hogs beside; load average {load:.1f} on {os.cpu_count()} cores;"
              f" context given: median {statistics.median(gave):.0f} chars")  # fmt: skip
        bare95 = percentiles(rows["python -c pass"])[1]
        print(f"whole process, ms; clawback: {args.clawback}")
        print(f"  {'':22} {'wall p50 / p95':>16} {'p95 over bare':>14}   {'CPU p50 / p95':>15}")
        for name, samples in rows.items():
            p50, p95 = percentiles(samples)
            c50, c95 = percentiles(CPU[name])
            over = "" if name == "python -c pass" else f"{p95 - bare95:+.1f}"
            print(f"  {name:22} {p50:7.1f} / {p95:6.1f} {over:>14}   {c50:6.1f} / {c95:6.1f}")
        ended = percentiles(rows["session-end, warm"])[1]
        print(f"  session-end p95 {ended:.0f} ms against Claude Code's"
              f" {SESSION_END_BUDGET_S * 1000:.0f} ms SessionEnd budget")  # fmt: skip
        timeout_s = 5.0
        worst = max(max(samples) for name, samples in rows.items() if name != "python -c pass")
        late = sum(1 for run in runs if run.outcome == "timeout")
        print(f"  slowest hook {worst * 1000:.0f} ms against hooks.timeout_s = {timeout_s:g} s;"
              f" {late} runs logged a timeout")  # fmt: skip
    finally:
        for hog in spinning:
            hog.kill()
            hog.wait()
        stop(paths)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
