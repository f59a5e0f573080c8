"""``clawback hooks install|uninstall|status`` and the hooks in ``health``, as a person runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..cli_runner import run_cli
from ..fake_claude.fixtures import FAKE_CLAUDE
from .conftest import event

EVENTS = ["SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"]


@pytest.fixture
def user(claude_user: Path) -> Path:
    return claude_user


def test_install_status_uninstall(user: Path, tmp_path: Path) -> None:
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    theirs: dict[str, Any] = {
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
    }
    settings.write_text(json.dumps(theirs))
    home = tmp_path / "cb"
    done = run_cli("hooks", "install", home=home)
    assert done.returncode == 0, done.stderr
    assert str(settings) in done.stdout and "clawback-backup" in done.stderr
    data = json.loads(settings.read_text())
    assert set(data["hooks"]) == set(EVENTS) and data["model"] == "opus"
    assert data["hooks"]["Stop"][0] == theirs["hooks"]["Stop"][0]
    again = run_cli("hooks", "install", home=home)
    assert "nothing changed" in again.stdout and json.loads(settings.read_text()) == data

    status = run_cli("hooks", "status", "--json", home=home)
    report = json.loads(status.stdout)
    user_scope = report["scopes"][0]
    assert (user_scope["scope"], user_scope["events"], user_scope["this_home"]) == (
        "user",
        EVENTS,
        True,
    )
    assert [row["events"] for row in report["scopes"][1:]] == [[], []]
    assert report["warm_process"] is False
    run_cli("hook", "user-prompt", home=home, input="not json")
    shown = run_cli("hooks", "status", home=home).stdout
    assert "5 of 5 events" in shown and "user-prompt" in shown and "error" in shown
    assert "Recent failures" in shown and "not JSON" in shown
    assert (
        "Warm process (model and vectors for recall and search): not running (stays 10 min" in shown
    )

    removed = run_cli("hooks", "uninstall", home=home)
    assert removed.returncode == 0 and str(settings) in removed.stdout
    assert json.loads(settings.read_text()) == theirs
    nothing = run_cli("hooks", "uninstall", home=home)
    assert "No clawback hooks were installed" in nothing.stdout


def test_project_and_local_scopes_write_in_this_folder(user: Path, tmp_path: Path) -> None:
    assert run_cli("hooks", "install", "--scope", "project", home=tmp_path / "cb").returncode == 0
    assert run_cli("hooks", "install", "--scope", "local", home=tmp_path / "cb").returncode == 0
    project = Path.cwd()
    assert list(json.loads((project / ".claude" / "settings.json").read_text())["hooks"]) == EVENTS
    assert (
        list(json.loads((project / ".claude" / "settings.local.json").read_text())["hooks"])
        == EVENTS
    )
    assert not (user / ".claude" / "settings.json").exists()
    removed = run_cli("hooks", "uninstall", "--scope", "local", home=tmp_path / "cb")
    assert removed.returncode == 0
    assert json.loads((project / ".claude" / "settings.local.json").read_text()) == {}
    assert "hooks" in json.loads((project / ".claude" / "settings.json").read_text())


def test_invalid_settings_are_refused_with_one_line(user: Path, tmp_path: Path) -> None:
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text('{"hooks": {}, }')
    done = run_cli("hooks", "install", home=tmp_path / "cb")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "not valid JSON" in done.stderr
    assert settings.read_text() == '{"hooks": {}, }'


def test_with_mcp_registers_the_server_always_loaded(user: Path, tmp_path: Path) -> None:
    done = run_cli(
        "hooks",
        "install",
        "--with-mcp",
        home=tmp_path / "cb",
        env={"CLAWBACK_CLAUDE": str(FAKE_CLAUDE)},
    )
    assert done.returncode == 0, done.stderr
    server = json.loads((user / ".claude.json").read_text())["mcpServers"]["clawback"]
    assert server["alwaysLoad"] is True
    report = json.loads(run_cli("hooks", "status", "--json", home=tmp_path / "cb").stdout)
    assert report["mcp"] == [{"scope": "user", "always_load": True}]
    removed = run_cli(
        "hooks",
        "uninstall",
        "--with-mcp",
        home=tmp_path / "cb",
        env={"CLAWBACK_CLAUDE": str(FAKE_CLAUDE)},
    )
    assert removed.returncode == 0, removed.stderr
    assert json.loads((user / ".claude.json").read_text())["mcpServers"] == {}


def test_health_shows_the_hooks_failures(tmp_path: Path) -> None:
    home = tmp_path / "cb"
    run_cli("hook", "session-start", home=home, input=json.dumps(event("SessionStart")))
    run_cli("hook", "user-prompt", home=home, input="{broken")
    shown = run_cli("health", home=home).stdout
    assert "Claude Code hooks" in shown and "user-prompt error" in shown
    report = json.loads(run_cli("health", "--json", home=home).stdout)
    assert set(report["hooks"]["last_runs"]) == {"session-start", "user-prompt"}
    assert report["hooks"]["failures"][0]["event"] == "user-prompt"
