"""The Telegram gateway under load: 20 chats send 10 messages each at once.

    .venv/bin/python bench/telegram_gateway.py [--chats 20] [--messages 10] [--concurrency 4]

The gateway polls the loopback Bot API stand-in (``tests/gateway/telegram_standin.py``) through
the real python-telegram-bot; turns run through the chat engine of a fresh home with the test
suite's fake ``claude`` (which answers at once: what is left is clawback's own cost). Checked:
every message answered exactly once (one reply per message, one user line per message in its
session) and each chat's replies in the order its messages were sent.

Measured per message, beside a baseline from the same run:

* ``gateway``: the engine on a thread of its own, as ``clawback gateway telegram`` runs it;
  reading and storing the update, then from the moment its turn has a slot
  (``telegram.max_concurrent_turns``; its chat's earlier turns done) to its reply's last part
  sent, less the time inside ``claude``: the turn's own work (session, transcript, recall,
  index), the reply split and rendered, and sending;
* ``engine alone`` (the baseline): the same messages as bare ``ChatEngine.turn`` calls, per chat
  in order, the same number at once, less the time inside ``claude``;
* ``gateway's own``: the difference of the two medians and of the two p95s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))

from clawback.core.archive.sessions import list_sessions, session_messages
from clawback.core.chat.engine import ChatEngine
from clawback.core.config import TelegramConfig
from clawback.core.gateway import TelegramGateway
from clawback.core.gateway.bot import TelegramBot
from clawback.core.home import Home, engine_host
from timing import percentiles

from tests.gateway.telegram_standin import TOKEN

FAKE_CLAUDE = ROOT / "tests" / "fake_claude" / "claude"
WORD = re.compile(r"c(\d+)m(\d+)x")


def text_of(chat: int, n: int) -> str:
    return f"question c{chat}m{n}x, please"


def asked(prompt: str) -> str:
    """The message a prompt asks about: its last ``cNmNx`` (the current message comes last)."""
    found = WORD.findall(prompt)
    return f"c{found[-1][0]}m{found[-1][1]}x" if found else ""


def time_claude(engine: ChatEngine, spent: dict[str, float]) -> None:
    """Record the seconds each ``claude`` call takes, by the message it answers."""
    inner = engine.runner.stream

    async def stream(prompt: str, **kwargs: Any) -> AsyncGenerator[Any, None]:
        started = time.perf_counter()
        async for event in inner(prompt, **kwargs):
            yield event
        spent[asked(prompt)] = time.perf_counter() - started

    setattr(engine.runner, "stream", stream)  # noqa: B010  (a method, replaced on one instance)


@contextlib.contextmanager
def standin_apart(folder: Path) -> Iterator[str]:
    """The Bot API stand-in in a process of its own (as Telegram is): its address."""
    port_file = folder / "standin-url"
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "gateway" / "telegram_standin.py"), str(port_file)],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text():
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the Bot API stand-in did not start")
            time.sleep(0.05)
        yield port_file.read_text()
    finally:
        proc.kill()
        proc.wait()


def control(url: str, what: str, params: dict[str, Any]) -> Any:
    """Ask the stand-in to push an update or tell what it was sent."""
    request = urllib.request.Request(
        f"{url}/control/{what}",
        data=json.dumps(params).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def configure(home: Home, folder: Path) -> Home:
    home.config.sources.claude_code_path = str(folder / "cc")
    home.config.sources.openclaw_path = str(folder / "oc")
    home.config.embeddings.model = "none"
    return home


def open_home(folder: Path) -> Home:
    return configure(Home.open(folder / "home"), folder)


async def engine_alone(folder: Path, chats: int, messages: int, slots: int) -> list[float]:
    """The baseline: bare engine turns, per chat in order, ``slots`` at once."""
    home = open_home(folder)
    engine = home.chat_engine(nearest=None)
    spent: dict[str, float] = {}
    time_claude(engine, spent)
    gate = asyncio.Semaphore(slots)
    took: dict[str, float] = {}

    async def chat(c: int) -> None:
        for n in range(messages):
            async with gate:
                started = time.perf_counter()
                async for _ in engine.turn(text_of(c, n), key=f"agent:main:telegram:dm:{c}"):
                    pass
                took[f"c{c}m{n}x"] = time.perf_counter() - started

    await asyncio.gather(*(chat(c) for c in range(chats)))
    home.close()
    return [took[k] - spent[k] for k in took]


async def through_gateway(
    folder: Path, chats: int, messages: int, slots: int
) -> tuple[list[float], list[str]]:
    """Every message through the gateway; the per-message overhead and what went wrong."""
    home = open_home(folder)
    settings = TelegramConfig(
        allow=[str(1000 + c) for c in range(chats)],
        dm_scope="per-peer",
        debounce_ms=0,
        max_concurrent_turns=slots,
        poll_timeout_s=1,
    )
    home.config.telegram = settings
    problems: list[str] = []
    with standin_apart(folder) as url:
        bot = TelegramBot(TOKEN, url, poll_timeout_s=1, backoff_start_s=0.05)
        spent: dict[str, float] = {}

        def make_engine(own: Home) -> ChatEngine:
            # the host's own home (its own connection), set up as the baseline's
            engine = configure(own, folder).chat_engine(nearest=None)
            time_claude(engine, spent)
            return engine

        host = engine_host(home.paths.home, make_engine=make_engine)  # as the CLI runs it
        gateway = TelegramGateway(host, settings, home.paths.gateway / "telegram", bot)
        handled: dict[int, float] = {}
        handle = gateway.handle

        def timed(update: dict[str, Any]) -> None:
            started = time.perf_counter()
            handle(update)
            handled[update["update_id"]] = time.perf_counter() - started

        gateway.handle = timed  # type: ignore[method-assign]
        await gateway.start()
        stop = asyncio.Event()
        polling = asyncio.create_task(gateway.run(stop))
        ids: dict[int, str] = {}
        for n in range(messages):  # all at once: every chat's message n, then n + 1, ...
            for c in range(chats):
                push = {"text": text_of(c, n), "chat_id": 1000 + c, "user_id": 1000 + c}
                ids[int(control(url, "push", push))] = f"c{c}m{n}x"
        deadline = time.monotonic() + 600
        while len(gateway.timings) < chats * messages and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await gateway.idle()
        stop.set()
        await polling
        await asyncio.to_thread(host.close)
        replies = defaultdict(list)
        for sent in control(url, "sent", {}):
            replies[sent["chat_id"]].append(sent["text"])
    overhead: list[float] = []
    answered: list[int] = []
    parts: dict[str, list[float]] = defaultdict(list)
    for batch_ids, _at, started, ended, sent in gateway.timings:
        parts["read and store"].append(sum(handled.get(i, 0.0) for i in batch_ids))
        parts["turn less claude"].append(ended - started - spent.get(ids[batch_ids[0]], 0.0))
        parts["send"].append(sent - ended)
        # from the moment its turn had a slot (its chat's earlier turns done) to its reply sent,
        # and the reading and storing of its update before that; less claude's own time
        answered.extend(batch_ids)
        own = sum(handled.get(i, 0.0) for i in batch_ids) + (sent - started)
        overhead.append(own - spent.get(ids[batch_ids[0]], 0.0))
    if sorted(answered) != sorted(ids):
        problems.append(f"answered {len(answered)} of {len(ids)} (or some twice)")
    for c in range(chats):
        if len(replies[1000 + c]) != messages:
            problems.append(f"chat {c}: {len(replies[1000 + c])} replies for {messages} messages")
    for summary in list_sessions(home.db):
        said = [m.text for m in session_messages(home.db, summary.id) if m.role == "user"]
        chat = (summary.key or "").rsplit(":", 1)[-1]
        wanted = [text_of(int(chat) - 1000, n) for n in range(messages)]
        if said != wanted:
            problems.append(
                f"chat {chat}: stored {len(said)} messages, in the wrong order or twice"
            )
    home.close()
    for name, samples in parts.items():
        p50, p95 = percentiles(samples)
        print(f"  gateway part: {name:20} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms")
    return overhead, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chats", type=int, default=20)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    os.environ["CLAWBACK_CLAUDE"] = str(FAKE_CLAUDE)
    os.environ["FAKE_CLAUDE_REPLY"] = "noted"
    os.environ.setdefault("CLAWBACK_WARM", "0")
    with tempfile.TemporaryDirectory() as work:
        os.environ["CLAWBACK_HOME"] = work
        os.environ["HOME"] = work
        base = asyncio.run(
            engine_alone(Path(work) / "engine", args.chats, args.messages, args.concurrency)
        )
        gate, problems = asyncio.run(
            through_gateway(Path(work) / "gateway", args.chats, args.messages, args.concurrency)
        )
    total = args.chats * args.messages
    print(
        f"{args.chats} chats x {args.messages} messages at once, {args.concurrency} turns at a time"
    )
    print(f"{'':28}{'p50 ms':>10}{'p95 ms':>10}")
    b50, b95 = percentiles(base)
    g50, g95 = percentiles(gate)
    print(f"{'engine alone (baseline)':28}{b50:10.1f}{b95:10.1f}")
    print(f"{'through the gateway':28}{g50:10.1f}{g95:10.1f}")
    print(f"{'gateway own (difference)':28}{g50 - b50:10.1f}{g95 - b95:10.1f}")
    print(f"answered exactly once, in order: {'yes' if not problems else 'NO'} ({total} messages)")
    for problem in problems[:10]:
        print(f"  {problem}")
    if problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
