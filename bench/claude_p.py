"""What clawback adds to a ``claude -p``: the real Claude Code CLI against a loopback stand-in
of the Messages API, without clawback, with its hooks, and with its hooks and memory server.

    CLAWBACK_INTEGRATION_CLAUDE=/path/to/claude .venv/bin/python bench/claude_p.py [--runs 9]
    .venv/bin/python bench/claude_p.py --clawback /other/venv/bin/clawback   # another install

Each row is a throwaway ``HOME`` with one project whose older session settled a question;
"hooks" ran ``clawback hooks install`` there, "hooks + MCP" ``hooks install --with-mcp`` (the
server always loaded); each has its own clawback home, indexed beforehand. Rows are interleaved
round by round so they share the machine's load, after one untimed run each (which starts the
warm process the hooks use, as a person's first prompt of the day does). Every run is a fresh
``claude -p PROMPT`` in the project, timed from start to exit; the stand-in answers at once, so
the difference between rows is what clawback costs, in wall time and in CPU time (``claude``
and every process it waited for: its hooks and the memory server; a loaded machine stretches
wall time far more than CPU time). The issue's target: hooks and memory server at most 0.3 s
over none (median).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.anthropic_standin import AnthropicStandin
from tests.integration.test_real_claude import SCRUB, find_real_claude, offline_env

OLDER = "0a1b2c3d-0000-4000-8000-00000000beef"
QUESTION = "Should we keep the Redis cache layer?"
DECISION = "We decided to drop the Redis cache layer and rely on SQLite's page cache instead."
PROMPT = "what did we decide about the cache layer"
ROWS = ("none", "hooks", "hooks + MCP")


def line(kind: str, uuid: str, text: str, cwd: Path) -> str:
    message = (
        {"role": "user", "content": text}
        if kind == "user"
        else {"role": "assistant", "content": [{"type": "text", "text": text}]}
    )
    return json.dumps({"type": kind, "sessionId": OLDER, "uuid": uuid, "cwd": str(cwd),
                       "timestamp": "2026-11-20T10:00:00Z", "message": message})  # fmt: skip


def prepare(row: str, work: Path, clawback: str, claude: str) -> tuple[Path, Path, dict[str, str]]:
    """``(HOME, project, env)`` for one row, its clawback home indexed and installed."""
    slug = row.replace(" + ", "-").replace(" ", "-").lower()
    home = work / slug / "home"
    project = (work / slug / "work" / "demo-project").resolve()
    project.mkdir(parents=True)
    projects = home / ".claude" / "projects"
    folder = projects / str(project).replace("/", "-").replace(".", "-")
    folder.mkdir(parents=True)
    (folder / f"{OLDER}.jsonl").write_text(
        line("user", "o1", QUESTION, project) + "\n" + line("assistant", "o2", DECISION, project)
        + "\n"
    )  # fmt: skip
    cb = work / slug / "clawback-home"
    cb.mkdir()
    (cb / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed clawback runs
    env.pop("CLAWBACK_WARM", None)
    env.update({"HOME": str(home), "CLAWBACK_HOME": str(cb), "CLAWBACK_CLAUDE": claude})
    subprocess.run([clawback, "ingest"], env=env, check=True, capture_output=True)
    if row != "none":
        install = [clawback, "hooks", "install", *(["--with-mcp"] if "MCP" in row else [])]
        subprocess.run(install, env=env, check=True, capture_output=True, cwd=project)
    return home, project, env


def run_once(
    claude: str, home: Path, project: Path, env: dict[str, str]
) -> tuple[float, float, str]:
    """Wall time of one ``claude -p``, the CPU time of it and every process it waited for (its
    hooks, the memory server), and the text of the request it sent."""
    with AnthropicStandin() as standin:
        run_env = {**env, **offline_env(standin, home)}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [claude, "-p", PROMPT], env=run_env, cwd=project, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        took = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        sent = json.dumps(standin.state.requests[-1]) if standin.state.requests else ""
    if done.returncode != 0:
        raise SystemExit(f"claude -p failed: {done.stdout}{done.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return took, cpu, sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="timed runs of each row (at least 7)")
    parser.add_argument("--clawback", default=str(Path(sys.executable).with_name("clawback")))
    parser.add_argument("--claude", help="the real claude CLI (default: as the integration tests)")
    args = parser.parse_args()
    claude = args.claude or find_real_claude()
    if claude is None:
        raise SystemExit("no real claude CLI: pass --claude or set CLAWBACK_INTEGRATION_CLAUDE")
    work = Path(tempfile.mkdtemp(prefix="clawback-claude-p-"))
    setups: dict[str, tuple[Path, Path, dict[str, str]]] = {}
    try:
        for row in ROWS:
            setups[row] = prepare(row, work, args.clawback, claude)
        for row, (home, project, env) in setups.items():  # untimed: starts the warm process
            _, _, sent = run_once(claude, home, project, env)
            if row != "none" and "hook additional context" not in sent:
                raise SystemExit(f"{row}: the hooks gave Claude nothing; is it installed?")
        times: dict[str, list[float]] = {row: [] for row in ROWS}
        cpu: dict[str, list[float]] = {row: [] for row in ROWS}
        recalled = {row: 0 for row in ROWS}
        for _ in range(args.runs):
            for row, (home, project, env) in setups.items():
                took, used, sent = run_once(claude, home, project, env)
                times[row].append(took)
                cpu[row].append(used)
                recalled[row] += DECISION.replace("'", "\\u0027") in sent or DECISION in sent
        none = statistics.median(times["none"])
        none_cpu = statistics.median(cpu["none"])
        load = os.getloadavg()[0]
        print(f"claude -p, {args.runs} runs per row, interleaved (load average {load:.1f} on "
              f"{os.cpu_count()} cores); clawback: {args.clawback}")  # fmt: skip
        print(f"  wall s {'':5} {'median':>8} {'min':>8} {'max':>8} {'over none':>10}"
              f"   CPU s median  over none  recalled")  # fmt: skip
        for row, samples in times.items():
            median, used = statistics.median(samples), statistics.median(cpu[row])
            print(f"  {row:12} {median:8.2f} {min(samples):8.2f} {max(samples):8.2f}"
                  f" {median - none:+10.2f}   {used:12.2f} {used - none_cpu:+10.2f}"
                  f"  {recalled[row]}/{args.runs}")  # fmt: skip
    finally:
        for _home, _project, env in setups.values():
            subprocess.run(
                [args.clawback, "hooks", "uninstall", "--with-mcp"], env=env, capture_output=True
            )
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
