"""A chat ready for ``claude -p`` going bare: an OAuth-only login under a bare call is one clear
line saying what happened and what to do, not a generic failure (the fake ``claude`` does what
the real 2.1.328 does: bare reads only ANTHROPIC_API_KEY, ``claude auth status`` never runs
bare)."""

from __future__ import annotations

import contextlib

import pytest
from clawback.core.chat.engine import ChatEngine
from clawback.core.claude.errors import ClaudeBareNotLoggedIn, ClaudeNotLoggedIn
from clawback.core.claude.live import LiveClaude
from clawback.core.home import Home

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FakeClaude,
    fake_claude_fixture,
    no_leftover_processes,
)
from tests.helpers import run_turn

SYSTEM = "You are clawback's test assistant."


async def test_a_bare_call_with_an_oauth_login_says_it_ran_bare(
    fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake_claude.set_env("FAKE_CLAUDE_AUTH", "oauth")
    assert (await fake_claude.runner().run("hi", system_prompt=SYSTEM)).reply == "ECHO: hi"
    with pytest.raises(ClaudeBareNotLoggedIn) as caught:
        await fake_claude.runner(extra_args=["--bare"]).run("hi", system_prompt=SYSTEM)
    message = str(caught.value)
    assert "ran bare" in message and "(claude.ai)" in message and "ANTHROPIC_API_KEY" in message
    assert "\n" not in message


async def test_a_live_process_says_the_same(
    fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake_claude.set_env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test")
    live = LiveClaude(fake_claude.runner(extra_args=["--bare"]), system_prompt=SYSTEM)
    await live.start()
    try:
        with pytest.raises(ClaudeBareNotLoggedIn, match=r"\(oauth_token\)"):
            async with contextlib.aclosing(live.turn("hi")) as turn:
                async for _ in turn:
                    pass
    finally:
        await live.close()


async def test_no_login_at_all_is_the_plain_not_logged_in(
    fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake_claude.mode("nokey")
    with pytest.raises(ClaudeNotLoggedIn) as caught:
        await fake_claude.runner().run("hi", system_prompt=SYSTEM)
    assert type(caught.value) is ClaudeNotLoggedIn and "claude /login" in str(caught.value)


async def test_a_chat_turn_keeps_the_message_and_notes_the_one_line(
    home: Home, fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake_claude.set_env("FAKE_CLAUDE_AUTH", "oauth")
    runner = fake_claude.runner(extra_args=["--bare"])
    engine: ChatEngine = home.chat_engine(runner=runner, live=True)
    try:
        with pytest.raises(ClaudeBareNotLoggedIn):
            await run_turn(engine, "remember the zucchini", key="local:alice")
    finally:
        await engine.aclose()
    session = engine.store.current("local:alice")
    assert session is not None
    lines = session.transcript_path.read_text()
    assert "remember the zucchini" in lines and "claude ran bare" in lines
