"""The stdio front of ``clawback mcp``: the handshake answered before the SDK loads, exactly as
the SDK answers it; oversized and too deeply nested requests answered with an error for their
id, without holding them (issue 31 item 13, issue 32 item 1)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.core.mcp import handshake
from clawback.core.mcp.wire import request_id
from clawback.core.spawning import clawback_command

from tests.mcp.test_protocol import TIMEOUT, StdioClient, _initialize, client

__all__ = ["client"]  # the fixture, used by name

LISTINGS = ["tools/list", "prompts/list", "resources/list", "resources/templates/list", "ping"]


def exchange(home: Path, version: str, *, front: bool) -> list[dict[str, Any]]:
    """Everything the server answers to a handshake at ``version`` and each listing."""
    messages: list[dict[str, Any]] = [
        {"id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "clawback-tests", "version": "1"}}},
        {"method": "notifications/initialized"},
        *({"id": n, "method": method} for n, method in enumerate(LISTINGS, start=2)),
        {"id": 20, "method": "tools/list", "params": {"_meta": {"progressToken": 1}}},
        {"id": 21, "method": "tools/list", "params": {"cursor": "x"}},  # relayed either way
    ]  # fmt: skip
    env = {**os.environ, "CLAWBACK_HOME": str(home), "CLAWBACK_MCP_FRONT": "1" if front else "0"}
    client = StdioClient([*clawback_command(), "mcp"], env)
    try:
        for message in messages:
            client.send(message)
        answers = [json.loads(client.lines.get(timeout=TIMEOUT)) for _ in range(8)]
    finally:
        client.proc.kill()
        client.proc.wait(TIMEOUT)
    return sorted(answers, key=lambda answer: answer["id"])


@pytest.mark.parametrize("version", [*handshake.PROTOCOL_VERSIONS, "2099-01-01"])
def test_the_front_answers_exactly_what_the_sdk_answers(home: Home, version: str) -> None:
    sdk = exchange(home.paths.home, version, front=False)
    assert [answer["id"] for answer in sdk] == [1, 2, 3, 4, 5, 6, 20, 21]
    front = exchange(home.paths.home, version, front=True)
    if front[1] != sdk[1]:  # a tool changed in core/mcp/server.py: handshake.TOOLS follows it
        print(json.dumps(sdk[1]["result"]["tools"], indent=1))
    assert front == sdk


#: the envelope Claude Code 2.1.328 puts in every request's ``_meta`` (the modern protocol)
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {
        "name": "claude-code", "title": "Claude Code", "version": "2.1.328",
        "description": "Anthropic's agentic coding tool", "websiteUrl": "https://claude.com/claude-code"},
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}},
}  # fmt: skip
DISCOVER_PROBE = {"id": "server-discover-probe-1", "method": "server/discover",
                  "params": {"_meta": ENVELOPE}}  # fmt: skip
SEARCH = {"name": "memory_search", "arguments": {"query": "zebracorn"}}
INITIALIZE = {"id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": True}},
    "clientInfo": {"name": "claude-code", "version": "2.1.328"}}}  # fmt: skip
#: what Claude Code 2.1.328 sends a memory server it starts, in order (captured), and more
MODERN: list[dict[str, Any]] = [
    DISCOVER_PROBE,
    {"id": "listen:0", "method": "subscriptions/listen", "params": {"_meta": ENVELOPE,
     "notifications": {"toolsListChanged": True, "promptsListChanged": True,
                       "resourcesListChanged": True}}},
    {"id": 0, "method": "server/discover", "params": {"_meta": ENVELOPE}},
    {"id": 1, "method": "prompts/list", "params": {"_meta": ENVELOPE}},
    {"id": 2, "method": "resources/list", "params": {"_meta": ENVELOPE}},
    {"id": 3, "method": "tools/list", "params": {"_meta": ENVELOPE}},
    {"id": 4, "method": "resources/templates/list", "params": {"_meta": ENVELOPE}},
    {"id": 5, "method": "ping", "params": {"_meta": ENVELOPE}},  # not modern: the SDK says so
    {"id": 6, "method": "tools/list", "params": {"_meta": {**ENVELOPE,
     "io.modelcontextprotocol/protocolVersion": "2027-01-01"}}},  # the SDK says it is unknown
    {"id": 7, "method": "tools/list", "params": {"_meta": ENVELOPE, "cursor": "x"}},
]  # fmt: skip
#: when its discover probe times out (a server slow to start), Claude Code sends initialize
#: right behind it; the first request decides the era, and the initialize is refused, after
#: which Claude Code discovers again and speaks the modern protocol (captured)
PROBE_TIMED_OUT: list[dict[str, Any]] = [
    DISCOVER_PROBE,
    INITIALIZE,
    {"method": "notifications/initialized"},
    {"id": 1, "method": "tools/list"},  # refused: no envelope
    {"id": 2, "method": "server/discover", "params": {"_meta": ENVELOPE}},
    {"id": 3, "method": "tools/list", "params": {"_meta": ENVELOPE}},
    {"id": 4, "method": "tools/call", "params": {"_meta": ENVELOPE, **SEARCH}},
    {"id": 5, "method": "tools/call", "params": SEARCH},  # refused: no envelope
]
#: a client that opens with the handshake and then sends a modern request
HANDSHAKE_FIRST: list[dict[str, Any]] = [
    INITIALIZE,
    DISCOVER_PROBE,  # refused: this connection serves the handshake era
    {"method": "notifications/initialized"},
    {"id": 1, "method": "tools/list"},
    {"id": 3, "method": "tools/list", "params": {"_meta": ENVELOPE}},  # refused
    {"id": 4, "method": "tools/call", "params": SEARCH},
    {"id": 5, "method": "tools/call", "params": {"_meta": ENVELOPE, **SEARCH}},  # refused
]


def answers_to(home: Path, messages: list[dict[str, Any]], *, front: bool) -> list[dict[str, Any]]:
    """Every answer the server gives to ``messages``, sent at once, sorted by id."""
    env = {**os.environ, "CLAWBACK_HOME": str(home), "CLAWBACK_MCP_FRONT": "1" if front else "0"}
    client = StdioClient([*clawback_command(), "mcp"], env)
    try:
        for message in messages:
            client.send(message)
        count = sum("id" in message for message in messages)
        answers = [json.loads(client.lines.get(timeout=TIMEOUT)) for _ in range(count)]
    finally:
        client.proc.kill()
        client.proc.wait(TIMEOUT)
    return sorted(answers, key=lambda answer: json.dumps(answer.get("id")))


@pytest.mark.parametrize(
    ("messages", "results"),
    [(MODERN, 7), (PROBE_TIMED_OUT, 4), (HANDSHAKE_FIRST, 3)],
    ids=["modern", "probe-timed-out", "handshake-first"],
)
def test_the_front_answers_claude_codes_modern_requests_as_the_sdk_does(
    home: Home, messages: list[dict[str, Any]], results: int
) -> None:
    """Claude Code 2.1.328 opens with server/discover (and an initialize behind it when the
    probe timed out): the first request decides the era for the front as for the SDK, so a
    tool call answers the same either way (it used to be refused for a missing envelope)."""
    sdk = answers_to(home.paths.home, messages, front=False)
    assert sum("result" in answer for answer in sdk) == results
    assert answers_to(home.paths.home, messages, front=True) == sdk


def test_the_versions_are_the_sdks() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    assert handshake.PROTOCOL_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert handshake.MODERN_VERSIONS == MODERN_PROTOCOL_VERSIONS


def test_the_handshake_needs_no_index_and_a_damaged_one_is_said_for_each_call(
    tmp_path: Path,
) -> None:
    """The front answers before the index opens; a damaged index is one line, per call."""
    home = tmp_path / "home"
    Home.open(home).close()
    (home / "clawback.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 8000)
    client = StdioClient([*clawback_command(), "mcp"], {**os.environ, "CLAWBACK_HOME": str(home)})
    try:
        assert _initialize(client)["serverInfo"]["name"] == "clawback"
        names = [tool["name"] for tool in client.request("tools/list")["tools"]]
        assert names == ["memory_search", "memory_get"]
        client._next += 1
        client.send({"id": client._next, "method": "tools/call",
                     "params": {"name": "memory_search", "arguments": {"query": "x"}}})  # fmt: skip
        answer = json.loads(client.lines.get(timeout=TIMEOUT))
        assert answer["id"] == client._next and "clawback reindex" in answer["error"]["message"]
    finally:
        client.proc.kill()
        client.proc.wait(TIMEOUT)


def answer_for(client: StdioClient, ident: int) -> dict[str, Any]:
    while True:
        line = client.lines.get(timeout=TIMEOUT)
        assert line, f"the server exited: {client.stderr()}"
        answer: dict[str, Any] = json.loads(line)
        if answer.get("id") == ident:
            return answer


@pytest.mark.parametrize("params_first", [True, False])
def test_a_request_nested_100k_deep_gets_an_error_for_its_id(
    client: StdioClient, params_first: bool
) -> None:
    _initialize(client)
    deep = "[" * 100_000 + "]" * 100_000
    fields = ['"jsonrpc":"2.0"', '"method":"tools/call"', '"id":7']
    params = '"params":{"name":"memory_search","arguments":{"query":' + deep + "}}"
    line = "{" + ",".join([params, *fields] if params_first else [*fields, params]) + "}\n"
    assert client.proc.stdin is not None
    client.proc.stdin.write(line.encode())
    client.proc.stdin.flush()
    error = answer_for(client, 7)["error"]
    assert error["code"] == -32600 and "nested too deeply" in error["message"]
    assert client.request("ping") == {}  # and it goes on


def peak_memory_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.parametrize("id_last", [False, True])
def test_a_line_of_100_mb_is_refused_as_it_comes_and_never_held(
    client: StdioClient, id_last: bool
) -> None:
    _initialize(client)
    client.call("memory_search", query="anything")  # the SDK has loaded: what it holds counts
    before = peak_memory_kb(client.proc.pid)
    head = b'{"jsonrpc":"2.0","method":"tools/call",' + (b"" if id_last else b'"id":9,')
    head += b'"params":{"name":"memory_search","arguments":{"query":"'
    tail = b'"}}' + (b',"id":9}' if id_last else b"}") + b"\n"
    assert client.proc.stdin is not None

    def send() -> None:
        assert client.proc.stdin is not None
        client.proc.stdin.write(head)
        chunk = b"a" * (1024 * 1024)
        for _ in range(100):
            client.proc.stdin.write(chunk)
        client.proc.stdin.write(tail)
        client.proc.stdin.flush()

    started = time.monotonic()
    sender = threading.Thread(target=send)
    sender.start()
    error = answer_for(client, 9)["error"]
    sender.join(TIMEOUT)
    assert error["code"] == -32600 and "larger than 1 MB" in error["message"]
    assert time.monotonic() - started < TIMEOUT  # a byte per read took 105 s
    assert peak_memory_kb(client.proc.pid) - before < 20_000  # never held whole
    assert client.request("ping") == {}


@pytest.mark.parametrize(
    ("line", "ident"),
    [
        (b'{"jsonrpc":"2.0","id":3,"method":"x"}', 3),
        (b'{"params":{"id":1,"a":[{"id":2}]},"id":"abc","method":"x"}', "abc"),
        (b'{"method":"notifications/initialized","jsonrpc":"2.0"}', None),
        (b'{"id":true}', None),
        (b'[{"id":1}]', None),
        (b'{"a":"}\\"id\\":4","id":5}', 5),
        (b'{"jsonrpc":"2.0","params":{"q":"' + b"x" * 100, None),  # cut short, no id seen
    ],
)
def test_the_id_is_found_without_parsing_the_line(line: bytes, ident: int | str | None) -> None:
    assert request_id(line) == ident


def test_the_id_of_a_line_cut_short_is_found_at_its_end() -> None:
    assert request_id(b'{"jsonrpc":"2.0","params":{"q":"xxx', tail=b'xxx"},"id":12}') == 12
