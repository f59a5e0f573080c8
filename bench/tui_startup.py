"""App cold start: process start to a usable session list, on an archive of 10,000 sessions.

    .venv/bin/python bench/tui_startup.py [--sessions 10000] [--runs 5]

Each run is a fresh process (imports included) driving the real app headless; it stops the
clock when the session list shows its first page. The baseline, measured in the same run, is
a bare Textual app with one OptionList of 200 rows: the floor any Textual app pays.

Both run with bytecode caching on, after one untimed warm-up run each, as an installed app runs
(``pip install`` compiles bytecode; ``PYTHONDONTWRITEBYTECODE`` in a shell would otherwise make
every start re-compile clawback's sources and measure the compiler instead).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source
from corpus import generate

APP = """
import asyncio, sys, time
from clawback.core.home import Home
from clawback.tui.app import make_app
from textual.widgets import OptionList

async def main():
    app = make_app(Home.open(sys.argv[1]), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            lists = app.query("#session-list")
            if lists and isinstance(lists.first(), OptionList) and lists.first().option_count:
                break
            await pilot.pause(0.005)
        print(time.time())

asyncio.run(main())
"""

BARE = """
import asyncio, time
from textual.app import App
from textual.widgets import OptionList

class Bare(App):
    def compose(self):
        yield OptionList(*[f"row {i}" for i in range(200)])

async def main():
    async with Bare().run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        print(time.time())

asyncio.run(main())
"""


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(code: str, *args: str) -> float:
    started = time.time()
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=ENV
    )
    return float(out.stdout.strip().splitlines()[-1]) - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="clawback-tui-bench-"))
    generate(work / "projects", sessions=args.sessions, messages=4, plant_every=10**9)
    home = Home.open(work / "home")
    home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, work / "projects", "bench")])
    count = home.db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    home.close()
    timed(APP, str(work / "home")), timed(BARE)  # warm-up: bytecode written, disk cache warm
    ours = [timed(APP, str(work / "home")) for _ in range(args.runs)]
    bare = [timed(BARE) for _ in range(args.runs)]
    print(f"archive: {count:,} sessions")
    print(
        f"cold start to a usable session list: median {statistics.median(ours):.2f}s, "
        f"max {max(ours):.2f}s | bare Textual app: median {statistics.median(bare):.2f}s"
    )


if __name__ == "__main__":
    main()
