"""``clawback mcp install|uninstall`` through the fake ``claude mcp`` (which, like the real one,
writes ``~/.claude.json`` or ``.mcp.json`` and starts the server to check that it connects)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..cli_runner import run_cli
from ..fake_claude.fixtures import FAKE_CLAUDE


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    user = tmp_path / "user"
    user.mkdir()
    return {"HOME": str(user), "CLAWBACK_CLAUDE": str(FAKE_CLAUDE)}


def registered(env: dict[str, str]) -> dict[str, object]:
    data = json.loads((Path(env["HOME"]) / ".claude.json").read_text())
    return dict(data["mcpServers"])


def test_install_registers_a_connected_server_for_this_home(
    tmp_path: Path, env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    done = run_cli("mcp", "install", home=home, env=env)
    assert done.returncode == 0, done.stderr
    entry = registered(env)["clawback"]
    assert isinstance(entry, dict)
    assert entry["env"] == {"CLAWBACK_HOME": str(home.resolve())}
    assert entry["args"][-1] == "mcp" and Path(entry["command"]).is_absolute()
    assert entry["alwaysLoad"] is True  # its tools are offered, never deferred behind a search
    assert "Status: ✔ Connected" in done.stdout  # the fake started `clawback mcp` to check
    again = run_cli("mcp", "install", home=home, env=env)  # updates the registration in place
    assert again.returncode == 0, again.stderr
    assert list(registered(env)) == ["clawback"]


def test_project_scope_writes_this_folders_mcp_json(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    done = run_cli("mcp", "install", "--scope", "project", home=tmp_path / "home", env=env)
    assert done.returncode == 0, done.stderr
    assert "clawback" in json.loads((project / ".mcp.json").read_text())["mcpServers"]


def test_uninstall_removes_it_and_says_so_when_there_is_nothing(
    tmp_path: Path, env: dict[str, str]
) -> None:
    assert run_cli("mcp", "install", home=tmp_path / "home", env=env).returncode == 0
    removed = run_cli("mcp", "uninstall", home=tmp_path / "home", env=env)
    assert removed.returncode == 0 and registered(env) == {}
    again = run_cli("mcp", "uninstall", home=tmp_path / "home", env=env)
    assert again.returncode == 1
    assert again.stderr.count("\n") == 1 and "No MCP server named" in again.stderr


def test_install_without_claude_says_how_to_get_it(tmp_path: Path, env: dict[str, str]) -> None:
    env["CLAWBACK_CLAUDE"] = str(tmp_path / "no-such-claude")
    done = run_cli("mcp", "install", home=tmp_path / "home", env=env)
    assert done.returncode != 0 and "npm install" in done.stderr
    assert "Traceback" not in done.stderr
