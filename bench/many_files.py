"""Many small files of ONE session: does a first ingest grow linearly with the file count?

    .venv/bin/python bench/many_files.py                      # 100, 500, 2000 files
    .venv/bin/python bench/many_files.py --counts 100 1000 --work /tmp/mf

A Claude Code session with many sub-agents has one ``<session>/subagents/agent-*.jsonl`` file
each, all of the parent's session id (a resumed or forked session spread over files is the same
case). Each count is ingested twice in the same run: as sub-agent files of one session, and, the
baseline, as as many independent sessions of the same lines. Per-file work that recounts the
whole session makes the first grow with count x session size while the baseline stays flat.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source

from tests.helpers import cc_assistant, cc_user, write_lines

PARENT = "00000000-0000-4000-8000-00000000beef"
LINES_PER_FILE = 4  # two exchanges: a sub-agent's prompt, its answer, a follow-up, a reply


def _lines(session: str, n: int, *, sidechain: bool) -> list[dict[str, object]]:
    lines: list[dict[str, object]] = []
    for k in range(LINES_PER_FILE // 2):
        ts = f"2026-11-20T10:{n % 60:02d}:{k:02d}.000Z"
        user = cc_user(session, f"u-{n}-{k}", f"look into part {n} step {k} of the parser", ts)
        reply = cc_assistant(
            session, f"a-{n}-{k}", [{"type": "text", "text": f"part {n} step {k}: done"}], ts
        )
        for line in (user, reply):
            line["isSidechain"] = sidechain
            if sidechain:
                line["agentId"] = f"agent{n:05d}"
        lines += [user, reply]
    return lines


def one_session(root: Path, count: int) -> None:
    """``count`` sub-agent files of one session, beside the parent's own short file."""
    project = root / "-home-u-proj"
    write_lines(project / f"{PARENT}.jsonl", _lines(PARENT, 0, sidechain=False))
    for n in range(count):
        path = project / PARENT / "subagents" / f"agent-agent{n:05d}.jsonl"
        write_lines(path, _lines(PARENT, n, sidechain=True))


def independent_sessions(root: Path, count: int) -> None:
    """The baseline: as many files and lines, each file its own session."""
    project = root / "-home-u-proj"
    write_lines(project / f"{PARENT}.jsonl", _lines(PARENT, 0, sidechain=False))
    for n in range(count):
        session = f"{n:08d}-0000-4000-8000-000000000000"
        write_lines(project / f"{session}.jsonl", _lines(session, n, sidechain=False))


def timed_ingest(work: Path, name: str) -> float:
    os.sync()
    home = Home.open(work / f"home-{name}")
    try:
        started = time.perf_counter()
        home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, work / name, name)])
        return time.perf_counter() - started
    finally:
        home.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--counts", type=int, nargs="+", default=[100, 500, 2000])
    parser.add_argument("--work", type=Path, help="folder for corpora and homes (kept)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="clawback-bench-many-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"{'files':>6}  {'one session':>12}  {'per file':>9}  {'independent':>12}  {'per file':>9}"
    )
    try:
        for count in args.counts:
            shared, alone = f"shared-{count}", f"alone-{count}"
            for name in (shared, alone):
                shutil.rmtree(work / name, ignore_errors=True)
                shutil.rmtree(work / f"home-{name}", ignore_errors=True)
            one_session(work / shared, count)
            independent_sessions(work / alone, count)
            together = timed_ingest(work, shared)
            apart = timed_ingest(work, alone)
            print(
                f"{count:>6}  {together:>11.2f}s  {together / count * 1000:>7.2f}ms"
                f"  {apart:>11.2f}s  {apart / count * 1000:>7.2f}ms"
            )
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
