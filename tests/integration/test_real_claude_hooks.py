"""clawback's hooks inside the real ``claude`` CLI, offline, against the loopback API stand-in.

Opt-in like the other real-CLI tests (``CLAWBACK_INTEGRATION=1``). A person's day, shortened:
``clawback hooks install`` into a throwaway ``HOME``; ``claude -p`` in a project whose older
session settled the cache layer, and the request that reaches the API holds the brief and the
recalled decision; the session is indexed when it stops; ``claude -p --resume <id> "/compact"``
flushes a note into ``memory/YYYY-MM-DD.md`` naming the session; a ``clawback chat`` turn fires
none of the hooks and leaves no Claude Code transcript.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from clawback.cli.main import cli
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.home import Home
from clawback.core.hooks.log import read_runs
from clawback.core.paths import Paths
from click.testing import CliRunner

from tests.helpers import run_turn

from ..helpers import cc_assistant, cc_user, wait_until, write_lines
from .anthropic_standin import AnthropicStandin
from .test_real_claude import claude_home, offline_env, real_claude  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration

OLDER = "0a1b2c3d-0000-4000-8000-00000000beef"
DECISION = "We decided to drop the Redis cache layer and rely on SQLite's page cache instead."
PROMPT = "what did we decide about the cache layer"


def project_dir_name(cwd: Path) -> str:
    """Claude Code's folder name for a project: the path with / and . as -."""
    return str(cwd).replace("/", "-").replace(".", "-")


def in_project(line: dict[str, Any], cwd: Path) -> dict[str, Any]:
    return {**line, "cwd": str(cwd)}


@pytest.fixture
def setup(tmp_path: Path, claude_home: Path) -> dict[str, Any]:  # noqa: F811
    project = (tmp_path / "work" / "demo-project").resolve()
    project.mkdir(parents=True)
    projects = claude_home / ".claude" / "projects"
    write_lines(
        projects / project_dir_name(project) / f"{OLDER}.jsonl",
        [in_project(cc_user(OLDER, "o1", "Should we keep the Redis cache layer?"), project),
         in_project(cc_assistant(OLDER, "o2", [{"type": "text", "text": DECISION}]), project)],
    )  # fmt: skip
    cb = tmp_path / "clawback-home"
    home = Home.open(cb)
    (cb / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw_path = "{tmp_path / "none"}"\n'
    )
    home.close()
    home = Home.open(cb)
    (home.workspace / "MEMORY.md").parent.mkdir(parents=True, exist_ok=True)
    (home.workspace / "MEMORY.md").write_text("# Memory\n\n- Releases are cut on Fridays.\n")
    home.ingest_all()
    home.close()
    return {"project": project, "projects": projects, "cb": cb}


def env_for(standin: AnthropicStandin, claude_home: Path, cb: Path, claude: str) -> dict[str, str]:  # noqa: F811
    return {**os.environ, **offline_env(standin, claude_home), "CLAWBACK_HOME": str(cb),
            "CLAWBACK_CLAUDE": claude}  # fmt: skip


def request_text(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages", []), ensure_ascii=False)


def test_brief_and_recall_reach_the_api_and_compact_flushes_a_note(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    setup: dict[str, Any],
) -> None:
    project, cb = setup["project"], setup["cb"]
    env = {"HOME": str(claude_home), "CLAWBACK_HOME": str(cb)}
    installed = CliRunner().invoke(cli, ["hooks", "install"], env=env)
    assert installed.exit_code == 0, installed.output
    with AnthropicStandin() as standin:
        run_env = env_for(standin, claude_home, cb, real_claude)
        asked = subprocess.run(
            [real_claude, "-p", "--output-format", "json", PROMPT], capture_output=True,
            text=True, env=run_env, cwd=project, timeout=180,
        )  # fmt: skip
        requests = list(standin.state.requests)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    session_id = json.loads(asked.stdout)["session_id"]
    sent = request_text(requests[-1])
    assert "SessionStart hook additional context" in sent
    assert "Releases are cut on Fridays." in sent  # the brief: MEMORY.md
    assert f"ref: {OLDER}" in sent  # the brief: the project's older session
    assert "UserPromptSubmit hook additional context" in sent
    assert DECISION.replace("'", "\\u0027") in sent or DECISION in sent  # the recalled decision
    runs = {run.event: run for run in read_runs(Paths.resolve(cb).hooks)}
    assert runs["session-start"].outcome == "ok" and runs["user-prompt"].outcome == "ok"

    def indexed() -> bool:
        found = CliRunner().invoke(
            cli, ["search", "cache layer", "--json", "--session", session_id], env=env
        )
        return found.exit_code == 0 and bool(json.loads(found.output))

    wait_until(indexed, "the session indexed by the stop / session-end hooks", timeout=30)

    with AnthropicStandin() as standin:
        run_env = env_for(standin, claude_home, cb, real_claude)
        compacted = subprocess.run(
            [real_claude, "-p", "--resume", session_id, "/compact"], capture_output=True,
            text=True, env=run_env, cwd=project, timeout=180,
        )  # fmt: skip
        assert compacted.returncode == 0, compacted.stdout + compacted.stderr
        notes = cb / "workspace" / "memory" / f"{datetime.now().astimezone():%Y-%m-%d}.md"
        marker = f"(Claude Code session {session_id[:8]})"
        wait_until(
            lambda: notes.is_file() and marker in notes.read_text(), "the flush's note", timeout=120
        )
    text = notes.read_text()
    assert f"`clawback show {session_id}`" in text
    runs = {run.event: run for run in read_runs(Paths.resolve(cb).hooks)}
    assert runs["pre-compact"].outcome == "ok" and runs["pre-compact"].detail.startswith("flush:")
    found = CliRunner().invoke(
        cli, ["search", "cache layer", "--json", "--session", session_id], env=env
    )
    assert json.loads(found.output)  # the session's lines are searchable


async def test_a_clawback_chat_turn_fires_no_hook_and_leaves_no_transcript(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    setup: dict[str, Any],
    tmp_path: Path,
) -> None:
    cb = setup["cb"]
    env = {"HOME": str(claude_home), "CLAWBACK_HOME": str(cb)}
    installed = CliRunner().invoke(cli, ["hooks", "install"], env=env)
    assert installed.exit_code == 0, installed.output
    before = read_runs(Paths.resolve(cb).hooks)
    listed_before = sorted(p.name for p in setup["projects"].rglob("*.jsonl"))
    home = Home.open(cb)
    try:
        with AnthropicStandin() as standin:
            runner = ClaudeRunner(
                real_claude, env=offline_env(standin, claude_home), cwd=tmp_path, timeout=120
            )
            outcome = await run_turn(home.chat_engine(runner=runner), PROMPT)
            sent = request_text(standin.state.requests[-1])
    finally:
        home.close()
    assert not outcome.is_error
    assert "hook additional context" not in sent
    assert read_runs(Paths.resolve(cb).hooks) == before  # no hook ran
    assert sorted(p.name for p in setup["projects"].rglob("*.jsonl")) == listed_before
