"""A real ``clawback gateway telegram`` process killed with SIGKILL between storing a message and
answering it: the next start answers it exactly once, and SIGTERM stops it cleanly."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w
from clawback.core.archive.sessions import list_sessions, session_messages
from clawback.core.home import Home

from tests.fake_claude.fixtures import FAKE_CLAUDE, FAKE_ENV_VARS

from .telegram_standin import TOKEN, TelegramStandin, running_standin

pytestmark = pytest.mark.slow

ALICE = 42


@pytest.fixture
def standin() -> Iterator[TelegramStandin]:
    with running_standin() as running:
        yield running


def _home(tmp_path: Path, standin: TelegramStandin) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    config = {
        "sources": {
            "claude_code_path": str(tmp_path / "cc"),
            "openclaw_path": str(tmp_path / "oc"),
        },
        "embeddings": {"model": "none"},
        "telegram": {
            "api_base": standin.url,
            "allow": [str(ALICE)],
            "debounce_ms": 0,
            "poll_timeout_s": 1,
        },
    }
    (home / "config.toml").write_text(tomli_w.dumps(config))
    return home


def _start(home: Path, tmp_path: Path, **fake: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in FAKE_ENV_VARS}
    env.update(
        CLAWBACK_HOME=str(home),
        HOME=str(tmp_path),
        CLAWBACK_CLAUDE=str(FAKE_CLAUDE),
        TELEGRAM_BOT_TOKEN=TOKEN,
        FAKE_CLAUDE_LOG=str(tmp_path / "claude-calls.jsonl"),
        **fake,
    )
    return subprocess.Popen(
        [sys.executable, "-m", "clawback", "gateway", "telegram"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait(condition: object, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def _calls(tmp_path: Path) -> list[dict[str, object]]:
    log = tmp_path / "claude-calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _kill_claude_children(tmp_path: Path) -> None:
    for call in _calls(tmp_path):
        pid = call.get("pid")
        if isinstance(pid, int):
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return out, err


def _user_and_replies(home: Path) -> tuple[list[str], list[str]]:
    opened = Home.open(home)
    try:
        opened.ingest_all()
        session = next(s for s in list_sessions(opened.db) if s.key == "agent:main:main")
        messages = session_messages(opened.db, session.id)
        users = [m.text for m in messages if m.role == "user"]
        replies = [m.text for m in messages if m.role == "assistant" and not m.partial]
        return users, replies
    finally:
        opened.close()


def test_a_message_stored_but_not_answered_is_answered_once_after_kill_9(
    tmp_path: Path, standin: TelegramStandin
) -> None:
    home = _home(tmp_path, standin)
    proc = _start(home, tmp_path, FAKE_CLAUDE_MODE="hang")
    try:
        standin.push("what did we decide about the roof?", chat_id=ALICE, user_id=ALICE)
        _wait(lambda: len(_calls(tmp_path)) == 1)  # stored, and claude is thinking
        inbox = (home / "gateway" / "telegram" / "inbox.jsonl").read_text()
        assert '"op": "accept"' in inbox and "roof" in inbox
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        _kill_claude_children(tmp_path)
    assert standin.sent == []
    restarted = _start(home, tmp_path, FAKE_CLAUDE_REPLY="We chose slate.")
    try:
        texts = standin.wait_for(1, timeout=30)
        time.sleep(1.5)  # a second answer, if there were one, would come now
    finally:
        out, _ = _stop(restarted)
    assert texts == ["We chose slate."]
    assert "Answering 1 message(s)" in out
    users, replies = _user_and_replies(home)
    assert users == ["what did we decide about the roof?"]  # stored once, not twice
    assert replies == ["We chose slate."]
    # the update was not delivered again: the offset had moved past it before the kill
    assert len(_calls(tmp_path)) == 2


def test_a_reply_stored_but_not_sent_is_sent_after_kill_9_without_a_second_turn(
    tmp_path: Path, standin: TelegramStandin
) -> None:
    home = _home(tmp_path, standin)
    standin.rate_limited, standin.retry_after = 10_000, 30  # Telegram refuses every send
    proc = _start(home, tmp_path, FAKE_CLAUDE_REPLY="Slate, in March.")
    try:
        standin.push("roof?", chat_id=ALICE, user_id=ALICE)
        inbox = home / "gateway" / "telegram" / "inbox.jsonl"
        _wait(lambda: inbox.exists() and '"op": "replied"' in inbox.read_text())
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    standin.rate_limited = 0
    restarted = _start(home, tmp_path)
    try:
        texts = standin.wait_for(1, timeout=30)
        time.sleep(1.0)
    finally:
        _stop(restarted)
    assert texts == ["Slate, in March."]
    assert len(_calls(tmp_path)) == 1  # claude ran once, before the kill
