"""The memory flush as a silent turn of the live conversation (the fake ``claude``, real
processes): it goes to the session's process, is never shown nor stored as a chat turn, and
falls back to a call of its own when no process holds the session."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC
from typing import Any

import pytest
from clawback.core.chat.engine import ChatEngine, Notice, ReplyDelta
from clawback.core.home import Home
from clawback.core.memory.flush import FLUSH_SYSTEM_PROMPT

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FakeClaude,
    fake_claude_fixture,
    no_leftover_processes,
)

from .test_flush import KEY, Clock, clock_fixture, lifecycle  # noqa: F401  (fixture)

NOTES = "- Alice keeps bees behind the quincunx greenhouse."


@pytest.fixture
async def engine(home: Home, fake_claude: FakeClaude, clock: Clock) -> AsyncIterator[ChatEngine]:
    made = home.chat_engine(runner=fake_claude.runner(timeout=10.0), clock=clock, tz=UTC,
                            live=True)  # fmt: skip
    yield made
    await made.aclose()


async def turn(engine: ChatEngine, text: str) -> list[Any]:
    return [event async for event in engine.turn(text, key=KEY)]


async def test_the_automatic_flush_is_a_silent_turn_of_the_same_process(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    # window 20,000: a flush is due once a prompt reached 11,000 tokens
    fake_claude.reply(NOTES).context_window(20_000).usage(input=12_000)
    await turn(engine, "hello there")
    events = await turn(engine, "what about the bees?")
    calls = fake_claude.calls()
    assert len({c["pid"] for c in calls}) == 1 and [c["turn"] for c in calls] == [1, 2, 3]
    flush = calls[1]["stdin"]
    assert flush.startswith("<memory-flush>") and FLUSH_SYSTEM_PROMPT in flush
    assert "hello there" not in flush  # the process holds the conversation already
    chat_turn = calls[2]["stdin"]  # (recall found the notes just written: fine)
    assert chat_turn.endswith("<current-message>\nwhat about the bees?\n</current-message>")
    assert "<conversation-history>" not in chat_turn
    notes = [e.text for e in events if isinstance(e, Notice)]
    assert notes == [
        "Memory flush: saved notes from this session to memory/2026-05-01.md (a turn of this"
        " conversation: 0% read from the cache)."
    ]  # the fake's usage here is fixed; the bench measures the real share
    replies = "".join(e.text for e in events if isinstance(e, ReplyDelta))
    assert replies == NOTES  # only the chat turn's reply is shown, not the flush's
    memory = (home.paths.workspace / "memory" / "2026-05-01.md").read_text()
    assert memory.rstrip().endswith(NOTES)
    session = engine.store.current(KEY)
    assert session is not None
    lines = session.transcript_path.read_text()
    assert "memory-flush" not in lines and lines.count(NOTES) == 2  # two chat replies only
    held = engine.live.get(session.id) if engine.live else None
    assert held is not None and held.seen == [m.id for m in engine.history(session).messages]


async def test_a_flush_asked_for_between_turns_rides_the_conversation_too(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.reply(NOTES)
    await turn(engine, "the bees live behind the greenhouse")
    session = engine.store.current(KEY)
    assert session is not None
    proposal = await lifecycle(engine).flush.propose(session)  # /flush in the app or the REPL
    assert proposal.live and proposal.notes == NOTES
    calls = fake_claude.calls()
    assert len({c["pid"] for c in calls}) == 1 and calls[-1]["stdin"].startswith("<memory-flush>")


async def test_without_a_live_process_the_flush_is_a_call_of_its_own(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    fake_claude.reply(NOTES)
    one_shot = home.chat_engine(runner=fake_claude.runner(), clock=clock, tz=UTC)
    await turn(one_shot, "the bees live behind the greenhouse")
    session = one_shot.store.current(KEY)
    assert session is not None
    proposal = await lifecycle(one_shot).flush.propose(session)
    assert not proposal.live and proposal.notes == NOTES
    last = fake_claude.last_call()
    assert "turn" not in last and "the bees live" in last["stdin"]
    assert last["argv"][last["argv"].index("--system-prompt") + 1] == FLUSH_SYSTEM_PROMPT
