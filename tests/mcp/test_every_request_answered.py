"""Every MCP request gets a result or an error, whatever it carries (issue 19, item 9).

A query holding a lone surrogate (``"data\\ud800base"``: legal JSON, not encodable as UTF-8)
used to get no answer at all over stdio, and so did a request whose fields do not fit the
schema: the SDK's transport dropped both without a word.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home

from tests.helpers import cc_user, write_lines
from tests.mcp.test_protocol import SID, TIMEOUT, StdioClient, _initialize, client

__all__ = ["client"]  # the fixture, used by name


def answer_to(client: StdioClient, message: dict[str, Any]) -> dict[str, Any]:
    """The server's reply to ``message`` (a request), whatever it is."""
    client._next += 1
    client.send({"id": client._next, **message})
    while True:
        line = client.lines.get(timeout=TIMEOUT)
        assert line, f"the server exited: {client.stderr()}"
        reply: dict[str, Any] = json.loads(line)
        if reply.get("id") == client._next:
            return reply


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("memory_search", {"query": "data\ud800base"}),
        ("memory_search", {"query": "\udfff"}),
        ("memory_search", {"query": "database", "session": "\ud800"}),
        ("memory_search", {"query": "database", "since": "2026-\udc00"}),
        ("memory_get", {"ref": "claude-code:proj/\ud800.jsonl#L1"}),
        ("memory_get", {"ref": "\ud800"}),
        ("memory_get", {"ref": "fact:\ud800"}),
    ],
)
def test_a_lone_surrogate_in_any_argument_gets_an_answer(
    home: Home, cc_root: Path, client: StdioClient, tool: str, arguments: dict[str, str]
) -> None:
    write_lines(cc_root / "proj" / f"{SID}.jsonl", [cc_user(SID, "u1", "the data base grows")])
    home.ingest_all()
    _initialize(client)
    reply = answer_to(
        client, {"method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )
    result = reply["result"]  # a tool result (maybe a tool error), never a dropped request
    text = result["content"][0]["text"]
    assert "Traceback" not in text
    if arguments.get("query") == "data\ud800base":
        assert not result["isError"]  # searched as "data\ufffdbase": data and base
        assert result["structuredContent"]["results"]
    assert client.call("memory_search", query="data")["isError"] is False  # and it goes on


def test_a_request_the_schema_refuses_gets_an_error_for_its_id(client: StdioClient) -> None:
    _initialize(client)
    for params in ("oops", ["memory_search"], 12):
        reply = answer_to(client, {"method": "tools/call", "params": params})
        assert reply["error"]["code"] == -32601
        assert "invalid request" in reply["error"]["data"]
    assert client.call("memory_search", query="data")["isError"] is False
