"""`clawback resume` becomes `claude --resume <id>` in the session's folder (checked through the
fake claude's call log), refuses with a message that says what to do instead, and `clawback
restore` / `sessions --deleted` bring back what Claude Code deleted."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
from pathlib import Path

import pytest
from clawback.core.archive.restore import project_folder

from ..cli_runner import CLAWBACK
from ..cli_runner import run_cli as run
from ..fake_claude.fixtures import FAKE_CLAUDE
from ..helpers import cc_assistant, cc_user, write_lines

SID = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
SECRET = "sk-ant-api03-" + "Zq8xWm3Kd9Lp2Rt7Vb4Nc6Hy1Js5Gf0" * 2


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A user's HOME with a Claude Code session whose working folder exists, and a clawback
    home configured to read that HOME's Claude Code projects."""
    user = tmp_path / "user"
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    projects = user / ".claude" / "projects"
    folder = projects / project_folder(str(project))
    lines = [
        cc_user(SID, "u1", "where does the cache live"),
        cc_assistant(SID, "a1", [{"type": "text", "text": f"in redis, key {SECRET}"}]),
    ]
    for line in lines:
        line["cwd"] = str(project)
    write_lines(folder / f"{SID}.jsonl", lines)
    home = tmp_path / "clawback"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    assert run("ingest", home=home).returncode == 0
    return {
        "home": home,
        "user": user,
        "project": project,
        "transcript": folder / f"{SID}.jsonl",
        "log": tmp_path / "claude-calls.jsonl",
    }


def resume(world: dict[str, Path], *args: str, cwd: Path | None = None, claude: str | None = None):  # type: ignore[no-untyped-def]
    """``clawback resume ARGS`` in a real process: it replaces itself with claude."""
    env = {
        **os.environ,
        "CLAWBACK_HOME": str(world["home"]),
        "HOME": str(world["user"]),
        "CLAWBACK_CLAUDE": claude or str(FAKE_CLAUDE),
        "FAKE_CLAUDE_LOG": str(world["log"]),
    }
    return subprocess.run(
        [CLAWBACK, "resume", *args],
        env=env,
        cwd=cwd or world["home"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def calls(world: dict[str, Path]) -> list[dict[str, object]]:
    if not world["log"].exists():
        return []
    return [json.loads(line) for line in world["log"].read_text().splitlines()]


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


def test_restore_after_claude_code_deleted_the_session(world: dict[str, Path]) -> None:
    original = world["transcript"].read_bytes()
    world["transcript"].unlink()
    assert run("ingest", home=world["home"]).returncode == 0
    deleted = run("sessions", "--deleted", home=world["home"])
    assert deleted.stdout.startswith(SID[:8]) and "(source deleted)" in deleted.stdout
    assert "clawback restore ID" in deleted.stderr
    result = run("restore", SID[:8], home=world["home"])
    assert result.returncode == 0, result.stderr
    assert f"wrote {world['transcript']} (2 lines)" in result.stdout
    assert "Secrets were masked in this copy" in result.stderr and "[masked]" in result.stderr
    assert f"clawback resume {SID[:8]}" in result.stdout
    restored = world["transcript"].read_bytes().splitlines()
    assert restored[0] == original.splitlines()[0] and SECRET not in restored[1].decode()
    assert run("sessions", "--deleted", home=world["home"]).stdout == ""
    # Resumable again.
    assert resume(world, SID[:8]).returncode == 0


def test_restore_refuses_to_overwrite_and_force_keeps_a_backup(world: dict[str, Path]) -> None:
    world["transcript"].unlink()
    assert run("ingest", home=world["home"]).returncode == 0
    world["transcript"].write_text("something new\n")
    refused = run("restore", SID, home=world["home"])
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert "already exists; nothing was written (--force" in refused.stderr
    assert world["transcript"].read_text() == "something new\n"
    forced = run("restore", SID, "--force", home=world["home"])
    assert forced.returncode == 0, forced.stderr
    [backup] = world["transcript"].parent.glob(f"{SID}.jsonl.clawback-backup-*")
    assert backup.read_text() == "something new\n"
    assert f"now {backup}" in forced.stdout


def test_restore_to_another_folder(world: dict[str, Path], tmp_path: Path) -> None:
    result = run("restore", SID, "--to", str(tmp_path / "out"), home=world["home"])
    assert result.returncode == 0, result.stderr
    [written] = (tmp_path / "out").rglob("*.jsonl")
    assert written.name == f"{SID}.jsonl"
    assert written.parent.name == world["transcript"].parent.name


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


def test_a_newline_in_a_working_folder_keeps_the_sessions_table_one_row_each(
    world: dict[str, Path], tmp_path: Path
) -> None:
    """Issue 31 item 17: a folder named with a newline (any name a file system allows) broke
    the row in two, and an escape code in one reached the terminal."""
    odd = "/home/u/two\nlines \x1b[31mred"
    line = cc_user("8d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a", "n1", "a session in an odd folder")
    line["cwd"] = odd
    write_lines(world["transcript"].parent.parent / "-home-u-two-lines" / "odd.jsonl", [line])
    assert run("ingest", home=world["home"]).returncode == 0
    shown = run("sessions", home=world["home"]).stdout
    rows = shown.splitlines()
    assert len(rows) == 2, shown  # the world's session and this one
    assert "\x1b" not in shown and any("lines ?[31mred"[:8] in row for row in rows)


def test_restore_in_a_home_clawback_cannot_write_says_so_in_words(
    world: dict[str, Path],
) -> None:
    """Issue 31 item 17: it said only ``ingest.lock: Permission denied`` (a home the user
    cannot write) or that the home is read-only, and exited 1, though the transcript was back."""
    from ..home.test_damage import _in_private_mounts

    world["transcript"].unlink()
    assert run("ingest", home=world["home"]).returncode == 0
    home, user, out = world["home"], world["user"], world["home"].parent
    done = _in_private_mounts(
        f"mount --bind {home} {home}; mount -o remount,ro,bind {home}\n"
        f"HOME={user} CLAWBACK_HOME={home} {CLAWBACK} restore {SID[:8]}"
        f" > {out}/restore.out 2> {out}/restore.err; echo $? > {out}/restore.rc\n"
    )
    assert done.returncode == 0, done.stderr
    said = (out / "restore.err").read_text()
    assert (out / "restore.rc").read_text().strip() == "0", said
    assert f"wrote {world['transcript']}" in (out / "restore.out").read_text()
    warning = [line for line in said.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "the transcript is back" in warning[0]
    assert f"{home} is read-only" in warning[0] and "Permission denied" not in said
    assert world["transcript"].is_file()


def test_permission_denied_is_said_in_words() -> None:
    import errno

    from clawback.core.faults import explain

    said = explain(PermissionError(errno.EACCES, "Permission denied"), Path("/h/cb/ingest.lock"))
    assert said.startswith("/h/cb cannot be written by you (Permission denied)")
