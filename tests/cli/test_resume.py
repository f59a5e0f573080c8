"""`clawback resume` becomes `claude --resume <id>` in the session's folder (checked through the
fake claude's call log), and refuses with a message that says what to do instead."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
from pathlib import Path

import pytest

from ..cli_runner import CLAWBACK
from ..cli_runner import run_cli as run
from ..fake_claude.fixtures import FAKE_CLAUDE
from ..helpers import cc_user, write_lines
from .claude_code_world import SID, calls, resume


def test_resume_runs_claude_resume_in_the_sessions_folder(world: dict[str, Path]) -> None:
    result = resume(world, SID[:8])
    assert result.returncode == 0, result.stderr
    [call] = calls(world)
    assert call["argv"] == [f"--resume={SID}"]
    assert call["cwd"] == str(world["project"])
    assert call["pid"] != os.getpid()


def test_resume_from_here_when_the_folder_is_gone(world: dict[str, Path], tmp_path: Path) -> None:
    shutil.rmtree(world["project"])
    refused = resume(world, SID[:8])
    assert refused.returncode != 0 and not calls(world)
    assert refused.stderr.count("\n") == 1
    assert f"ran in {world['project']}, which no longer exists" in refused.stderr
    assert f"clawback resume {SID[:8]} --here" in refused.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = resume(world, SID[:8], "--here", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    [call] = calls(world)
    assert call["argv"] == [f"--resume={SID}"] and call["cwd"] == str(elsewhere)


def test_resume_when_claude_is_missing(world: dict[str, Path], tmp_path: Path) -> None:
    result = resume(world, SID, claude=str(tmp_path / "no-claude"))
    assert result.returncode == 1
    assert "Claude Code is not installed or not on PATH" in result.stderr
    assert "Traceback" not in result.stderr


def test_resume_a_deleted_transcript_points_to_restore(world: dict[str, Path]) -> None:
    world["transcript"].unlink()
    result = run("resume", SID, home=world["home"])
    assert result.returncode != 0 and result.stderr.count("\n") == 1
    assert "is gone" in result.stderr
    assert f"`clawback restore {SID[:8]}` writes it back" in result.stderr


def test_resume_refuses_sessions_claude_code_does_not_know(tmp_path: Path) -> None:
    home = tmp_path / "demo"
    assert run("demo", "--ingest-only", home=home).returncode == 0
    listed = json.loads(run("sessions", "--json", home=home / "demo").stdout)
    by_source = {row["source"]: row["id"] for row in listed}
    native = run("resume", by_source["native"], home=home / "demo")
    assert native.returncode != 0 and native.stderr.count("\n") == 1
    assert "is a clawback chat, not a Claude Code session" in native.stderr
    assert "clawback chat --session" in native.stderr
    openclaw = run("resume", by_source["openclaw"], home=home / "demo")
    assert "is an OpenClaw session: Claude Code cannot resume it" in openclaw.stderr
    unknown = run("resume", "nosuchsession", home=home / "demo")
    assert unknown.returncode != 0 and "no session 'nosuchsession'" in unknown.stderr


def test_on_a_terminal_resume_offers_the_current_folder(
    world: dict[str, Path], tmp_path: Path
) -> None:
    shutil.rmtree(world["project"])
    here = tmp_path / "here"
    here.mkdir()
    leader, follower = pty.openpty()
    env = {
        **os.environ,
        "CLAWBACK_HOME": str(world["home"]),
        "HOME": str(world["user"]),
        "CLAWBACK_CLAUDE": str(FAKE_CLAUDE),
        "FAKE_CLAUDE_LOG": str(world["log"]),
    }
    proc = subprocess.Popen(
        [CLAWBACK, "resume", SID[:8]],
        env=env,
        cwd=here,
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    seen = b""
    try:
        while b"[y/N]" not in seen:
            ready, _, _ = select.select([leader], [], [], 30)
            assert ready, f"no question asked: {seen!r}"
            seen += os.read(leader, 4096)
        assert b"which no longer exists" in seen and str(here).encode() in seen
        os.write(leader, b"y\n")
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        os.close(leader)
    [call] = calls(world)
    assert call["argv"] == [f"--resume={SID}"] and call["cwd"] == str(here)


@pytest.mark.parametrize("bad_id", ["--dangerously-skip-permissions", "my session title"])
def test_a_session_id_never_reaches_claude_as_an_option(
    world: dict[str, Path], bad_id: str
) -> None:
    """Issue 31 item 11: a transcript's sessionId ``--dangerously-skip-permissions`` became
    ``claude --resume --dangerously-skip-permissions``. Only Claude Code's own ids (UUIDs) are
    resumed, and always as one word, ``--resume=<id>``; anything else would be read as an
    option, or as a session title naming some other session."""
    folder = world["transcript"].parent
    line = cc_user(bad_id, "x1", "a session with a hostile id")
    line["cwd"] = str(world["project"])
    write_lines(folder / "hostile.jsonl", [line])
    assert run("ingest", home=world["home"]).returncode == 0
    refused = resume(world, "--", bad_id)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert "has no Claude Code session id" in refused.stderr
    assert calls(world) == []
