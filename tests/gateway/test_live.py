"""A real ``clawback gateway telegram`` answers a chat's messages through one live ``claude``
process (the fake one, real processes), which ends with the gateway, a turn in flight or not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fake_claude.fixtures import is_gone

from .telegram_standin import TelegramStandin
from .test_kill import (  # noqa: F401
    ALICE,
    _calls,
    _home,
    _kill_claude_children,
    _start,
    _stop,
    _wait,
    standin,
)

pytestmark = pytest.mark.slow


def test_a_chats_messages_go_to_one_process_that_ends_with_the_gateway(
    tmp_path: Path,
    standin: TelegramStandin,  # noqa: F811
) -> None:
    home = _home(tmp_path, standin)
    proc = _start(home, tmp_path, FAKE_CLAUDE_SPAWN_CHILD="1")
    try:
        standin.push("what did we decide about the roof?", chat_id=ALICE, user_id=ALICE)
        standin.wait_for(1, timeout=30)
        standin.push("and when?", chat_id=ALICE, user_id=ALICE)
        texts = standin.wait_for(2, timeout=30)
    finally:
        _stop(proc)
        calls = _calls(tmp_path)
    try:
        assert [call["turn"] for call in calls] == [1, 2]
        assert calls[0]["pid"] == calls[1]["pid"]
        assert str(calls[1]["stdin"]).endswith("<current-message>\nand when?\n</current-message>")
        assert "and when?" in texts[1]
        deadline = time.monotonic() + 10
        pid, child = calls[0]["pid"], calls[0]["child_pid"]
        assert isinstance(pid, int) and isinstance(child, int)
        while time.monotonic() < deadline and not (is_gone(pid) and is_gone(child)):
            time.sleep(0.05)
        assert is_gone(pid) and is_gone(child)
    finally:
        _kill_claude_children(tmp_path)


def test_sigterm_during_a_turn_ends_the_gateway_and_its_claude_and_keeps_the_message(
    tmp_path: Path,
    standin: TelegramStandin,  # noqa: F811
) -> None:
    home = _home(tmp_path, standin)
    proc = _start(home, tmp_path, FAKE_CLAUDE_MODE="hang", FAKE_CLAUDE_SPAWN_CHILD="1")
    try:
        standin.push("what did we decide about the roof?", chat_id=ALICE, user_id=ALICE)
        _wait(lambda: len(_calls(tmp_path)) == 1)  # the turn runs on the engine's thread
        _stop(proc)  # exit 0 within the timeout: the turn was cancelled, not awaited
        calls = _calls(tmp_path)
        pid, child = calls[0]["pid"], calls[0]["child_pid"]
        assert isinstance(pid, int) and isinstance(child, int)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (is_gone(pid) and is_gone(child)):
            time.sleep(0.05)
        assert is_gone(pid) and is_gone(child)
        inbox = (home / "gateway" / "telegram" / "inbox.jsonl").read_text()
        assert "roof" in inbox and '"op": "done"' not in inbox  # kept: answered on restart
        assert standin.sent == []
    finally:
        _kill_claude_children(tmp_path)
