"""The CLI on a real terminal: the paths that only run when stderr is a TTY (progress bars)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from ..helpers import cc_assistant, cc_user, write_lines


def run_on_terminal(args: list[str], timeout: float = 60) -> tuple[int, str]:
    """Run ``clawback ARGS`` with stdout and stderr on a pseudo-terminal; (exit code, output)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "clawback.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "COLUMNS": "100", "TERM": "xterm"},
    )
    os.close(follower)
    output = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], timeout)
        if not ready:
            process.kill()
            raise AssertionError(f"no output for {timeout} s: {output.decode(errors='replace')}")
        try:
            piece = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not piece:
            break
        output += piece
    os.close(leader)
    return process.wait(timeout=timeout), output.decode(errors="replace")


def test_ingest_on_a_terminal_shows_its_progress_and_succeeds(tmp_path: Path) -> None:
    sid = "11111111-2222-3333-4444-555555555555"
    write_lines(
        tmp_path / "cc" / "-home-u-proj" / f"{sid}.jsonl",
        [
            cc_user(sid, "u1", "how do I rotate the logs"),
            cc_assistant(sid, "a1", [{"type": "text", "text": "use logrotate"}]),
        ],
    )
    code, output = run_on_terminal(
        ["--home", str(tmp_path / "home"), "ingest", str(tmp_path / "cc")]
    )
    assert code == 0, output
    assert "Ingested 1 files" in output
    assert "Traceback" not in output and "Error" not in output


def test_python_m_clawback_runs_the_same_command(tmp_path: Path) -> None:
    """``python -m clawback`` is the ``clawback`` script, as ``python -m pip`` is pip."""
    result = subprocess.run(
        [sys.executable, "-m", "clawback", "--home", str(tmp_path / "h"), "sessions", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []  # a new home has no sessions
