"""clawback's Claude Code plugin as Claude Code records it, and a hook that steps aside for the
settings-file hooks, so that clawback answers each event once."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from clawback.core.hooks.plugin import (
    PluginState,
    plugin_state,
    plugin_tools,
    refusal,
    settings_hook_scope,
)
from clawback.core.hooks.settings import hook_command
from clawback.core.paths import Paths

from ..cli_runner import run_cli
from .conftest import CWD, event
from .test_hook_contract import context_of, hook, last_run


@pytest.fixture
def claude_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "dot-claude"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude").mkdir(parents=True)
    return folder


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def installed(claude_dir: Path, plugin_id: str = "clawback@clawback") -> None:
    write(
        claude_dir / "plugins" / "installed_plugins.json",
        {"version": 2, "plugins": {plugin_id: [
            {"scope": "user", "installPath": "/repo/plugin", "version": "0.1.0"}]}},
    )  # fmt: skip


def test_no_plugin_when_claude_code_names_none(claude_dir: Path, project: Path) -> None:
    assert plugin_state(project, claude_dir) is None
    write(claude_dir / "settings.json", {"enabledPlugins": {"clawback-tools@elsewhere": True}})
    assert plugin_state(project, claude_dir) is None  # a name that only starts like ours


def test_enabled_in_user_settings_with_its_install_record(claude_dir: Path, project: Path) -> None:
    write(claude_dir / "settings.json", {"enabledPlugins": {"clawback@clawback": True}})
    installed(claude_dir)
    assert plugin_state(project, claude_dir) == PluginState(
        "clawback@clawback", True, "user", "0.1.0", "/repo/plugin"
    )


def test_the_most_specific_settings_file_decides(claude_dir: Path, project: Path) -> None:
    write(claude_dir / "settings.json", {"enabledPlugins": {"clawback@mine": True}})
    write(project / ".claude" / "settings.json", {"enabledPlugins": {"clawback@mine": False}})
    state = plugin_state(project, claude_dir)
    assert state is not None and (state.enabled, state.scope) == (False, "project")
    write(project / ".claude" / "settings.local.json", {"enabledPlugins": {"clawback@mine": True}})
    state = plugin_state(project, claude_dir)
    assert state is not None and (state.enabled, state.scope) == (True, "local")


def test_installed_but_not_enabled_and_unreadable_files(claude_dir: Path, project: Path) -> None:
    installed(claude_dir)
    write(claude_dir / "settings.json", "{ not json")
    write(project / ".claude" / "settings.json", ["a list"])
    state = plugin_state(project, claude_dir)
    assert state is not None and (state.enabled, state.scope, state.version) == (
        False,
        "user",
        "0.1.0",
    )
    write(claude_dir / "plugins" / "installed_plugins.json", "garbage")
    assert plugin_state(project, claude_dir) is None
    (claude_dir / "settings.json").unlink()
    os.mkfifo(claude_dir / "settings.json")  # never waited on
    assert plugin_state(project, claude_dir) is None


def test_refusal_names_the_plugin_and_how_to_remove_it() -> None:
    text = refusal(PluginState("clawback@clawback", True, "user"))
    assert "nothing was written" in text and "claude plugin uninstall clawback@clawback" in text
    assert "\n" not in text


def test_the_tools_are_named_as_claude_code_names_a_plugin_servers_tools() -> None:
    # seen with Claude Code 2.1.328: mcp__plugin_<plugin>_<server>__<tool>
    assert plugin_tools() == (
        "mcp__plugin_clawback_clawback__memory_search",
        "mcp__plugin_clawback_clawback__memory_get",
    )


def test_settings_hook_scope_finds_clawbacks_hook_for_that_event(
    claude_dir: Path, project: Path, tmp_path: Path
) -> None:
    assert settings_hook_scope("SessionStart", str(project), claude_dir) is None
    command = hook_command(["/opt/bin/clawback"], tmp_path / "cb", "SessionStart")
    theirs = {"type": "command", "command": "echo hi"}
    write(
        project / ".claude" / "settings.local.json",
        {"hooks": {"SessionStart": [{"hooks": [theirs, {"type": "command", "command": command}]}],
                   "Stop": [{"hooks": [theirs]}]}},
    )  # fmt: skip
    assert settings_hook_scope("SessionStart", str(project), claude_dir) == "local"
    assert settings_hook_scope("Stop", str(project), claude_dir) is None
    assert settings_hook_scope("SessionStart", str(tmp_path), claude_dir) is None  # elsewhere


def test_the_plugins_hook_steps_aside_where_a_settings_file_runs_clawbacks(
    hook_home: Path, tmp_path: Path
) -> None:
    claude_dir = tmp_path / "dot-claude"
    start = event("SessionStart", "startup")
    env = {"CLAUDE_CONFIG_DIR": str(claude_dir), "CLAWBACK_VIA_PLUGIN": "1"}
    assert context_of(hook("session-start", start, hook_home, **env), "SessionStart")
    command = hook_command(["/opt/bin/clawback"], hook_home, "SessionStart")
    write(
        claude_dir / "settings.json",
        {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}},
    )
    stepped = hook("session-start", start, hook_home, **env)
    assert (stepped.returncode, stepped.stdout, stepped.stderr) == (0, "", "")
    run = last_run(hook_home)
    assert (run.event, run.outcome, run.cwd) == ("session-start", "skipped", CWD)
    assert "user settings file" in run.detail and "steps aside" in run.detail
    # the settings file's own hook (no plugin mark) answers as always
    assert context_of(
        hook("session-start", start, hook_home, CLAUDE_CONFIG_DIR=str(claude_dir)), "SessionStart"
    )
    assert last_run(hook_home).outcome == "ok"
    assert Paths.resolve(hook_home).hooks.is_dir()


def test_the_warm_process_answers_for_the_plugin_as_the_hook_would(
    hook_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin's hook the warm process answers steps aside by the hook's own environment."""
    import os
    import subprocess

    from clawback.core.warm.server import running, socket_path, stop

    from ..cli_runner import CLAWBACK
    from ..helpers import wait_until

    monkeypatch.delenv("CLAWBACK_WARM")
    claude_dir = tmp_path / "dot-claude"
    command = hook_command(["/opt/bin/clawback"], hook_home, "SessionStart")
    write(
        claude_dir / "settings.json",
        {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}},
    )
    paths = Paths.resolve(hook_home)

    def session_start(**env: str) -> str:
        done = subprocess.run(
            [CLAWBACK, "--home", str(hook_home), "hook", "session-start"],
            input=json.dumps(event("SessionStart", "startup")), capture_output=True, text=True,
            env={**os.environ, **env}, timeout=60, check=True,
        )  # fmt: skip
        return done.stdout

    try:
        session_start()  # starts the warm process, without CLAUDE_CONFIG_DIR
        wait_until(lambda: running(paths) and socket_path(paths).exists(), "the warm process")  # type: ignore[union-attr]
        assert session_start(CLAUDE_CONFIG_DIR=str(claude_dir), CLAWBACK_VIA_PLUGIN="1") == ""
        run = last_run(hook_home)
        assert run.outcome == "skipped" and "user settings file" in run.detail
        assert "Recent sessions" in session_start(CLAUDE_CONFIG_DIR=str(claude_dir))
        assert last_run(hook_home).outcome == "ok"
    finally:
        stop(paths)


# -- the command line beside the plugin ---------------------------------------------------------


@pytest.fixture
def person(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME whose Claude Code has the plugin installed and on, and a project as cwd."""
    home = tmp_path / "person"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    write(home / ".claude" / "settings.json", {"enabledPlugins": {"clawback@clawback": True}})
    installed(home / ".claude")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return home


def test_hooks_install_and_mcp_install_refuse_beside_the_enabled_plugin(
    person: Path, tmp_path: Path
) -> None:
    settings = person / ".claude" / "settings.json"
    before = settings.read_text()
    for command in (["hooks", "install"], ["hooks", "install", "--with-mcp"], ["mcp", "install"]):
        done = run_cli(*command, home=tmp_path / "cb", env={"CLAWBACK_CLAUDE": "/nonexistent"})
        assert done.returncode == 1 and done.stdout == "", command
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert "clawback plugin (clawback@clawback, user scope)" in done.stderr
        assert "claude plugin uninstall clawback@clawback" in done.stderr
    assert settings.read_text() == before  # nothing written
    assert not (Path.cwd() / ".claude").exists()
    write(settings, {"enabledPlugins": {"clawback@clawback": False}})  # switched off: allowed
    assert run_cli("hooks", "install", home=tmp_path / "cb").returncode == 0


def test_hooks_status_shows_the_plugin_and_what_steps_aside(person: Path, tmp_path: Path) -> None:
    report = json.loads(run_cli("hooks", "status", "--json", home=tmp_path / "cb").stdout)
    assert report["plugin"] == {
        "id": "clawback@clawback",
        "enabled": True,
        "scope": "user",
        "version": "0.1.0",
        "path": "/repo/plugin",
    }
    shown = run_cli("hooks", "status", home=tmp_path / "cb").stdout
    assert "Plugin: clawback@clawback 0.1.0 (user scope) on: the hooks and the memory server\n" in (
        shown
    )
    assert "MCP server: from the plugin" in shown
    command = hook_command(["/opt/bin/clawback"], tmp_path / "cb", "Stop")
    write(
        Path.cwd() / ".claude" / "settings.local.json",
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}},
    )
    shown = run_cli("hooks", "status", home=tmp_path / "cb").stdout
    assert "its hooks step aside where settings-file hooks run" in shown
    write(person / ".claude" / "settings.json", {"enabledPlugins": {"clawback@clawback": False}})
    shown = run_cli("hooks", "status", home=tmp_path / "cb").stdout
    assert "(user scope) installed, switched off" in shown


def test_hooks_status_without_the_plugin_says_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    report = json.loads(run_cli("hooks", "status", "--json", home=tmp_path / "cb").stdout)
    assert report["plugin"] is None
    assert "Plugin:" not in run_cli("hooks", "status", home=tmp_path / "cb").stdout
