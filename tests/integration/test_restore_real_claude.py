"""A session Claude Code deleted comes back and continues, with the real ``claude`` (opt-in).

``claude -p`` makes a session, clawback ingests it, the transcript is deleted, ``clawback
restore`` writes it back from the kept copy, and ``claude -p --resume <id>`` continues it: the
request the CLI sends to the (loopback) API holds the earlier turns. Run as the other
integration tests are (``CLAWBACK_INTEGRATION=1``; see ``test_real_claude.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..cli_runner import run_cli
from .anthropic_standin import AnthropicStandin
from .test_real_claude import claude_home, offline_env, real_claude, standin  # noqa: F401

pytestmark = pytest.mark.integration

SECRET = "sk-ant-api03-" + "Zq8xWm3Kd9Lp2Rt7Vb4Nc6Hy1Js5Gf0" * 2


def claude(
    binary: str, args: list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, *args],
        env={"PATH": os.environ["PATH"], **env},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def request_texts(request: dict[str, object]) -> str:
    return json.dumps(request.get("messages"), ensure_ascii=False)


def test_a_deleted_session_is_restored_and_resumed_with_its_earlier_turns(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    standin: AnthropicStandin,  # noqa: F811
    tmp_path: Path,
) -> None:
    env = offline_env(standin, claude_home)
    project = tmp_path / "proj"
    project.mkdir()
    first = claude(
        real_claude,
        ["-p", "--output-format", "json", f"remember the word pelican; my key is {SECRET}"],
        env,
        project,
    )
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    [transcript] = (claude_home / ".claude" / "projects").glob(f"*/{session_id}.jsonl")

    home = tmp_path / "clawback"
    home.mkdir()
    projects = claude_home / ".claude" / "projects"
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    assert run_cli("ingest", home=home).returncode == 0
    transcript.unlink()  # what cleanupPeriodDays does
    assert run_cli("ingest", home=home).returncode == 0
    assert session_id[:8] in run_cli("sessions", "--deleted", home=home).stdout

    restored = run_cli("restore", session_id, home=home)
    assert restored.returncode == 0, restored.stderr
    assert f"wrote {transcript}" in restored.stdout
    assert SECRET not in transcript.read_text()

    requests_before = len(standin.state.requests)
    again = claude(real_claude, ["-p", "--resume", session_id, "which word?"], env, project)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("ECHO: which word?")
    [request] = standin.state.requests[requests_before:]
    sent = request_texts(request)
    assert "remember the word pelican" in sent  # the earlier turn went with it
    assert "ECHO: remember the word pelican" in sent  # and the earlier reply
    assert SECRET not in sent and "[masked]" in sent
