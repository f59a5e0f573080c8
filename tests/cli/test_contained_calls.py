"""Every ``claude`` call clawback makes runs contained, whatever kind of call it is.

A chat turn, a memory flush, a compaction (and the fact extraction it starts) and the librarian
each run ``claude -p``. None may load the user's MCP servers (a proposed note once read
"Claude requested permissions to use mcp__clawback__memory_search"), fire the user's hooks (a
clawback hook would fire again inside clawback's own call) or leave a transcript under
``~/.claude/projects``. The argv each kind of call really ran with is read from the fake's log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clawback.core.claude.mcp import ALLOWED_TOOLS
from clawback.core.home import Home

from tests.memory.test_flush import seed
from tests.memory.test_librarian import PAYLOAD, conversation

from .test_chat import calls, run

CONTAINED = [
    "--no-session-persistence",
    "--strict-mcp-config",
    "--settings",
    '{"disableAllHooks": true}',
]


def contained(argv: list[str]) -> bool:
    """The contained flags, in order, and ``--tools ""`` (no built-in tools)."""
    start = argv.index(CONTAINED[0])
    tools = argv.index("--tools")
    return argv[start : start + len(CONTAINED)] == CONTAINED and argv[tools + 1] == ""


def mcp_servers(argv: list[str]) -> list[Any]:
    """The servers a call's ``--mcp-config`` files name (none without the flag)."""
    if "--mcp-config" not in argv:
        return []
    config = Path(argv[argv.index("--mcp-config") + 1])
    return sorted(json.loads(config.read_text())["mcpServers"])


def test_every_kind_of_claude_call_is_contained(tmp_path: Path) -> None:
    home = tmp_path / "home"
    opened = Home.open(home)
    try:
        session = seed(opened.chat_engine(), 10)
        opened.ingest_changed({session.transcript_path})
    finally:
        opened.close()

    assert run("chat", "--session", "local:alice", "hello", home=home).returncode == 0
    (chat,) = calls(home)
    assert contained(chat["argv"]) and mcp_servers(chat["argv"]) == ["clawback"]
    allowed = chat["argv"][chat["argv"].index("--allowedTools") + 1]
    assert allowed == ",".join(ALLOWED_TOOLS)

    assert run("flush", session.id, "--yes", home=home, reply="- a note").returncode == 0
    assert run("compact", session.id, "--yes", home=home, reply="A summary.").returncode == 0
    src = tmp_path / "src" / "proj"
    conversation(src / "a.jsonl", "a", 3)
    assert run("ingest", str(src), "--source", "claude-code", home=home).returncode == 0
    processed = run("process", home=home, structured=json.dumps(PAYLOAD))
    assert processed.returncode == 0, processed.stderr

    later = calls(home)[1:]
    # flush, compaction, its fact extraction, the librarian: four calls, none offered any server
    assert len(later) >= 4
    for call in later:
        argv = call["argv"]
        assert contained(argv), argv
        assert mcp_servers(argv) == [] and "--allowedTools" not in argv, argv
