"""A turn in which Claude called a memory tool shows the call in the transcript.

The stream is the real CLI's (Claude Code 2.1.328 calling ``mcp__clawback__memory_search``
through ``--mcp-config`` against the loopback API stand-in), replayed line by line.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from datetime import UTC
from pathlib import Path
from typing import Any

from clawback.core.archive.sessions import session_messages
from clawback.core.chat.engine import ChatEngine, ToolCalled
from clawback.core.claude.events import AssistantMessage, Event, ToolCall, parse_stream_line
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.formats.native import parse_line, tool_call_event
from clawback.core.home import Home
from clawback.core.records import Kind, Role

from tests.helpers import run_turn

CAPTURE = Path(__file__).parents[1] / "fixtures" / "claude_stream_mcp_tool.jsonl"


def captured_events() -> list[Event]:
    lines = CAPTURE.read_text("utf-8").splitlines()
    return [event for line in lines if (event := parse_stream_line(line)) is not None]


class ReplayRunner(ClaudeRunner):
    """Answers every call with the captured stream (no process)."""

    async def stream(self, prompt: str, **kwargs: Any) -> AsyncGenerator[Event, None]:
        self.kwargs = kwargs
        for event in captured_events():
            yield event


def test_the_real_clis_tool_call_is_parsed() -> None:
    messages = [e for e in captured_events() if isinstance(e, AssistantMessage)]
    assert [m.tool_calls for m in messages] == [
        (ToolCall("toolu_mcp1", "mcp__clawback__memory_search", {"query": "sqlite wal"}),),
        (),
    ]
    assert messages[-1].text == "Done."


def test_a_tool_call_line_is_indexed_as_a_folded_tool_use() -> None:
    line = tool_call_event(
        "t1", "mcp__clawback__memory_get", {"ref": "fact:3"}, "2026-05-01T10:00:00.000Z"
    )
    [entry] = parse_line(json.loads(json.dumps(line))).entries
    assert (entry.role, entry.kind, entry.conversational) == (Role.ASSISTANT, Kind.TOOL_USE, True)
    assert entry.display == "memory_get: fact:3" and json.loads(entry.text) == {"ref": "fact:3"}


async def test_a_turn_that_used_a_tool_shows_it_before_the_reply(home: Home) -> None:
    runner = ReplayRunner("claude")
    engine = ChatEngine(
        home.db, home.paths, home.config.chat, index=home.ingest_changed, runner=runner, tz=UTC
    )
    seen: list[Any] = []
    outcome = await run_turn(engine, "what did we decide about sqlite?", on_event=seen.append)
    assert outcome.reply == "Done." and runner.kwargs["tools"] is not None
    assert [e.summary for e in seen if isinstance(e, ToolCalled)] == ["memory_search: sqlite wal"]
    shown = session_messages(home.db, outcome.session.id)
    assert [(m.role, m.kind, m.display or m.text) for m in shown] == [
        ("user", "text", "what did we decide about sqlite?"),
        ("assistant", "tool_use", "memory_search: sqlite wal"),
        ("assistant", "text", "Done."),
    ]
    history = engine.history(outcome.session)
    assert [m.role for m in history.messages] == ["user", "assistant"]  # never replayed
