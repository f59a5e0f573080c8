"""A person's HOME with one Claude Code session (its folder on disk), a clawback home that reads it,
and `clawback resume` run as a real process (it replaces itself with the fake claude)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from clawback.core.archive.restore import project_folder

from ..cli_runner import CLAWBACK
from ..cli_runner import run_cli as run
from ..fake_claude.fixtures import FAKE_CLAUDE
from ..helpers import cc_assistant, cc_user, write_lines

SID = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
SECRET = "sk-ant-api03-" + "Zq8xWm3Kd9Lp2Rt7Vb4Nc6Hy1Js5Gf0" * 2


def make_world(tmp_path: Path) -> dict[str, Path]:
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
