"""``clawback chat`` without a MESSAGE on a terminal: a REPL that keeps one conversation open.

Each test runs the installed ``clawback`` on a pseudo-terminal with the fake ``claude`` (real
processes), types as a person does and reads what the terminal shows.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawback.core.chat.transcript import Transcript
from clawback.core.config import update_setting
from clawback.core.paths import Paths

from tests.fake_claude.fixtures import FAKE_CLAUDE, FAKE_ENV_VARS, is_gone
from tests.terminal import CTRL_C, CTRL_D, Terminal

CLAWBACK = str(Path(sys.executable).with_name("clawback"))
PROMPT = "› "
pytestmark = pytest.mark.slow


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    base = {k: v for k, v in os.environ.items() if k not in FAKE_ENV_VARS}
    return {**base, "HOME": str(home), "CLAWBACK_HOME": str(tmp_path / "clawback"),
            "CLAWBACK_CLAUDE": str(FAKE_CLAUDE), "FAKE_CLAUDE_LOG": str(tmp_path / "calls.jsonl"),
            "CLAWBACK_WARM": "0", "TERM": "xterm"}  # fmt: skip


@pytest.fixture
def repl(env: dict[str, str]) -> Iterator[Terminal]:
    with Terminal([CLAWBACK, "chat"], env) as terminal:
        terminal.expect(PROMPT)
        yield terminal


def calls(env: dict[str, str]) -> list[dict[str, Any]]:
    log = Path(env["FAKE_CLAUDE_LOG"])
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def transcript_messages(env: dict[str, str]) -> list[tuple[str, str, bool]]:
    [path] = (Path(env["CLAWBACK_HOME"]) / "sessions").glob("*.jsonl")
    return [(m.role, m.content, m.partial) for m in Transcript(path).read().messages]


def gone_soon(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not is_gone(pid):
        time.sleep(0.05)
    return is_gone(pid)


def test_turns_stream_into_one_process_and_ctrl_d_leaves_none(
    repl: Terminal, env: dict[str, str]
) -> None:
    repl.line("which tomato did we plant?")
    shown = repl.expect(PROMPT)
    assert "ECHO: which tomato did we plant?" in shown
    assert "turn: " in shown and "cache read" in shown and "session: 1 turn" in shown
    repl.line("when does it ripen?")
    shown = repl.expect(PROMPT)
    assert "ECHO: <current-message>\nwhen does it ripen?" in shown and "session: 2 turns" in shown
    made = calls(env)
    assert [c["turn"] for c in made] == [1, 2] and made[0]["pid"] == made[1]["pid"]
    repl.send(CTRL_D)
    assert repl.wait() == 0
    assert gone_soon(made[0]["pid"])
    assert [m[0] for m in transcript_messages(env)] == ["user", "assistant"] * 2


def test_ctrl_c_stops_a_reply_keeps_it_and_the_conversation_goes_on(
    env: dict[str, str],
) -> None:
    env = {**env, "FAKE_CLAUDE_MODE": "slow", "FAKE_CLAUDE_DELAY": "0.1"}
    with Terminal([CLAWBACK, "chat"], env) as repl:
        repl.expect(PROMPT)
        repl.line("tell me slowly about the greenhouse and the bees behind it")
        repl.expect("ECHO: tell")
        repl.send(CTRL_C)
        assert "Stopped; what came of the reply is kept." in repl.expect(PROMPT)
        repl.line("and then?")
        assert "ECHO: <current-message>\nand then?" in repl.expect(PROMPT, 40)
        made = calls(env)
        assert made[0]["pid"] == made[1]["pid"]  # the interrupt landed: the process goes on
        stored = transcript_messages(env)
        assert stored[1][0] == "assistant" and stored[1][2] is True  # kept, marked partial
        assert stored[1][1].startswith("ECHO: tell")
        repl.send(CTRL_D)
        assert repl.wait() == 0


def test_ctrl_c_at_the_prompt_clears_the_line(repl: Terminal, env: dict[str, str]) -> None:
    repl.send("half a thought")
    repl.expect("half a thought")
    repl.wait_until_reading()
    repl.send(CTRL_C)
    repl.expect(PROMPT)
    repl.line("a whole one")
    assert "ECHO: a whole one" in repl.expect(PROMPT)
    assert [c["stdin"] for c in calls(env)] == ["a whole one"]
    repl.send(CTRL_D)
    assert repl.wait() == 0


def test_new_starts_another_session_and_process(repl: Terminal, env: dict[str, str]) -> None:
    repl.line("hello")
    repl.expect(PROMPT)
    repl.line("/new sonnet a fresh start")
    shown = repl.expect(PROMPT)
    assert "New session" in shown and "ECHO: a fresh start" in shown
    first, second = calls(env)
    assert first["pid"] != second["pid"] and second["turn"] == 1
    assert second["argv"][second["argv"].index("--model") + 1] == "sonnet"
    assert gone_soon(first["pid"])  # a key keeps one live process
    repl.send(CTRL_D)
    assert repl.wait() == 0


def test_a_failed_turn_puts_the_message_back_and_enter_retries_it_once(
    env: dict[str, str],
) -> None:
    env = {**env, "FAKE_CLAUDE_TURN_MODES": "success,err529"}
    with Terminal([CLAWBACK, "chat"], env) as repl:
        repl.expect(PROMPT)
        repl.line("hello")
        repl.expect(PROMPT)
        repl.line("when does it ripen?")
        shown = repl.expect(PROMPT)
        assert "overloaded" in shown and "back at the prompt" in shown
        repl.expect("when does it ripen?")  # offered again, ready to send
        repl.send("\r")
        assert "ECHO: " in repl.expect(PROMPT, 40)
        made = calls(env)
        assert made[2]["pid"] != made[1]["pid"]  # the failed process is not reused
        assert made[2]["stdin"].count("when does it ripen?") == 1
        users = [m[1] for m in transcript_messages(env) if m[0] == "user"]
        assert users == ["hello", "when does it ripen?"]
        repl.send(CTRL_D)
        assert repl.wait() == 0


def test_flush_rides_the_conversation_and_asks_before_writing(
    env: dict[str, str],
) -> None:
    env = {**env, "FAKE_CLAUDE_REPLY": "- The bees live behind the greenhouse."}
    with Terminal([CLAWBACK, "chat"], env) as repl:
        repl.expect(PROMPT)
        repl.line("the bees live behind the greenhouse")
        repl.expect(PROMPT)
        repl.line("/flush")
        assert "Proposed notes" in repl.expect("Append these notes to")
        repl.line("y")
        assert "Saved to" in repl.expect(PROMPT)
        made = calls(env)
        assert made[1]["pid"] == made[0]["pid"] and made[1]["stdin"].startswith("<memory-flush>")
        notes = list((Path(env["CLAWBACK_HOME"]) / "workspace" / "memory").glob("*.md"))
        assert len(notes) == 1 and "The bees live" in notes[0].read_text()
        assert len(transcript_messages(env)) == 2  # the flush is no chat turn
        repl.send(CTRL_D)
        assert repl.wait() == 0


def test_compact_then_the_next_turn_starts_from_the_summary(env: dict[str, str]) -> None:
    update_setting(Paths.resolve(env["CLAWBACK_HOME"]), "chat.keep_messages", 2)
    with Terminal([CLAWBACK, "chat"], env) as repl:
        repl.expect(PROMPT)
        for text in ("one", "two", "three"):
            repl.line(text)
            repl.expect(PROMPT)
        repl.line("/compact")
        assert "Summary:" in repl.expect("Replace those messages with this summary?")
        repl.line("y")
        assert "Compacted: 4 message(s)" in repl.expect(PROMPT)
        repl.line("four")
        repl.expect(PROMPT)
        last = calls(env)[-1]
        assert last["turn"] == 1 and last["stdin"].startswith("<conversation-summary>")
        repl.send(CTRL_D)
        assert repl.wait() == 0


def test_a_killed_repl_leaves_no_claude(env: dict[str, str]) -> None:
    env = {**env, "FAKE_CLAUDE_MODE": "stall", "FAKE_CLAUDE_SPAWN_CHILD": "1"}
    with Terminal([CLAWBACK, "chat"], env) as repl:
        repl.expect(PROMPT)
        repl.line("a reply that never ends")
        repl.expect("ECHO")
        [call] = calls(env)
        os.kill(repl.proc.pid, signal.SIGKILL)
        repl.wait()
        assert gone_soon(call["pid"]) and gone_soon(call["child_pid"])


def test_piped_stdin_is_still_one_turn(env: dict[str, str]) -> None:
    import subprocess

    done = subprocess.run([CLAWBACK, "chat"], input=b"just this", capture_output=True, env=env,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stdout.decode() == "ECHO: just this\n"
    [call] = calls(env)
    assert "turn" not in call and "--input-format" not in call["argv"]  # a one-shot process
