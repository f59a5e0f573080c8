"""Chat turns offer the memory tools to ``claude``: the flags, the config file, the system prompt,
``chat.memory_tools = false``, and a dry run that shows them and writes nothing."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

import pytest
from clawback.core.chat.engine import ChatEngine
from clawback.core.chat.prompt import MEMORY_TOOLS_LINE, NO_TOOLS_SYSTEM_PROMPT
from clawback.core.claude.mcp import config_block
from clawback.core.home import Home

from tests.fake_claude.fixtures import FakeClaude, fake_claude_fixture  # noqa: F401  (fixture)
from tests.helpers import run_turn

TOOLS = "mcp__clawback__memory_search,mcp__clawback__memory_get"


@pytest.fixture
def engine(home: Home, fake_claude: FakeClaude) -> ChatEngine:
    return ChatEngine(
        home.db, home.paths, home.config.chat, index=home.ingest_changed,
        runner=fake_claude.runner(), tz=UTC,
    )  # fmt: skip


def _value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


async def test_a_turn_passes_the_memory_server_and_allows_its_two_tools(
    home: Home, engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    outcome = await run_turn(engine, "what did we decide about the index?")
    assert not outcome.is_error
    argv = fake_claude.last_call()["argv"]
    assert _value(argv, "--tools") == ""  # the built-in tools stay off
    assert "--strict-mcp-config" in argv
    assert _value(argv, "--allowedTools") == TOOLS
    config = Path(_value(argv, "--mcp-config"))
    assert config.parent == home.paths.home / "mcp"
    assert json.loads(config.read_text()) == config_block(home.paths.home)
    assert MEMORY_TOOLS_LINE in _value(argv, "--system-prompt")


async def test_memory_tools_off_passes_no_mcp_flags_and_says_so(
    home: Home, engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    home.config.chat.memory_tools = False
    await run_turn(engine, "hello")
    argv = fake_claude.last_call()["argv"]
    assert not {"--mcp-config", "--allowedTools"} & set(argv)
    assert "--strict-mcp-config" in argv  # still none of the user's own servers
    assert _value(argv, "--system-prompt") == NO_TOOLS_SYSTEM_PROMPT


def test_a_dry_run_shows_the_mcp_config_and_flags_and_writes_nothing(
    home: Home, engine: ChatEngine
) -> None:
    prepared = engine.prepare("hello")
    assert _value(prepared.argv, "--allowedTools") == TOOLS
    assert not (home.paths.home / "mcp").exists()
    shown = prepared.render()
    assert "=== MCP config (--mcp-config) ===" in shown and "--strict-mcp-config" in shown
    assert prepared.to_json()["mcp_config"] == config_block(home.paths.home)
