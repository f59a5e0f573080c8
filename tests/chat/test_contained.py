"""Issue 11, class 5: whatever ``claude`` streams or however ``clawback chat`` is stopped, the
failure is contained: the turn is recorded with a note, nothing is orphaned, nothing is created
outside the chosen home, and transcripts belong to the home that holds them.

Streams that the real CLI would not print come from a scripted stand-in (``claude`` printing
the lines of a file); the rest uses the fake ``claude`` of ``tests/fake_claude``.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from clawback.core.home import Home

from tests.cli.test_chat import env_for
from tests.cli_runner import CLAWBACK, run_cli
from tests.fake_claude.fixtures import FAKE_CLAUDE, is_gone

INIT = {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-opus-5-5"}
LINGER = 30  # seconds the scripted claude may sleep after its last line


def _delta(text: str) -> str:
    return json.dumps(
        {"type": "stream_event",
         "event": {"type": "content_block_delta", "delta": {"type": "text_delta", "text": text}}}
    )  # fmt: skip


def _result(reply: str, usage: object = None) -> str:
    return json.dumps(
        {"type": "result", "subtype": "success", "is_error": False, "result": reply,
         "usage": usage or {"input_tokens": 3, "output_tokens": 2}}
    )  # fmt: skip


def scripted_claude(tmp_path: Path, lines: list[str | bytes], *, linger: float = 0) -> Path:
    """An executable that reads its stdin and prints ``lines`` (bytes as they are)."""
    data = tmp_path / "stream.bin"
    data.write_bytes(b"".join(x if isinstance(x, bytes) else x.encode() + b"\n" for x in lines))
    script = tmp_path / "claude"
    script.write_text(
        textwrap.dedent(f"""\
        #!{sys.executable}
        import sys, time
        sys.stdin.read()
        with open({str(data)!r}, "rb") as f:
            sys.stdout.buffer.write(f.read())
        sys.stdout.flush()
        time.sleep({linger})
        """)
    )
    script.chmod(0o755)
    return script


def chat_json(home: Path, claude: Path, message: str = "hello there") -> tuple[int, dict, str]:
    result = run_cli("chat", "--json", message, home=home, env={"CLAWBACK_CLAUDE": str(claude)})
    assert "Traceback" not in result.stderr, result.stderr
    return (
        result.returncode,
        json.loads(result.stdout) if result.stdout.strip() else {},
        result.stderr,
    )


def transcript_lines(home: Path) -> list[dict]:
    [path] = (home / "sessions").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_lone_surrogate_in_the_stream_is_replaced_not_fatal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    raw = '"cut \\ud83d here"'
    claude = scripted_claude(
        tmp_path,
        [json.dumps(INIT), _delta("cut ").replace('"cut "', raw), _result("x").replace('"x"', raw)],
    )
    code, out, _ = chat_json(home, claude)
    assert code == 0 and out["reply"] == "cut \ufffd here"
    assert transcript_lines(home)[-1]["content"] == "cut \ufffd here"


def test_deeply_nested_json_in_the_stream_is_ignored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    deep = '{"type":"assistant","message":' + "[" * 100_000 + "]" * 100_000 + "}"
    claude = scripted_claude(tmp_path, [json.dumps(INIT), _delta("fine"), deep, _result("fine")])
    code, out, _ = chat_json(home, claude)
    assert code == 0 and out["reply"] == "fine"


def test_absurd_usage_is_clamped_not_an_overflow(tmp_path: Path) -> None:
    home = tmp_path / "home"
    usage = {"input_tokens": 1e30, "output_tokens": 1e30, "cache_read_input_tokens": 10**40}
    claude = scripted_claude(tmp_path, [json.dumps(INIT), _delta("ok"), _result("ok", usage)])
    code, out, _ = chat_json(home, claude)
    assert code == 0 and out["reply"] == "ok"
    assert 0 < out["usage"]["input_tokens"] <= 2**53 and out["usage"]["total_tokens"] <= 2**55


def test_a_50_mb_line_without_newline_is_rejected_fast_and_noted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    claude = scripted_claude(tmp_path, [json.dumps(INIT), _delta("so far"), b"x" * (50 << 20)])
    started = time.monotonic()
    code, _out, err = chat_json(home, claude)
    assert time.monotonic() - started < 8  # 18 s before
    assert code != 0 and "without a newline" in err
    notes = [m for m in transcript_lines(home) if m.get("role") == "system"]
    assert notes and "claude call failed" in notes[-1]["content"]


def test_a_claude_that_lingers_after_its_result_costs_little(tmp_path: Path) -> None:
    home = tmp_path / "home"
    claude = scripted_claude(
        tmp_path, [json.dumps(INIT), _delta("done"), _result("done")], linger=LINGER
    )
    started = time.monotonic()
    code, out, _ = chat_json(home, claude)
    assert code == 0 and out["reply"] == "done"
    assert time.monotonic() - started < 4.5  # 10.5 s before


def test_nothing_is_created_outside_the_chosen_home(tmp_path: Path) -> None:
    home, user_home, tmp = tmp_path / "chosen", tmp_path / "user-home", tmp_path / "tmp"
    user_home.mkdir()
    tmp.mkdir()
    env = {"CLAWBACK_CLAUDE": str(FAKE_CLAUDE), "HOME": str(user_home), "TMPDIR": str(tmp),
           "CLAWBACK_HOME": None}  # fmt: skip
    result = run_cli("--home", str(home), "chat", "--json", "hi", env=env)
    assert result.returncode == 0, result.stderr
    assert list(user_home.iterdir()) == [] and list(tmp.iterdir()) == []
    assert (home / "claude-cwd").is_dir()
    assert (home / "claude-cwd").stat().st_mode & 0o777 == 0o700


def test_a_copied_home_writes_its_own_transcripts(tmp_path: Path) -> None:
    original, copy = tmp_path / "original", tmp_path / "copy"
    env = {"CLAWBACK_CLAUDE": str(FAKE_CLAUDE)}
    first = run_cli("chat", "--json", "first message", home=original, env=env)
    session_id = json.loads(first.stdout)["session_id"]
    shutil.copytree(original, copy)
    before = (original / "sessions" / f"{session_id}.jsonl").read_bytes()
    again = run_cli("chat", "--json", "--session", session_id, "in the copy", home=copy, env=env)
    assert again.returncode == 0, again.stderr
    assert (original / "sessions" / f"{session_id}.jsonl").read_bytes() == before
    assert "in the copy" in (copy / "sessions" / f"{session_id}.jsonl").read_text()
    assert json.loads(again.stdout)["transcript"] == str(
        (copy / "sessions" / f"{session_id}.jsonl").resolve()
    )


async def test_the_user_message_is_searchable_while_the_reply_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWBACK_CLAUDE", str(FAKE_CLAUDE))
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "slow")
    monkeypatch.setenv("FAKE_CLAUDE_DELAY", "0.05")
    monkeypatch.setenv("FAKE_CLAUDE_REPLY", "a slow answer " * 5)
    home = Home.open(tmp_path / "home")
    try:
        engine = home.chat_engine()
        found_while_streaming = None
        async for event in engine.turn("quixotic zeppelin question"):
            if found_while_streaming is None and type(event).__name__ == "ReplyDelta":
                found_while_streaming = home.db.execute(
                    "SELECT count(*) FROM entries WHERE text LIKE '%quixotic zeppelin%'"
                ).fetchone()[0]
        assert found_while_streaming == 1
    finally:
        home.close()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_claude_and_keep_the_partial(tmp_path: Path, sig: int) -> None:
    home = tmp_path / "home"
    log = home.parent / f"{home.name}-claude-calls.jsonl"
    proc = subprocess.Popen(
        [CLAWBACK, "chat", "tell me a long story"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env_for(home, mode="slow", reply="Once upon a time " * 40, delay="0.1"),
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.read(8)  # the reply has started streaming
    claude_pid = json.loads(log.read_text().splitlines()[-1])["pid"]
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err and err.strip().count("\n") == 0, err
    deadline = time.monotonic() + 5
    while not is_gone(claude_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert is_gone(claude_pid)  # no orphan
    stored = [m for m in transcript_lines(home) if m["type"] == "message"]
    assert stored[0]["content"] == "tell me a long story"
    assert stored[1]["role"] == "assistant" and stored[1]["partial"] is True


def test_a_long_system_prompt_file_stays_in_the_home(tmp_path: Path) -> None:
    """Over 100 KB the system prompt goes to a file: it must be made inside the home too."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    tmp.mkdir()
    (home).mkdir()
    (home / "config.toml").write_text(f'[chat]\nsystem_prompt = "{"x" * 120_000}"\n')
    log = tmp_path / "calls.jsonl"
    env = {"CLAWBACK_CLAUDE": str(FAKE_CLAUDE), "TMPDIR": str(tmp), "FAKE_CLAUDE_LOG": str(log)}
    result = run_cli("chat", "--json", "hi", home=home, env=env)
    assert result.returncode == 0, result.stderr
    assert list(tmp.iterdir()) == []
    assert not list((home / "claude-cwd").iterdir())  # made there, and removed after the call
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    prompt_file = calls[-1]["argv"][calls[-1]["argv"].index("--system-prompt-file") + 1]
    assert Path(prompt_file).parent == (home / "claude-cwd").resolve()


def test_a_message_that_is_not_utf8_is_sent_with_replacement_characters(tmp_path: Path) -> None:
    home = tmp_path / "home"
    undecodable = b"caf\xe9 ok".decode("utf-8", "surrogateescape")  # what argv gives Python
    result = run_cli(
        "chat", "--json", undecodable, home=home, env={"CLAWBACK_CLAUDE": str(FAKE_CLAUDE)}
    )
    assert result.returncode == 0, result.stderr
    assert transcript_lines(home)[1]["content"] == "caf\ufffd ok"
