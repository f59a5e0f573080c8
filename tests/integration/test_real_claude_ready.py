"""A person's ``claude -p`` after ``clawback hooks install --with-mcp``: the memory server is
connected and its tools are offered in the very first request, beside the brief and the recall,
and once the warm process is up the hooks are answered there (issue 32, items 1 and 2).

Opt-in like the other real-CLI tests (``CLAWBACK_INTEGRATION=1``), offline against the loopback
stand-in of the Messages API, in a throwaway ``HOME``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from clawback.cli.main import cli
from clawback.core.hooks.log import read_runs
from clawback.core.paths import Paths
from clawback.core.warm.server import running, socket_path, stop
from click.testing import CliRunner

from ..helpers import wait_until
from .anthropic_standin import AnthropicStandin
from .test_real_claude import claude_home, real_claude  # noqa: F401  (fixtures)
from .test_real_claude_hooks import DECISION, PROMPT, env_for, setup  # noqa: F401  (fixture)

pytestmark = pytest.mark.integration

TOOLS = {"mcp__clawback__memory_search", "mcp__clawback__memory_get"}


def ask(claude: str, home: Path, cb: Path, project: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``claude -p PROMPT``: ``(its init event, the first request the API got)``."""
    with AnthropicStandin() as standin:
        done = subprocess.run(
            [claude, "-p", "--output-format", "stream-json", "--verbose", PROMPT],
            capture_output=True, text=True, env=env_for(standin, home, cb, claude), cwd=project,
            timeout=180,
        )  # fmt: skip
        first = standin.state.requests[0] if standin.state.requests else {}
    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    init = next(e for e in events if e.get("type") == "system" and e.get("subtype") == "init")
    return init, first


def test_the_memory_server_is_ready_in_the_first_request(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    setup: dict[str, Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, cb = setup["project"], setup["cb"]
    monkeypatch.delenv("CLAWBACK_WARM", raising=False)  # as in use: the hooks start one
    env = {"HOME": str(claude_home), "CLAWBACK_HOME": str(cb), "CLAWBACK_CLAUDE": real_claude}
    installed = CliRunner().invoke(cli, ["hooks", "install", "--with-mcp"], env=env)
    assert installed.exit_code == 0, installed.output
    paths = Paths.resolve(cb)
    try:
        for turn in ("first", "with the warm process up"):
            init, first = ask(real_claude, claude_home, cb, project)
            servers = {server["name"]: server["status"] for server in init["mcp_servers"]}
            assert servers == {"clawback": "connected"}, turn
            assert {tool["name"] for tool in first["tools"]} >= TOOLS, turn
            sent = json.dumps(first["messages"], ensure_ascii=False)
            assert "SessionStart hook additional context" in sent, turn
            assert DECISION in sent, turn  # the recall, in the same first request
            if turn == "first":
                wait_until(
                    lambda: running(paths) and socket_path(paths).exists(),  # type: ignore[union-attr]
                    "the warm process the first hooks started",
                    timeout=60,
                )
        prompts = [r for r in read_runs(paths.hooks) if r.event == "user-prompt"]
        assert prompts[-1].outcome == "ok" and prompts[-1].detail.startswith("keyword, warm:")
    finally:
        CliRunner().invoke(cli, ["hooks", "uninstall", "--with-mcp"], env=env)
        stop(paths)
