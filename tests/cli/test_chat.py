"""``clawback chat`` as a user runs it: a temporary home, the fake claude.

Calls run in-process (:func:`tests.cli_runner.run_cli`); Ctrl-C and SIGTERM need a real
``clawback`` process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import CLAWBACK, run_cli
from tests.fake_claude.fixtures import FAKE_CLAUDE, FAKE_ENV_VARS
from tests.helpers import cc_assistant, cc_user, write_lines

KEY = "local:alice"


def fake_env(home: Path, **fake: str) -> dict[str, str]:
    """The variables that point clawback at the fake claude (and pick its mode, reply, ...)."""
    env = {
        "CLAWBACK_HOME": str(home),
        "CLAWBACK_CLAUDE": str(FAKE_CLAUDE),
        "FAKE_CLAUDE_LOG": str(home.parent / f"{home.name}-claude-calls.jsonl"),
    }
    env.update({f"FAKE_CLAUDE_{k.upper()}": v for k, v in fake.items()})
    return env


def env_for(home: Path, **fake: str) -> dict[str, str]:
    """A whole environment for a real ``clawback`` process."""
    env = {k: v for k, v in os.environ.items() if k not in FAKE_ENV_VARS}
    return {**env, **fake_env(home, **fake)}


def run(
    *args: str, home: Path, stdin: str | None = None, env: dict[str, str] | None = None, **fake: str
) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, input=stdin, env={**fake_env(home, **fake), **(env or {})})


def calls(home: Path) -> list[dict[str, Any]]:
    log = home.parent / f"{home.name}-claude-calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def transcript(home: Path) -> list[dict[str, Any]]:
    (path,) = sorted((home / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)[-1:]
    return [json.loads(line) for line in path.read_text().splitlines()]


def chat_messages(home: Path) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in transcript(home) if m["type"] == "message"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_a_conversation_is_listed_and_searchable(home: Path) -> None:
    result = run("chat", "--session", KEY, "which tomato did we plant?", home=home,
                 reply="We planted Black Krim.")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == "We planted Black Krim.\n"
    result = run("chat", "--session", KEY, "and the peppers?", home=home, reply="Padrón.")
    assert result.returncode == 0 and result.stdout == "Padrón.\n"
    assert "which tomato did we plant?" in calls(home)[-1]["stdin"]  # multi-turn
    sessions = json.loads(run("sessions", "--json", home=home).stdout)
    assert [(s["source"], s["message_count"], s["key"]) for s in sessions] == [("native", 4, KEY)]
    hits = json.loads(run("search", "Padrón", "--json", home=home).stdout)
    assert hits and hits[0]["source"] == "native" and hits[0]["role"] == "assistant"
    assert (home / "sessions").stat().st_mode & 0o777 == 0o700
    for path in (home / "sessions").glob("*.jsonl"):
        assert path.stat().st_mode & 0o777 == 0o600


def test_message_from_stdin_and_default_key(home: Path) -> None:
    result = run("chat", "--json", home=home, stdin="a question from a pipe\n", reply="ok")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["session_key"].startswith("local:")
    assert calls(home)[-1]["stdin"] == "a question from a pipe\n"


def test_json_output(home: Path) -> None:
    result = run("chat", "--session", KEY, "--json", "hello", home=home, reply="Hi!",
                 usage='{"input": 10, "output": 3, "cache_read": 100, "cache_write": 5}')  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    for key in ("session_id", "session_key", "reply", "usage", "is_error"):
        assert key in data
    assert data["reply"] == "Hi!" and data["is_error"] is False and data["session_key"] == KEY
    assert data["usage"]["total_tokens"] == 115 and data["usage"]["output_tokens"] == 3
    assert (home / "sessions" / f"{data['session_id']}.jsonl").exists()


def test_dry_run_prints_exactly_what_is_sent_and_writes_nothing(home: Path) -> None:
    assert run("chat", "--session", KEY, "first", home=home, reply="one").returncode == 0
    before = transcript(home)
    dry = run("chat", "--session", KEY, "--dry-run", "second", home=home)
    assert dry.returncode == 0, dry.stderr
    assert transcript(home) == before and len(calls(home)) == 1
    assert "=== system prompt (--system-prompt) ===" in dry.stdout
    as_json = json.loads(run("chat", "--session", KEY, "--dry-run", "--json", "second",
                             home=home).stdout)  # fmt: skip
    assert run("chat", "--session", KEY, "second", home=home, reply="two").returncode == 0
    sent = calls(home)[-1]
    assert sent["stdin"] == as_json["prompt"]
    assert sent["argv"] == as_json["argv"][1:]
    assert dry.stdout.endswith("=== prompt (stdin) ===\n" + sent["stdin"] + "\n")


def test_new_and_model(home: Path) -> None:
    first = json.loads(run("chat", "--session", KEY, "--json", "hi", home=home).stdout)
    second = run("chat", "--session", KEY, "--new", "--model", "haiku", "--json", "hi", home=home)
    data = json.loads(second.stdout)
    assert data["session_id"] != first["session_id"] and data["new_session"]
    argv = calls(home)[-1]["argv"]
    assert argv[argv.index("--model") + 1] == "haiku"
    third = json.loads(run("chat", "--session", KEY, "--json", "/new opus go", home=home).stdout)
    assert third["session_id"] != data["session_id"] and third["model"] == "claude-opus-5-5"
    assert calls(home)[-1]["stdin"] == "go"


def test_label_from_the_command_line(home: Path) -> None:
    run("chat", "--session", KEY, "hello", home=home)
    result = run("chat", "--session", KEY, "/label Seed order", home=home)
    assert result.returncode == 0 and "Seed order" in result.stderr
    sessions = json.loads(run("sessions", "--json", "--filter", "seed order", home=home).stdout)
    assert sessions[0]["label"] == "Seed order"


@pytest.mark.parametrize(
    ("mode", "words"),
    [("err429", "rate-limiting"), ("nokey", "not logged in"), ("killed", "killed")],
)
def test_errors_are_one_line_and_keep_the_message(home: Path, mode: str, words: str) -> None:
    result = run("chat", "--session", KEY, "keep this message", home=home, mode=mode,
                 reply="x" * 200)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert words in result.stderr.lower() and "Traceback" not in result.stderr
    assert "saved in session" in result.stderr
    assert chat_messages(home)[0] == ("user", "keep this message")


def test_json_error_still_prints_the_object(home: Path) -> None:
    result = run("chat", "--session", KEY, "--json", "hi", home=home, mode="err529")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["is_error"] is True and "overloaded" in data["error"]


def test_claude_missing_says_how_to_install(home: Path, tmp_path: Path) -> None:
    result = run("chat", "--session", KEY, "hello?", home=home,
                 env={"CLAWBACK_CLAUDE": str(tmp_path / "nope" / "claude")})  # fmt: skip
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "npm install -g @anthropic-ai/claude-code" in result.stderr
    stored = chat_messages(home)
    assert stored[0] == ("user", "hello?") and stored[1][0] == "system"


def test_empty_message_and_bad_key(home: Path) -> None:
    result = run("chat", home=home, stdin="   \n")
    assert result.returncode == 2 and "Nothing to send" in result.stderr
    result = run("chat", "--session", "bad:key:thread", "hi", home=home)
    assert result.returncode == 2 and result.stderr.count("\n") == 1


def test_continue_a_claude_code_session(home: Path, tmp_path: Path) -> None:
    sid = "0b8c1f9e-1111-4222-8333-944455556666"
    src = tmp_path / "cc"
    write_lines(src / "proj" / f"{sid}.jsonl", [
        cc_user(sid, "u1", "the deploy key lives in the vault"),
        cc_assistant(sid, "a1", [{"type": "text", "text": "Noted, the vault."}]),
    ])  # fmt: skip
    assert run("ingest", str(src), "--source", "claude-code", home=home).returncode == 0
    dry = run("chat", "--session", sid, "--dry-run", "where is the deploy key?", home=home)
    assert dry.returncode == 0, dry.stderr
    assert "the deploy key lives in the vault" in dry.stdout
    assert not list((home / "sessions").glob("*.jsonl"))  # the dry run forked nothing
    first = run("chat", "--session", sid[:8], "--json", "where is the deploy key?", home=home)
    assert first.returncode == 0, first.stderr
    assert "the deploy key lives in the vault" in calls(home)[-1]["stdin"]
    second = run("chat", "--session", sid[:8], "--json", "thanks", home=home)
    assert json.loads(second.stdout)["session_id"] == json.loads(first.stdout)["session_id"]


def test_ctrl_c_keeps_the_partial_reply(home: Path) -> None:
    proc = subprocess.Popen(
        [CLAWBACK, "chat", "--session", KEY, "tell me a long story"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_for(home, mode="slow", reply="Once upon a time " * 20, delay="0.1"),
    )
    assert proc.stdout is not None
    first = proc.stdout.read(8)  # the reply has started streaming
    assert first
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "cancelled" in err.lower() and err.count("\n") == 1
    stored = [m for m in transcript(home) if m["type"] == "message"]
    assert stored[0]["content"] == "tell me a long story"
    assert stored[1]["role"] == "assistant" and stored[1]["partial"] is True
    assert (first + out).strip().startswith(stored[1]["content"].strip()[:20])


def test_slash_help_lists_the_commands_and_sends_nothing(home: Path) -> None:
    """Issue 22: ``clawback chat "/help"`` sent "/help" to Claude."""
    result = run("chat", "/help", home=home)
    assert result.returncode == 0, result.stderr
    assert "/new [model] [text]" in result.stdout and "/label TEXT" in result.stdout
    assert "clawback flush SESSION" in result.stdout  # the app's commands, as they are here
    typo = run("chat", "/helo there", home=home)
    assert typo.returncode != 0 and "unknown command /helo" in typo.stderr
    app_only = run("chat", "/compact", home=home)
    assert app_only.returncode != 0 and "clawback compact SESSION" in app_only.stderr
    assert calls(home) == []
    assert run("chat", "/usr/bin is on PATH?", home=home).returncode == 0  # a path is a message
    assert len(calls(home)) == 1
