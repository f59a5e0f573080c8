"""Live conversations through the real ``claude`` CLI, offline, against the loopback stand-in.

Opt-in like the rest of ``tests/integration`` (``CLAWBACK_INTEGRATION=1``). A chat engine with
live conversations runs turns through one real ``claude -p --input-format stream-json``
process: each request extends the one before (so the API's prompt cache reads it), a process
killed between turns is replaced from the transcript, a cancelled reply is interrupted and the
process goes on, a turn behaves the same with ``--bare``, and an OAuth-only login under
``--bare`` is the one clear line.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from clawback.core.chat.engine import ChatEngine, ReplyDelta
from clawback.core.claude.errors import ClaudeBareNotLoggedIn, ClaudeKilled
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.home import Home

from tests.helpers import run_turn

from ..fake_claude.fixtures import is_gone, wait_gone
from .anthropic_standin import AnthropicStandin
from .test_real_claude import (  # noqa: F401  (fixtures)
    claude_home,
    memory_home,
    offline_env,
    real_claude,
    system_texts,
)

pytestmark = pytest.mark.integration
KEY = "local:alice"


def texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if isinstance(b, dict)]


def unmarked(messages: list[dict[str, Any]]) -> list[Any]:
    """Messages as the cache sees them: a string content is one text block, and the cache
    markers are no content (moving a breakpoint changes no prefix)."""
    found = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        plain = [{k: v for k, v in block.items() if k != "cache_control"} for block in blocks]
        found.append({"role": message["role"], "content": plain})
    return found


def marked_last(request: dict[str, Any]) -> bool:
    last = request["messages"][-1]["content"]
    return isinstance(last, list) and bool(last[-1].get("cache_control"))


@contextlib.asynccontextmanager
async def live_chat(runner: ClaudeRunner, at: Path) -> AsyncIterator[ChatEngine]:
    """The chat engine of the home ``at`` keeping live conversations through ``runner``; its
    processes ended and the home closed on the way out."""
    home = Home.open(at)
    engine = home.chat_engine(runner=runner, live=True)
    try:
        yield engine
    finally:
        await engine.aclose()
        home.close()


@pytest.fixture
async def live_engine(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    memory_home: Path,  # noqa: F811
    tmp_path: Path,
) -> AsyncIterator[tuple[ChatEngine, AnthropicStandin]]:
    with AnthropicStandin() as standin:
        runner = ClaudeRunner(real_claude, env=offline_env(standin, claude_home),
                              cwd=tmp_path / "cwd", timeout=120)  # fmt: skip
        async with live_chat(runner, memory_home) as engine:
            yield engine, standin


async def test_a_live_conversation_extends_each_request_with_only_the_new_turn(
    live_engine: tuple[ChatEngine, AnthropicStandin],
) -> None:
    engine, standin = live_engine
    questions = ["When does the zebracorn migration run?", "and who runs it?", "/why?"]
    for question in questions:
        await run_turn(engine, question, key=KEY)
    requests = standin.state.requests
    assert len(requests) == 3
    assert engine.live is not None and engine.live.started == 1  # one process for all three
    for before, after in itertools.pairwise(requests):
        # the earlier request is the later one's prefix; the new turn comes after it
        assert unmarked(after["messages"][: len(before["messages"])]) == unmarked(
            before["messages"]
        )
        assert marked_last(after)
    last_turn = texts(requests[2]["messages"][-1])[-1]
    assert last_turn.endswith("<current-message>\n/why?\n</current-message>")  # never a command
    assert "<conversation-history>" not in last_turn
    assert "memory_search" in " ".join(system_texts(requests[0]))  # the system prompt is ours


async def test_a_process_killed_between_turns_is_replaced_from_the_transcript(
    live_engine: tuple[ChatEngine, AnthropicStandin],
) -> None:
    engine, standin = live_engine
    first = await run_turn(engine, "first question about the zebracorn", key=KEY)
    assert engine.live is not None
    [pid] = engine.live.pids().values()
    os.kill(pid, signal.SIGKILL)
    assert await wait_gone(pid)
    second = await run_turn(engine, "second question", key=KEY)
    assert engine.live.started == 2 and second.session.id == first.session.id
    fresh = texts(standin.state.requests[-1]["messages"][0])[-1]
    assert "first question about the zebracorn" in fresh and "ECHO: " in fresh  # the history
    assert fresh.endswith("<current-message>\nsecond question\n</current-message>")
    users = [m for m in engine.history(second.session).messages if m.role == "user"]
    assert [m.content for m in users] == ["first question about the zebracorn", "second question"]


async def test_a_process_killed_mid_reply_keeps_what_streamed_and_the_next_turn_goes_on(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    memory_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    with AnthropicStandin(delay=0.3) as standin:
        runner = ClaudeRunner(real_claude, env=offline_env(standin, claude_home),
                              cwd=tmp_path / "cwd", timeout=120)  # fmt: skip
        async with live_chat(runner, memory_home) as engine:
            await run_turn(engine, "first question about the zebracorn", key=KEY)
            assert engine.live is not None
            [pid] = engine.live.pids().values()
            killed: list[str] = []

            def kill_at_first_piece(event: object) -> None:
                if isinstance(event, ReplyDelta) and not killed:
                    killed.append(event.text)
                    os.kill(pid, signal.SIGKILL)

            with pytest.raises(ClaudeKilled) as caught:
                await run_turn(engine, "word " * 60, key=KEY, on_event=kill_at_first_piece)
            assert caught.value.partial_text.startswith(killed[0])
            standin.state.delay = 0
            outcome = await run_turn(engine, "after the kill", key=KEY)
            assert engine.live.started == 2 and not outcome.is_error
            fresh = texts(standin.state.requests[-1]["messages"][0])[-1]
            assert "first question about the zebracorn" in fresh
            assert 'partial="true">' in fresh and "word word word" in fresh  # kept, marked


async def test_a_cancelled_reply_is_interrupted_and_the_process_goes_on(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    memory_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    with AnthropicStandin(delay=0.3) as standin:
        runner = ClaudeRunner(real_claude, env=offline_env(standin, claude_home),
                              cwd=tmp_path / "cwd", timeout=120)  # fmt: skip
        async with live_chat(runner, memory_home) as engine:
            turn = engine.turn("word " * 60, key=KEY)
            async for event in turn:
                if isinstance(event, ReplyDelta):
                    turn.cancel()
            assert turn.outcome is not None and turn.outcome.cancelled and turn.outcome.partial
            assert engine.live is not None
            [pid] = engine.live.pids().values()
            standin.state.delay = 0
            await run_turn(engine, "after the interrupt", key=KEY)
            assert engine.live.pids() == {turn.outcome.session.id: pid}  # the same process
            last = standin.state.requests[-1]["messages"]
            assert texts(last[-1])[-1].endswith("after the interrupt\n</current-message>")
    assert is_gone(pid) or await wait_gone(pid)


async def test_a_bare_turn_behaves_the_same(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    memory_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Everything the chat needs is passed explicitly: with --bare (what -p is to become by
    default) a turn gets the same system prompt and tools, and no CLAUDE.md either way."""
    (claude_home / ".claude").mkdir(exist_ok=True)
    (claude_home / ".claude" / "CLAUDE.md").write_text("MARKER-FROM-THE-USERS-CLAUDE-MD\n")
    seen: dict[bool, dict[str, Any]] = {}
    for bare in (False, True):
        with AnthropicStandin() as standin:
            runner = ClaudeRunner(real_claude, env=offline_env(standin, claude_home),
                                  cwd=tmp_path / "cwd", timeout=120,
                                  extra_args=["--bare"] if bare else [])  # fmt: skip
            async with live_chat(runner, memory_home) as engine:
                outcome = await run_turn(engine, "hello there", key=f"local:bare{bare}")
                await run_turn(engine, "and again", key=f"local:bare{bare}")
            assert not outcome.is_error and outcome.reply == "ECHO: hello there"
            seen[bare] = standin.state.requests[-1]
    for request in seen.values():
        assert "MARKER-FROM-THE-USERS-CLAUDE-MD" not in json.dumps(request)
        assert {"mcp__clawback__memory_search", "mcp__clawback__memory_get"} <= {
            tool["name"] for tool in request["tools"]
        }
    assert system_texts(seen[True])[-1] == system_texts(seen[False])[-1]
    assert [texts(m) for m in seen[True]["messages"][2:]] == [
        texts(m) for m in seen[False]["messages"][2:]
    ]


async def test_an_oauth_only_login_under_bare_is_one_clear_line(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    memory_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    with AnthropicStandin() as standin:
        env = {**offline_env(standin, claude_home, key=False),
               "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-clawback-test"}  # fmt: skip
        runner = ClaudeRunner(real_claude, env=env, cwd=tmp_path / "cwd", timeout=120,
                              extra_args=["--bare"])  # fmt: skip
        async with live_chat(runner, memory_home) as engine:
            with pytest.raises(ClaudeBareNotLoggedIn) as caught:
                await run_turn(engine, "hello", key=KEY)
        assert standin.state.requests == []
    message = str(caught.value)
    assert "ran bare" in message and "(oauth_token)" in message and "\n" not in message
    await asyncio.sleep(0)
