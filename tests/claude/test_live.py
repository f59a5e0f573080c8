"""LiveClaude against the fake ``claude``: one process for many turns, and every way one ends."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clawback.core.claude.errors import (
    ClaudeCancelled,
    ClaudeKilled,
    ClaudeOverloaded,
    ClaudeTimeout,
)
from clawback.core.claude.events import Event, Result, TextDelta
from clawback.core.claude.live import LiveClaude
from clawback.core.claude.runner import CONTAINED_FLAGS
from clawback.core.claude.watchdog import Watchdog

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FAKE_CLAUDE,
    FakeClaude,
    fake_claude_fixture,
    is_gone,
    no_leftover_processes,
    wait_gone,
)

SYSTEM = "You are clawback's test assistant."


async def collect(live: LiveClaude, content: str) -> list[Event]:
    events = []
    async with contextlib.aclosing(live.turn(content)) as stream:
        async for event in stream:
            events.append(event)
    return events


def reply_of(events: list[Event]) -> str:
    result = events[-1]
    assert isinstance(result, Result)
    return result.reply


async def test_one_process_answers_every_turn(fake_claude: FakeClaude) -> None:
    live = LiveClaude(fake_claude.runner(), system_prompt=SYSTEM, model="sonnet")
    await live.start()
    try:
        replies = [reply_of(await collect(live, text)) for text in ("one", "two", "three")]
    finally:
        await live.close()
    assert replies == ["ECHO: one", "ECHO: two", "ECHO: three"]
    calls = fake_claude.calls()
    assert [c["turn"] for c in calls] == [1, 2, 3] and len({c["pid"] for c in calls}) == 1
    assert [c["stdin"] for c in calls] == ["one", "two", "three"]
    argv = calls[0]["argv"]
    assert argv[argv.index("--input-format") + 1] == "stream-json"
    assert all(flag in argv for flag in CONTAINED_FLAGS)
    assert argv[argv.index("--system-prompt") + 1] == SYSTEM
    assert argv[argv.index("--model") + 1] == "sonnet"
    env = calls[0]["env"]  # what --bare would skip, skipped explicitly
    assert env["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] == env["DISABLE_AUTO_COMPACT"] == "1"
    assert live.turns == 3 and not live.alive
    assert await wait_gone(calls[0]["pid"])


async def test_each_result_carries_its_own_turns_cost(fake_claude: FakeClaude) -> None:
    """The CLI's total_cost_usd adds up the process's turns; a turn's is its own."""
    live = LiveClaude(fake_claude.runner(), system_prompt=SYSTEM)
    await live.start()
    try:
        first = (await collect(live, "one"))[-1]
        second = (await collect(live, "two"))[-1]
    finally:
        await live.close()
    assert isinstance(first, Result) and isinstance(second, Result)
    running_total = second.raw["total_cost_usd"]
    assert second.total_cost_usd == pytest.approx(running_total - first.total_cost_usd)
    assert 0 < second.total_cost_usd < running_total
    # the conversation grew: the second request re-read the first from the cache
    assert second.usage.cache_read > first.usage.cache_read


async def cancel_after_first_delta(live: LiveClaude, content: str) -> ClaudeCancelled:
    first = asyncio.Event()

    async def run() -> None:
        async with contextlib.aclosing(live.turn(content)) as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    first.set()

    task = asyncio.create_task(run())
    await asyncio.wait_for(first.wait(), 10)
    task.cancel()
    with pytest.raises(ClaudeCancelled) as caught:
        await task
    return caught.value


async def test_a_cancelled_reply_is_interrupted_and_the_process_goes_on(
    fake_claude: FakeClaude,
) -> None:
    fake_claude.mode("slow")
    live = LiveClaude(fake_claude.runner(), system_prompt=SYSTEM)
    await live.start()
    try:
        cancelled = await cancel_after_first_delta(live, "a long question " * 5)
        assert cancelled.partial_text and ("ECHO: " + "a long question " * 5).startswith(
            cancelled.partial_text
        )
        assert live.alive
        assert reply_of(await collect(live, "next")) == "ECHO: next"
    finally:
        await live.close()
    assert len({c["pid"] for c in fake_claude.calls()}) == 1


async def test_a_reply_cancelled_before_it_began_leaves_the_process_ready(
    fake_claude: FakeClaude,
) -> None:
    fake_claude.set_env("FAKE_CLAUDE_TURN_MODES", "waiting,success")
    live = LiveClaude(fake_claude.runner(), system_prompt=SYSTEM)
    await live.start()
    try:
        task = asyncio.create_task(collect(live, "the API never answers this"))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(ClaudeCancelled) as caught:
            await task
        assert caught.value.partial_text == "" and live.alive
        assert reply_of(await collect(live, "next")) == "ECHO: next"
    finally:
        await live.close()


async def test_an_interrupt_that_never_lands_stops_the_process(fake_claude: FakeClaude) -> None:
    fake_claude.mode("slow").set_env("FAKE_CLAUDE_TURN_MODES", "success,hang")
    live = LiveClaude(fake_claude.runner(), system_prompt=SYSTEM, interrupt_grace=0.5)
    await live.start()
    try:
        await collect(live, "first")
        task = asyncio.create_task(collect(live, "second hangs"))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(ClaudeCancelled):
            await task
        assert not live.alive
    finally:
        await live.close()
    assert await wait_gone(fake_claude.last_call()["pid"])


async def test_a_process_killed_mid_reply_fails_the_turn_with_what_streamed(
    fake_claude: FakeClaude,
) -> None:
    fake_claude.set_env("FAKE_CLAUDE_TURN_MODES", "success,killed")
    live = LiveClaude(fake_claude.runner(), system_prompt=SYSTEM)
    await live.start()
    try:
        await collect(live, "first")
        with pytest.raises(ClaudeKilled) as caught:
            await collect(live, "second reply is long enough to come in two pieces " * 3)
        assert caught.value.signal_name == "SIGKILL" and caught.value.partial_text
        assert not live.alive
        with pytest.raises(ClaudeKilled):
            await collect(live, "third")  # a dead process takes no turn
    finally:
        await live.close()


async def test_a_hung_turn_times_out_and_stops_the_process(fake_claude: FakeClaude) -> None:
    fake_claude.set_env("FAKE_CLAUDE_TURN_MODES", "success,hang")
    live = LiveClaude(fake_claude.runner(timeout=1.0), system_prompt=SYSTEM)
    await live.start()
    try:
        await collect(live, "first")
        started = time.monotonic()
        with pytest.raises(ClaudeTimeout):
            await collect(live, "second")
        assert time.monotonic() - started < 5 and not live.alive
    finally:
        await live.close()
    assert await wait_gone(fake_claude.last_call()["pid"])


async def test_an_api_error_stops_the_process_it_holds_the_failed_message(
    fake_claude: FakeClaude,
) -> None:
    """The real CLI keeps a failed turn's message and sends it again with the next one, so a
    process that failed a turn is never reused (the retry goes to a fresh one)."""
    fake_claude.set_env("FAKE_CLAUDE_TURN_MODES", "success,err529")
    live = LiveClaude(fake_claude.runner(), system_prompt=SYSTEM)
    await live.start()
    try:
        await collect(live, "first")
        with pytest.raises(ClaudeOverloaded):
            await collect(live, "second")
        assert not live.alive
    finally:
        await live.close()


async def test_close_stops_the_whole_group_and_a_long_system_prompt_file(
    fake_claude: FakeClaude,
) -> None:
    fake_claude.set_env("FAKE_CLAUDE_SPAWN_CHILD", "1")
    watchdog = Watchdog()
    long_prompt = "Be brief. " * 20_000  # over the command line's limit: a file in the cwd
    live = LiveClaude(fake_claude.runner(), system_prompt=long_prompt, watchdog=watchdog)
    await live.start()
    try:
        await collect(live, "hello")
        call = fake_claude.last_call()
        assert "--system-prompt-file" in call["argv"]
        assert watchdog.groups == {call["pid"]}
    finally:
        await live.close()
        await watchdog.aclose()
    assert await wait_gone(call["pid"]) and await wait_gone(call["child_pid"])
    assert watchdog.groups == frozenset() and list(fake_claude.cwd.iterdir()) == []


PARENT = """
import asyncio, contextlib, sys
from clawback.core.claude.live import LiveClaude
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.claude.watchdog import Watchdog

async def main():
    live = LiveClaude(ClaudeRunner(sys.argv[1], cwd=sys.argv[2]), system_prompt="S",
                      watchdog=Watchdog())
    await live.start()
    async with contextlib.aclosing(live.turn("a reply that never ends")) as turn:
        async for event in turn:
            print("streaming", flush=True)
            await asyncio.sleep(3600)

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_killed_parent_leaves_no_claude_behind(fake_claude: FakeClaude, tmp_path: Path) -> None:
    """SIGKILL runs no cleanup: the watchdog stops the group (claude and what it started)."""
    fake_claude.mode("stall").set_env("FAKE_CLAUDE_SPAWN_CHILD", "1")
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(FAKE_CLAUDE), str(fake_claude.cwd)],
        stdout=subprocess.PIPE, env=os.environ.copy(),
    )  # fmt: skip
    assert parent.stdout is not None
    try:
        assert parent.stdout.readline() == b"streaming\n"
        call = fake_claude.last_call()
        assert not is_gone(call["pid"]) and not is_gone(call["child_pid"])
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (
            is_gone(call["pid"]) and is_gone(call["child_pid"])
        ):
            time.sleep(0.05)
        assert is_gone(call["pid"]) and is_gone(call["child_pid"])
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        parent.stdout.close()
    log = [json.loads(line) for line in fake_claude.log.read_text().splitlines()]
    assert len(log) == 1
