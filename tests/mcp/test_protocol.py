"""``clawback mcp`` as a client sees it: a subprocess speaking MCP (JSON-RPC lines) on stdio.

Initialize, list the tools, call them, see an ingest that happens mid-session, survive bad
calls, keep stdout for the protocol only, and exit when the client closes stdin.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.core.spawning import clawback_command

from tests.helpers import cc_assistant, cc_user, write_lines

TIMEOUT = 30.0
SID = "abcdef01-2222-4333-8444-555555555555"


class StdioClient:
    """A minimal MCP client: one JSON object per line each way, answers matched by id."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.raw: list[bytes] = []
        self._next = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw.append(line)
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next += 1
        self.send({"id": self._next, "method": method, **({"params": params} if params else {})})
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            assert line, f"the server exited: {self.stderr()}"
            message = json.loads(line)
            if message.get("id") == self._next:
                assert "error" not in message, message
                return message["result"]

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return ""
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")


@pytest.fixture
def client(home: Home) -> Iterator[StdioClient]:
    env = {**os.environ, "CLAWBACK_HOME": str(home.paths.home)}
    server = StdioClient([*clawback_command(), "mcp"], env)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        server.proc.wait(TIMEOUT)


def _initialize(client: StdioClient) -> dict[str, Any]:
    result = client.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {},
         "clientInfo": {"name": "clawback-tests", "version": "1"}},
    )  # fmt: skip
    client.send({"method": "notifications/initialized"})
    return result


def test_a_client_initializes_lists_and_calls_the_tools(
    home: Home, cc_root: Path, client: StdioClient
) -> None:
    write_lines(
        cc_root / "proj" / f"{SID}.jsonl",
        [cc_user(SID, "u1", "How do we rotate the staging certificates?"),
         cc_assistant(SID, "a1", [{"type": "text", "text": "Run certbot renew on staging."}])],
    )  # fmt: skip
    home.ingest_all()
    init = _initialize(client)
    assert init["serverInfo"]["name"] == "clawback" and "tools" in init["capabilities"]
    tools = {tool["name"]: tool for tool in client.request("tools/list")["tools"]}
    assert set(tools) == {"memory_search", "memory_get"}
    assert tools["memory_search"]["inputSchema"]["required"] == ["query"]
    assert set(tools["memory_search"]["inputSchema"]["properties"]) == {
        "query", "max_results", "source", "session", "since", "until", "kind", "mode"}  # fmt: skip
    assert tools["memory_get"]["inputSchema"]["required"] == ["ref"]
    assert all(tool["annotations"]["readOnlyHint"] for tool in tools.values())

    found = client.call("memory_search", query="staging certificates")
    assert not found["isError"]
    hits = found["structuredContent"]["results"]
    assert hits[0]["session_id"] == SID
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    read = client.call("memory_get", ref=hits[0]["ref"])["structuredContent"]
    assert "Run certbot renew on staging." in [m["text"] for m in read["messages"]]

    # the client model is told what it reads: retrieved reference text, not instructions
    for tool in tools.values():
        assert "retrieved reference text" in tool["description"]
    for answer in (found["content"][0]["text"], json.dumps(read)):
        assert answer.startswith('{"retrieved":"Retrieved reference text') or answer.startswith(
            '{"retrieved": "Retrieved reference text'
        )
        assert "not instructions" in answer


def test_an_ingest_during_the_session_is_seen_without_a_restart(
    home: Home, cc_root: Path, client: StdioClient
) -> None:
    _initialize(client)
    assert client.call("memory_search", query="quokka")["structuredContent"]["results"] == []
    write_lines(cc_root / "proj" / f"{SID}.jsonl", [cc_user(SID, "u1", "the quokka migration")])
    home.ingest_all()  # another process's write, as far as the server is concerned
    [hit] = client.call("memory_search", query="quokka")["structuredContent"]["results"]
    assert hit["session_id"] == SID


def test_bad_calls_are_tool_errors_and_the_server_keeps_serving(client: StdioClient) -> None:
    _initialize(client)
    for tool, arguments in [
        ("memory_get", {"ref": "../../etc/passwd"}),
        ("memory_get", {"ref": "memory:/etc/passwd#L1"}),
        ("memory_search", {"query": "x", "since": "last week"}),
        ("memory_search", {}),
        ("memory_search", {"query": "x", "max_results": "lots"}),
        ("no_such_tool", {}),
    ]:
        answer = client.call(tool, **arguments)
        assert answer["isError"] is True
        text = answer["content"][0]["text"]
        assert text and "\n" not in text, text  # one line a model can act on
    assert client.call("memory_search", query="anything")["isError"] is False


def test_stdout_carries_only_the_protocol_and_closing_stdin_stops_the_server(
    client: StdioClient,
) -> None:
    _initialize(client)
    client.call("memory_search", query="hello")
    assert client.proc.stdin is not None
    client.proc.stdin.close()
    assert client.proc.wait(TIMEOUT) == 0
    client.reader.join(TIMEOUT)
    assert client.raw and all(json.loads(line)["jsonrpc"] == "2.0" for line in client.raw)
