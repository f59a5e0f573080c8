"""What a chat costs in prompt-cache terms, and how soon each reply starts: today's process per
turn beside a live conversation, in one run, through the real ``claude`` CLI.

    .venv/bin/python bench/chat_cost.py [--turns 30] [--claude PATH]

A home holds a seeded Claude Code archive (``corpus.py``), so every turn's recall finds
something. The same 30 messages (short replies, pasted code, long questions) go through
clawback's chat engine twice, each time in a new session against a loopback stand-in for the
Messages API (``tests/integration/anthropic_standin.py``) that logs every request body: once
with a ``claude -p`` per turn (a one-shot ``clawback chat``), once with a live conversation (the
app, the REPL). The logged requests are replayed through the API's caching rules
(``cache_replay.py``: a prefix up to a breakpoint, 20 blocks of lookback, 1,024 tokens at least,
reads 0.1x, writes 1.25x) and the bench prints, for turns 2 on: the share of input tokens read
from the cache, the input cost relative to sending it all uncached, and the time from sending a
message to the first reply token (clawback's recall, the process start if any, the MCP server
connecting, the stand-in's answer: everything but the model). Then the memory flush, as each
mode runs it: a call of its own, or a silent turn of the live conversation.

The real CLI is ``--claude``, else ``$CLAWBACK_INTEGRATION_CLAUDE``, else ``claude`` on PATH. It
runs offline: a throwaway HOME, a fake API key, the stand-in on 127.0.0.1 (no retries, no
telemetry). Targets (issue 33): live >= 90% read from the cache and <= 0.25x input cost over
turns 2-30; its time to first token <= 0.5x the process per turn's; the flush's own request
reads >= 80% from the cache.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from cache_replay import Replayed, Totals, replay_all
from clawback.core.chat.engine import ChatEngine, ReplyDelta
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.home import Home
from clawback.core.memory.lifecycle import MemoryLifecycleHooks
from corpus import WORDS, generate

from tests.integration.anthropic_standin import AnthropicStandin

KEY = "local:bench"
CODE = '''def checkpoint(db, mode="PASSIVE"):
    """Run a WAL checkpoint and report how many frames moved."""
    busy, log, moved = db.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
    if busy:
        raise RuntimeError("a reader held the WAL: try again later")
    return {"log_frames": log, "checkpointed": moved}
'''


def messages(count: int, seed: int = 33) -> list[str]:
    """A realistic mix: short replies, pasted code, long questions about the archive's words."""
    rng = random.Random(seed)
    short = ["ok, go on", "thanks!", "and why is that?", "yes, do that", "hm, not sure",
             "what about the tests?", "fine", "say more about the second point"]  # fmt: skip
    found: list[str] = []
    for i in range(count):
        kind = i % 5
        if kind in (1, 3):
            found.append(rng.choice(short))
        elif kind == 2:
            body = "\n".join(CODE for _ in range(rng.randint(1, 3)))
            found.append(f"Here is the code, what is wrong with it?\n\n```python\n{body}```")
        else:
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 220)))
            found.append(f"About the {rng.choice(WORDS)} {rng.choice(WORDS)}: {words}?")
    return found


def reply_for(body: dict[str, Any]) -> str:
    """The stand-in's answer: a few hundred words, seeded by the request's length."""
    rng = random.Random(len(str(body.get("messages"))))
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(120, 380))) + "."


def find_claude(given: str | None) -> str:
    for candidate in (given, os.environ.get("CLAWBACK_INTEGRATION_CLAUDE"), shutil.which("claude")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("no real claude CLI: pass --claude PATH (npm install @anthropic-ai/claude-code)")


def offline_env(standin: AnthropicStandin, home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": standin.base_url,
        "ANTHROPIC_API_KEY": "sk-test-clawback-bench",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


@dataclass
class Run:
    """One mode's turns: their requests replayed, when the first reply token came."""

    name: str
    per_turn: list[list[Replayed]] = field(default_factory=list)  # each turn's requests
    ttft: list[float] = field(default_factory=list)
    flush: Replayed | None = None
    processes: int = 0
    recalled: list[int] = field(default_factory=list)  # tokens of each turn's recalled block

    def totals(self, first: int = 1) -> Totals:
        return Totals.of(r for turn in self.per_turn[first:] for r in turn)


async def run_mode(name: str, home_dir: Path, claude: str, texts: list[str], live: bool) -> Run:
    found = Run(name)
    spans: list[range] = []  # each turn's requests, by their place in the stand-in's log
    with tempfile.TemporaryDirectory(prefix="clawback-bench-") as scratch:
        user_home = Path(scratch) / "home"
        user_home.mkdir()
        cwd = Path(scratch) / "cwd"
        cwd.mkdir()
        with AnthropicStandin(reply=reply_for, max_requests=10_000) as standin:
            runner = ClaudeRunner(claude, env=offline_env(standin, user_home), cwd=cwd,
                                  timeout=120)  # fmt: skip
            home = Home.open(home_dir)
            engine: ChatEngine = home.chat_engine(runner=runner, live=live)
            try:
                for text in texts:
                    before = len(standin.state.requests)
                    started = time.perf_counter()
                    first: list[float] = []
                    turn = engine.turn(text, key=KEY)
                    async for event in turn:
                        if isinstance(event, ReplyDelta) and not first:
                            first.append(time.perf_counter() - started)
                    outcome = turn.outcome
                    assert outcome is not None and not outcome.is_error, outcome
                    prompt = outcome.prompt
                    found.recalled.append(
                        prompt.recalled.tokens if prompt and prompt.recalled else 0
                    )
                    found.ttft.append(first[0] if first else float("nan"))
                    spans.append(range(before, len(standin.state.requests)))
                session = engine.store.current(KEY)
                assert session is not None and isinstance(engine.hooks, MemoryLifecycleHooks)
                before = len(standin.state.requests)
                proposal = await engine.hooks.flush.propose(session)
                assert proposal.live == live, "the flush did not go where it should"
                flush_requests = list(range(before, len(standin.state.requests)))
                found.processes = engine.live.started if engine.live else len(texts) + 1
            finally:
                await engine.aclose()
                home.close()
            requests = list(standin.state.requests)
            times = [t - standin.state.times[0] for t in standin.state.times]
        replayed = replay_all(requests, times)
        found.per_turn = [[replayed[i] for i in span] for span in spans]
        if flush_requests:
            found.flush = replayed[flush_requests[-1]]
    return found


def build_home(work: Path) -> Path:
    """A home whose index holds a seeded Claude Code archive (recall finds something)."""
    projects = work / "projects"
    generate(projects, sessions=40, messages=24, seed=33)
    home_dir = work / "home"
    home = Home.open(home_dir)
    home.config.sources.claude_code_path = str(projects)
    home.config.sources.openclaw_path = str(work / "none")
    home.config.embeddings.model = "none"
    from clawback.core.config import save_config

    save_config(home.config, home.paths.config)
    home.ingest_all()
    home.close()
    return home_dir


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def show(runs: list[Run], turns: int) -> None:
    one, live = runs
    print(f"\n{turns} turns, recall on; figures for turns 2-{turns}:\n")
    print(f"{'':34}{'per-turn process':>18}{'live conversation':>20}")
    rows: list[tuple[str, Callable[[Run], str]]] = [
        ("input tokens read from the cache", lambda r: f"{r.totals().read_share:.1%}"),
        ("input cost relative to uncached", lambda r: f"{r.totals().relative_cost:.2f}x"),
        ("input tokens sent (all turns)", lambda r: f"{r.totals(0).total:,}"),
        ("recalled tokens (all turns)", lambda r: f"{sum(r.recalled):,}"),
        ("input cost, all turns (uncached=1)", lambda r: f"{r.totals(0).cost:,.0f}"),
        ("time to first token, median", lambda r: f"{median(r.ttft[1:]):.2f} s"),
        ("time to first token, worst", lambda r: f"{max(r.ttft[1:]):.2f} s"),
        ("claude processes started", lambda r: f"{r.processes}"),
        ("memory flush: read from the cache", lambda r: f"{r.flush.cache_read / r.flush.total:.1%}" if r.flush else "-"),
        ("memory flush: cost vs uncached", lambda r: f"{r.flush.cost / r.flush.total:.2f}x" if r.flush else "-"),
    ]  # fmt: skip
    for label, cell in rows:
        print(f"{label:34}{cell(one):>18}{cell(live):>20}")
    ratio = median(live.ttft[1:]) / median(one.ttft[1:])
    print(f"\nlive / per-turn time to first token: {ratio:.2f}x")
    checks = [
        ("live reads >= 90% from the cache", live.totals().read_share >= 0.90),
        ("live input cost <= 0.25x uncached", live.totals().relative_cost <= 0.25),
        ("live time to first token <= 0.5x", ratio <= 0.5),
        ("live flush reads >= 80% from the cache", bool(live.flush and live.flush.cache_read / live.flush.total >= 0.80)),
    ]  # fmt: skip
    for label, ok in checks:
        print(f"  {'met ' if ok else 'MISS'}  {label}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--claude", help="the real claude CLI")
    args = parser.parse_args()
    claude = find_claude(args.claude)
    texts = messages(args.turns)
    with tempfile.TemporaryDirectory(prefix="clawback-bench-") as work_dir:
        work = Path(work_dir)
        os.environ["CLAWBACK_WARM"] = "0"
        base = build_home(work)
        runs = []
        for name, live in (("per-turn", False), ("live", True)):
            copy = work / f"home-{name}"
            shutil.copytree(base, copy)
            runs.append(await run_mode(name, copy, claude, texts, live))
            print(f"{name}: {args.turns} turns done", file=sys.stderr)
    show(runs, args.turns)


if __name__ == "__main__":
    asyncio.run(main())
