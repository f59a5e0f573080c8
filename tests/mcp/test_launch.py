"""How clients start the memory server: the command, the JSON block, ``claude mcp add``'s argv and
the flags a chat turn passes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clawback.cli.main import cli
from clawback.core.claude.mcp import (
    ALLOWED_TOOLS,
    McpTools,
    add_argv,
    chat_tools,
    config_block,
    remove_argv,
)
from clawback.core.paths import Paths
from click.testing import CliRunner


def test_the_config_block_names_the_home_explicitly(tmp_path: Path) -> None:
    block = config_block(tmp_path, ["/opt/bin/clawback"])
    assert block == {
        "mcpServers": {
            "clawback": {
                "command": "/opt/bin/clawback",
                "args": ["mcp"],
                "env": {"CLAWBACK_HOME": str(tmp_path)},
            }
        }
    }
    python = config_block(tmp_path, [sys.executable, "-m", "clawback.cli"])
    assert python["mcpServers"]["clawback"]["args"] == ["-m", "clawback.cli", "mcp"]


def test_claude_mcp_add_json_registers_the_server_always_loaded(tmp_path: Path) -> None:
    argv = add_argv("/bin/claude", tmp_path, "user", ["/opt/bin/clawback"])
    assert argv[:6] == ["/bin/claude", "mcp", "add-json", "--scope", "user", "clawback"]
    assert json.loads(argv[6]) == {
        "type": "stdio", "command": "/opt/bin/clawback", "args": ["mcp"],
        "env": {"CLAWBACK_HOME": str(tmp_path)}, "alwaysLoad": True,
    }  # fmt: skip
    assert remove_argv("/bin/claude", None) == ["/bin/claude", "mcp", "remove", "clawback"]
    assert remove_argv("/bin/claude", "project")[-3:] == ["--scope", "project", "clawback"]


def test_chat_turns_get_a_private_config_file_and_the_two_tools(tmp_path: Path) -> None:
    paths = Paths.resolve(tmp_path / "home").ensure()
    tools = chat_tools(paths, ["/opt/bin/clawback"])
    assert json.loads(tools.config.read_text()) == config_block(paths.home, ["/opt/bin/clawback"])
    assert tools.config.stat().st_mode & 0o777 == 0o600
    assert tools.argv() == [
        "--mcp-config", str(tools.config),
        "--allowedTools", "mcp__clawback__memory_search,mcp__clawback__memory_get",
    ]  # fmt: skip
    before = tools.config.stat().st_mtime_ns
    assert chat_tools(paths, ["/opt/bin/clawback"]) == McpTools(tools.config, ALLOWED_TOOLS)
    assert tools.config.stat().st_mtime_ns == before  # unchanged content is not rewritten


def test_mcp_config_prints_the_block_for_this_home(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "mcp", "config"])
    assert result.exit_code == 0, result.output
    entry = json.loads(result.output)["mcpServers"]["clawback"]
    assert entry["env"] == {"CLAWBACK_HOME": str((tmp_path / "h").resolve())}
    assert entry["args"][-1] == "mcp" and Path(entry["command"]).is_absolute()
