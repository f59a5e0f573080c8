"""Chat turns through live conversations (the fake ``claude``, real processes): one process per
session fed turn by turn, and every way one ends, with the transcript the source of truth."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, timedelta
from typing import Any

import pytest
from clawback.core.chat.engine import ChatEngine, LiveConversations, ReplyDelta, TurnFinished
from clawback.core.chat.transcript import Transcript
from clawback.core.claude.errors import ClaudeKilled, ClaudeOverloaded, ClaudeTimeout
from clawback.core.formats.native import compaction_event
from clawback.core.home import Home
from clawback.core.recall import RecalledFact
from clawback.core.timeutil import format_ts

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FakeClaude,
    fake_claude_fixture,
    is_gone,
    no_leftover_processes,
    wait_gone,
)
from tests.helpers import run_turn, until

from .test_engine import LONG_REPLY, Clock, current, make_engine, messages

KEY = "local:alice"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def engine(home: Home, fake_claude: FakeClaude, clock: Clock) -> AsyncIterator[ChatEngine]:
    runner = fake_claude.runner(timeout=10.0)
    live = LiveConversations(runner, idle_seconds=None, most=3)
    made = make_engine(home, clock, runner=runner, tz=UTC, live=live)
    yield made
    await made.aclose()


def turns(fake_claude: FakeClaude) -> list[dict[str, Any]]:
    return fake_claude.calls()


def pids(fake_claude: FakeClaude) -> list[int]:
    return [call["pid"] for call in fake_claude.calls()]


async def test_turns_go_to_one_process_each_sending_only_what_is_new(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    for text in ("which tomato did we plant?", "when does it ripen?", "/compost tips"):
        await run_turn(engine, text, key=KEY)
    calls = turns(fake_claude)
    assert len(set(pids(fake_claude))) == 1 and [c["turn"] for c in calls] == [1, 2, 3]
    assert calls[0]["stdin"] == "which tomato did we plant?"  # nothing before it: bare
    assert calls[1]["stdin"] == "<current-message>\nwhen does it ripen?\n</current-message>"
    # a message that starts with "/" always goes wrapped: Claude Code would run it as a command
    assert calls[2]["stdin"] == "<current-message>\n/compost tips\n</current-message>"
    session = current(engine)
    assert [m[1] for m in messages(session)] == [
        "which tomato did we plant?", "ECHO: which tomato did we plant?",
        "when does it ripen?", "ECHO: <current-message>\nwhen does it ripen?\n</current-message>",
        "/compost tips", "ECHO: <current-message>\n/compost tips\n</current-message>",
    ]  # fmt: skip
    assert engine.live is not None
    held = engine.live.get(session.id)
    assert held is not None and held.seen == [m.id for m in engine.history(session).messages]


async def test_a_live_turns_recalled_block_goes_before_its_message_and_is_never_stored(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    def facts(query: str, limit: int) -> list[RecalledFact]:
        return [RecalledFact("We plant Black Krim tomatoes in May.", 1.0, "decision", 1)]

    runner = fake_claude.runner()
    engine = make_engine(home, clock, runner=runner, facts_provider=facts,
                         live=LiveConversations(runner, idle_seconds=None))  # fmt: skip
    try:
        await run_turn(engine, "hello there", key=KEY)
        outcome = await run_turn(engine, "which tomato do we plant?", key=KEY)
    finally:
        await engine.aclose()
    sent = turns(fake_claude)[-1]["stdin"]
    assert sent.startswith('<recalled-context source="memory">') and "Black Krim" in sent
    assert sent.endswith("<current-message>\nwhich tomato do we plant?\n</current-message>")
    assert "<conversation-history>" not in sent  # the process holds it already
    assert outcome.prompt is not None and outcome.prompt.continues
    on_disk = outcome.session.transcript_path.read_text()
    assert "recalled-context" not in on_disk.replace("ECHO: <recalled-context", "")


async def test_what_a_live_process_was_given_is_not_recalled_again(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    """Each recalled block stays in the process's context: the next turns leave out what
    an earlier one brought (the same fact found again each turn)."""

    def facts(query: str, limit: int) -> list[RecalledFact]:
        return [RecalledFact("We plant Black Krim tomatoes in May.", 1.0, "decision", 1)]

    runner = fake_claude.runner()
    engine = make_engine(home, clock, runner=runner, facts_provider=facts,
                         live=LiveConversations(runner, idle_seconds=None))  # fmt: skip
    try:
        first = await run_turn(engine, "which tomato do we plant?", key=KEY)
        second = await run_turn(engine, "which tomato again, the dark one?", key=KEY)
    finally:
        await engine.aclose()
    sent = [call["stdin"] for call in turns(fake_claude)]
    assert "Black Krim" in sent[0] and "Black Krim" not in sent[1]
    assert first.prompt and first.prompt.recalled and not (second.prompt and second.prompt.recalled)


async def test_another_client_writing_to_the_session_starts_a_fresh_process(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home, clock: Clock
) -> None:
    first = await run_turn(engine, "first question", key=KEY)
    one_shot = make_engine(home, clock, runner=fake_claude.runner())  # `clawback chat MESSAGE`
    await run_turn(one_shot, "asked elsewhere", session_id=first.session.id)
    await run_turn(engine, "third question", key=KEY)
    calls = turns(fake_claude)
    assert calls[2]["pid"] != calls[0]["pid"] and calls[2]["turn"] == 1
    resent = calls[2]["stdin"]  # the fresh process learns the whole conversation once
    assert "first question" in resent and "asked elsewhere" in resent
    assert resent.endswith("<current-message>\nthird question\n</current-message>")
    assert await wait_gone(calls[0]["pid"])  # the stale process was closed


async def test_a_killed_process_is_replaced_from_the_transcript_and_nothing_is_lost(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.set_env("FAKE_CLAUDE_TURN_MODES", "success,killed").reply(LONG_REPLY)
    await run_turn(engine, "first question", key=KEY)
    with pytest.raises(ClaudeKilled) as caught:
        await run_turn(engine, "tell me everything", key=KEY)
    partial = caught.value.partial_text
    assert partial and LONG_REPLY.startswith(partial)
    await run_turn(engine, "go on", key=KEY)
    calls = turns(fake_claude)
    assert calls[2]["pid"] != calls[1]["pid"] and calls[2]["turn"] == 1
    resent = calls[2]["stdin"]
    assert "first question" in resent and "tell me everything" in resent
    assert f'partial="true">\n{partial}' in resent  # the cut-short reply, marked
    stored = messages(current(engine))
    assert [m[1] for m in stored if m[0] == "user"] == [
        "first question", "tell me everything", "go on"
    ]  # fmt: skip
    assert ("assistant", partial, True) in stored


@pytest.mark.parametrize("noticed", [True, False])
async def test_a_process_that_died_between_turns_is_replaced_without_a_failure(
    engine: ChatEngine, fake_claude: FakeClaude, noticed: bool
) -> None:
    """Killed while idle: noticed before the next turn, or (``noticed`` false) only when that
    turn finds its stdin gone; either way the turn goes to a fresh process, sent once."""
    await run_turn(engine, "first question", key=KEY)
    pid = fake_claude.last_call()["pid"]
    os.kill(pid, signal.SIGKILL)
    if noticed:
        assert await wait_gone(pid)
        await asyncio.sleep(0.2)  # the reader sees stdout end
    outcome = await run_turn(engine, "second question", key=KEY)
    assert not outcome.is_error and outcome.reply.endswith("second question\n</current-message>")
    last = fake_claude.last_call()
    assert last["pid"] != pid and last["turn"] == 1
    assert "first question" in last["stdin"] and last["stdin"].count("second question") == 1
    assert [m[1] for m in messages(outcome.session) if m[0] == "user"] == [
        "first question", "second question"
    ]  # fmt: skip


async def test_a_failed_turn_retried_is_stored_once_and_sent_once(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    """The real CLI keeps a failed turn's message: the retry goes to a fresh process, which
    gets it once, from the transcript."""
    fake_claude.set_env("FAKE_CLAUDE_TURN_MODES", "success,err529")
    await run_turn(engine, "which tomato?", key=KEY)
    with pytest.raises(ClaudeOverloaded):
        await run_turn(engine, "when does it ripen?", key=KEY)
    outcome = await run_turn(engine, "when does it ripen?", key=KEY)  # the message put back
    calls = turns(fake_claude)
    assert len({calls[0]["pid"], calls[2]["pid"]}) == 2
    assert calls[2]["stdin"].count("when does it ripen?") == 1
    assert [m[1] for m in messages(outcome.session) if m[0] == "user"] == [
        "which tomato?", "when does it ripen?"
    ]  # fmt: skip
    assert await wait_gone(calls[0]["pid"])


async def test_a_hung_process_times_out_and_the_next_turn_starts_afresh(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    fake_claude.set_env("FAKE_CLAUDE_TURN_MODES", "success,hang")
    runner = fake_claude.runner(timeout=1.0)
    engine = make_engine(home, clock, runner=runner, live=LiveConversations(runner))
    try:
        await run_turn(engine, "first", key=KEY)
        with pytest.raises(ClaudeTimeout):
            await run_turn(engine, "second", key=KEY)
        await run_turn(engine, "third", key=KEY)
    finally:
        await engine.aclose()
    calls = turns(fake_claude)
    assert calls[2]["pid"] != calls[0]["pid"] and "second" in calls[2]["stdin"]
    assert await wait_gone(calls[0]["pid"])


async def test_a_cancelled_reply_keeps_what_streamed_and_the_process_goes_on(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("slow").reply(LONG_REPLY).delay(0.05)
    await run_turn(engine, "first", key=KEY)
    turn = engine.turn("tell me slowly", key=KEY)
    events = []
    async for event in turn:
        events.append(event)
        if sum(isinstance(e, ReplyDelta) for e in events) == 2:
            turn.cancel()
    last = events[-1]
    assert isinstance(last, TurnFinished)
    outcome = last.outcome
    assert outcome.cancelled and outcome.partial
    await run_turn(engine, "and then?", key=KEY)
    calls = turns(fake_claude)
    assert len(set(pids(fake_claude))) == 1 and calls[-1]["turn"] == 3  # the same process
    assert calls[-1]["stdin"] == "<current-message>\nand then?\n</current-message>"
    stored = messages(current(engine))
    assert stored[3] == ("assistant", outcome.reply, True)
    session = current(engine)
    assert engine.live is not None
    held = engine.live.get(session.id)
    assert held is not None and held.seen == [m.id for m in engine.history(session).messages]


@pytest.mark.parametrize("how", ["/new", "/reset", "/new opus", "stale", "model"])
async def test_a_new_session_or_model_gets_a_fresh_process(
    engine: ChatEngine, fake_claude: FakeClaude, clock: Clock, how: str
) -> None:
    await run_turn(engine, "hello", key=KEY)
    if how == "stale":
        clock.now += timedelta(hours=5)
        await run_turn(engine, "hello again", key=KEY)
    elif how == "model":
        await run_turn(engine, "hello again", key=KEY, model="haiku")
    else:
        await run_turn(engine, f"{how} hello again", key=KEY)
    calls = turns(fake_claude)
    assert calls[1]["pid"] != calls[0]["pid"] and calls[1]["turn"] == 1
    assert await wait_gone(calls[0]["pid"])  # a key has one live process
    argv = calls[1]["argv"]
    wanted = {"/new opus": "opus", "model": "haiku"}.get(how)
    assert (argv[argv.index("--model") + 1] if "--model" in argv else None) == wanted


async def test_a_compaction_restarts_the_process_from_the_summary(
    engine: ChatEngine, fake_claude: FakeClaude, clock: Clock
) -> None:
    for text in ("one", "two", "three"):
        await run_turn(engine, text, key=KEY)
    session = current(engine)
    kept = Transcript(session.transcript_path).read().messages[-2]
    line = compaction_event(str(uuid.uuid4()), format_ts(clock()), "SUMMARY: one and two",
                            kept.id, 900, 300)  # fmt: skip
    Transcript(session.transcript_path).append([line], sync=True)
    engine.store.record_compaction(session.id, tokens_after=300)
    await run_turn(engine, "four", key=KEY)
    calls = turns(fake_claude)
    assert calls[-1]["pid"] != calls[0]["pid"] and calls[-1]["turn"] == 1
    sent = calls[-1]["stdin"]
    assert sent.startswith("<conversation-summary>\nSUMMARY: one and two")
    assert '<message role="user"' in sent and "one\n</message>" not in sent


async def test_an_idle_process_exits_and_the_next_turn_starts_one(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    runner = fake_claude.runner()
    live = LiveConversations(runner, idle_seconds=0.3)
    engine = make_engine(home, clock, runner=runner, live=live)
    try:
        await run_turn(engine, "first", key=KEY)
        first = fake_claude.last_call()["pid"]
        assert await wait_gone(first, 5) and len(live) == 0
        guard = live.watchdog.pid
        # nothing left to watch: the guard goes too, once the closing has settled
        await until(lambda: live.watchdog.pid is None, "the watchdog to end")
        assert guard is None or await wait_gone(guard)
        await run_turn(engine, "second", key=KEY)
    finally:
        await engine.aclose()
    last = fake_claude.last_call()
    assert last["pid"] != first and last["turn"] == 1 and "first" in last["stdin"]


async def test_the_most_processes_a_host_keeps(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    runner = fake_claude.runner()
    engine = make_engine(home, clock, runner=runner, live=LiveConversations(runner, most=1))
    try:
        await run_turn(engine, "in one", key="local:one")
        await run_turn(engine, "in two", key="local:two")
        assert engine.live is not None and len(engine.live) == 1
    finally:
        await engine.aclose()
    assert await wait_gone(fake_claude.calls()[0]["pid"])


async def test_closing_the_host_leaves_no_process(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    fake_claude.set_env("FAKE_CLAUDE_SPAWN_CHILD", "1")
    runner = fake_claude.runner()
    live = LiveConversations(runner)
    engine = make_engine(home, clock, runner=runner, live=live)
    await run_turn(engine, "in one", key="local:one")
    await run_turn(engine, "in two", key="local:two")
    guard = live.watchdog.pid
    await engine.aclose()
    found = fake_claude.calls()
    for call in found:
        assert await wait_gone(call["pid"]) and await wait_gone(call["child_pid"])
    assert guard is not None and await wait_gone(guard)


async def test_a_one_shot_engine_keeps_no_process(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    engine = make_engine(home, clock, runner=fake_claude.runner())
    await run_turn(engine, "one", key=KEY)
    await run_turn(engine, "two", key=KEY)
    calls = turns(fake_claude)
    assert engine.live is None and "turn" not in calls[0]
    assert "<conversation-history>" in calls[1]["stdin"]  # as before: the whole conversation
    assert all(is_gone(call["pid"]) for call in calls)


async def test_live_turns_are_on_by_setting_for_hosts(home: Home) -> None:
    assert home.chat_engine(live=True).live is not None
    home.config.chat.live_idle_minutes = 0
    assert home.chat_engine(live=True).live is None
    assert home.chat_engine().live is None  # one-shot `clawback chat MESSAGE`
