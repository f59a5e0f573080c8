"""The repository as a Claude Code marketplace: its plugin gives exactly what ``clawback hooks
install --with-mcp`` gives, under the package's own version, and lets Claude call the tools."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

from clawback.core.claude.mcp import registration
from clawback.core.hooks.plugin import PLUGIN_NAME, plugin_tools
from clawback.core.hooks.settings import CLAUDE_TIMEOUT_S, EVENTS

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin"
LAUNCHER = '"${CLAUDE_PLUGIN_ROOT}/scripts/clawback"'


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def frontmatter(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    head = text.split("---\n")[1]
    return dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)


def test_the_repository_root_is_a_marketplace_listing_the_plugin_folder() -> None:
    market = load(ROOT / ".claude-plugin" / "marketplace.json")
    assert market["name"] == PLUGIN_NAME and market["owner"]["name"]
    [entry] = market["plugins"]
    assert entry["name"] == PLUGIN_NAME and entry["source"] == "./plugin"
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").is_file()
    # the plugin folder is all Claude Code copies: no Python, nothing of the package
    assert not list(PLUGIN.rglob("*.py")) and not (PLUGIN / "pyproject.toml").exists()


def test_the_plugin_carries_the_packages_version() -> None:
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert manifest["name"] == PLUGIN_NAME
    assert manifest["version"] == project["version"] == version("clawback"), (
        "bump plugin/.claude-plugin/plugin.json with pyproject.toml's version: Claude Code "
        "updates an installed plugin only when its version changes"
    )
    assert manifest["license"] == project["license"]


def test_the_hooks_answer_the_events_hooks_install_writes() -> None:
    table = load(PLUGIN / "hooks" / "hooks.json")["hooks"]
    assert list(table) == list(EVENTS)
    for event, name in EVENTS.items():
        [group] = table[event]
        assert "matcher" not in group  # every source, every trigger, as the settings entries
        assert group["hooks"] == [
            {"type": "command", "command": f"{LAUNCHER} hook {name}", "timeout": CLAUDE_TIMEOUT_S}
        ]


def test_the_memory_server_is_always_loaded_like_mcp_installs_it(tmp_path: Path) -> None:
    servers = load(PLUGIN / ".mcp.json")["mcpServers"]
    assert list(servers) == ["clawback"]
    entry = servers["clawback"]
    registered = registration(tmp_path, ["/opt/bin/clawback"])
    assert entry["args"] == registered["args"] == ["mcp"]
    assert entry["alwaysLoad"] is registered["alwaysLoad"] is True
    assert entry["command"] == LAUNCHER.strip('"')
    assert "env" not in entry  # the plugin uses the person's home ($CLAWBACK_HOME or default)


def test_skill_and_commands_allow_exactly_the_tools_the_server_gets() -> None:
    tools = set(plugin_tools())
    skill = frontmatter(PLUGIN / "skills" / "memory" / "SKILL.md")
    assert skill["name"] == "memory" and "memory_search" in skill["description"]
    assert skill["user-invocable"] == "false"  # for Claude; people have the commands
    assert set(skill["allowed-tools"].split(", ")) == tools
    search = frontmatter(PLUGIN / "commands" / "search.md")
    assert set(search["allowed-tools"].split(", ")) == tools
    assert search["argument-hint"] == "QUERY"
    remember = frontmatter(PLUGIN / "commands" / "remember.md")
    assert remember["allowed-tools"] == "Bash(clawback memory remember:*)"
    status = frontmatter(PLUGIN / "commands" / "status.md")
    assert set(status["allowed-tools"].split(", ")) == {
        "Bash(clawback hooks status:*)",
        "Bash(clawback health:*)",
    }


def test_no_shell_block_takes_what_the_person_typed() -> None:
    """Claude Code fills $ARGUMENTS into a `!` shell block without quoting it: typed text would
    run as a command. The commands hand it to Claude as data instead."""
    for command in (PLUGIN / "commands").glob("*.md"):
        for block in re.findall(r"!`([^`]*)`", command.read_text()):
            assert "$ARGUMENTS" not in block and not re.search(r"\$\d", block), command.name


def test_the_launcher_is_executable_in_the_repository() -> None:
    launcher = PLUGIN / "scripts" / "clawback"
    assert os.access(launcher, os.X_OK)
    if (ROOT / ".git").exists():  # a fresh clone gets the mode git recorded
        staged = subprocess.run(
            ["git", "ls-files", "-s", str(launcher)], capture_output=True, text=True, cwd=ROOT
        )
        assert staged.stdout.startswith("100755"), staged.stdout
