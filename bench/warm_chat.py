"""A one-shot ``clawback chat`` turn (the fake ``claude``), its recall by meaning asked of the
home's warm process or loaded by the turn itself: wall time and peak memory, whole processes.

    .venv/bin/python bench/warm_chat.py --work /tmp/ws                # shared transcripts
    .venv/bin/python bench/warm_chat.py --mb 200 --work /tmp/ws200    # the 200 MB corpus

The homes are those of ``warm_search.py`` (reused from ``--work``). Every row is a whole
``clawback chat --new Q`` process with ``claude`` the test suite's fake (``tests/fake_claude``,
which answers at once: what is left is clawback's own cost), timed from start to exit, its peak
resident memory read by GNU ``time`` (the larger of the turn and the fake ``claude`` it waits
for; a warm process it starts is not its child), bytecode cached, the rows interleaved round by round:

* ``python -c pass``: the floor of any process;
* ``chat, warm``: the home's warm process up; the turn asks it for the chunks nearest each of its
  questions;
* ``chat, loaded here``: ``CLAWBACK_WARM=0``, the model and the vectors loaded by the turn (what
  every turn cost before);
* ``chat, none warm`` (fewer runs): the warm process stopped before each run, so the turn loads
  them itself, then starts one for the next turn.

Every turn is a new session, so the index grows by two short lines a turn (the fake replies
"ok").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.paths import Paths
from processes import compile_clawback
from timing import percentiles
from warm_search import (
    CLAWBACK,
    ENV,
    QUERIES,
    bench_home,
    stop_warm,
    warm_up,
)

TIME = "/usr/bin/time"  # GNU time
FAKE_CLAUDE = Path(__file__).resolve().parents[1] / "tests" / "fake_claude" / "claude"
CHAT_ENV = {**ENV, "CLAWBACK_CLAUDE": str(FAKE_CLAUDE), "FAKE_CLAUDE_REPLY": "ok"}


def measured(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one whole process. The peak is read by
    ``/usr/bin/time`` (``wait4``): a child this process forked itself would report this
    process's own peak (Linux keeps the old peak across ``exec``), and this one has loaded the
    model to build the home."""
    with tempfile.NamedTemporaryFile("r") as peak:
        started = time.perf_counter()
        done = subprocess.run(
            [TIME, "-f", "%M", "-o", peak.name, *argv],
            env=env, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{argv} failed: {done.stderr}")
        return elapsed, int(peak.read().split()[-1]) / 1024


def warm_peak_mb(home: Path) -> float | None:
    """The peak resident MB of this home's warm process (``clawback --home H hook serve``), read
    from ``/proc`` while it runs; ``None`` when none is found."""
    wanted = ["--home", str(home), "hook", "serve"]
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().decode().split("\0")
            if argv[-len(wanted) - 1 : -1] != wanted:
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except (OSError, ValueError):
            continue
    return None


def main() -> None:
    args, work, home = bench_home(__doc__.split("\n")[0], rounds=5)
    paths = Paths.resolve(home)
    try:
        compile_clawback()
        chat = [CLAWBACK, "--home", str(home), "chat", "--new"]
        here = {**CHAT_ENV, "CLAWBACK_WARM": "0"}
        rows: dict[str, list[tuple[float, float]]] = {
            "python -c pass": [],
            "chat, warm": [],
            "chat, loaded here": [],
            "chat, none warm": [],
        }
        load = os.getloadavg()[0]
        for query in QUERIES[: args.starts]:
            stop_warm(paths)
            rows["chat, none warm"].append(measured([*chat, query], CHAT_ENV))
        warm_up(paths, [*chat, QUERIES[0]], CHAT_ENV)
        for _ in range(args.rounds):
            for query in QUERIES:
                rows["python -c pass"].append(measured([sys.executable, "-c", "pass"], ENV))
                rows["chat, warm"].append(measured([*chat, query], CHAT_ENV))
                rows["chat, loaded here"].append(measured([*chat, query], here))
        load = max(load, os.getloadavg()[0])
        warm_mb = warm_peak_mb(home)
        print(f"{home}: whole processes (load average up to {load:.1f} on {os.cpu_count()}"
              " cores)")  # fmt: skip
        print("                        wall ms p50 /  p95    peak RSS MB p50 /  max")
        for name, samples in rows.items():
            wall_p50, wall_p95 = percentiles([wall for wall, _ in samples])
            rss = sorted(mb for _, mb in samples)
            print(f"  {name:20} {wall_p50:9.0f} / {wall_p95:5.0f}    {rss[len(rss) // 2]:11.0f} /"
                  f" {rss[-1]:4.0f}")  # fmt: skip
        if warm_mb is not None:
            print(f"  the warm process itself: peak resident {warm_mb:.0f} MB")
    finally:
        stop_warm(paths)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
