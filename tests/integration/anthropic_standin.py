"""A loopback stand-in for the Anthropic Messages API, for running the real ``claude`` CLI offline.

It answers ``POST /v1/messages`` the way the API does (server-sent events when ``stream`` is set,
one JSON message otherwise), echoing the last user text as ``"ECHO: ..."``, and can be told to
answer with an API error instead (401, 429, 529). When the request offers a ``StructuredOutput``
tool (what ``claude --json-schema`` does), the first answer calls that tool with a payload and the
follow-up ends the turn, so the CLI takes two turns as it does against the real API. A
``tool_script`` plays a model that calls tools: given each request, it names the tool to call
(and its input) or ``None`` to end the turn; :func:`tool_results` reads back what the tools said.

It must never listen anywhere but 127.0.0.1, and it serves a bounded number of requests: it is a
test double, not a proxy.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHUNK = 40
CACHE_READ = 200
CACHE_WRITE = 20
OUTPUT_TOKENS = 60
MAX_REQUESTS = 50
MAX_STALL = 30.0

_ERRORS = {
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class StandinState:
    """What the stand-in should answer, and what it saw."""

    status: int = 200
    structured: Any = None
    # request body -> (tool name, input) to call, or None to answer with text
    tool_script: Callable[[dict[str, Any]], tuple[str, dict[str, Any]] | None] | None = None
    delay: float = 0.0  # seconds between streamed events
    stall: float = 0.0  # seconds to wait before answering at all (at most MAX_STALL)
    # request body -> the reply text (default: "ECHO: " and the last user text)
    reply: Callable[[dict[str, Any]], str] | None = None
    max_requests: int = MAX_REQUESTS
    requests: list[dict[str, Any]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # when each request came (monotonic)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [
            block.get("text", "")
            for block in content or []
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        # The CLI may put <system-reminder> blocks before the prompt; the prompt is the last one.
        real = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
        return (real or texts or [""])[-1]
    return ""


def _has_tool_result(body: dict[str, Any]) -> bool:
    messages = body.get("messages", [])
    if not messages:
        return False
    content = messages[-1].get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every ``tool_result`` in the conversation so far, oldest first."""
    found: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            if isinstance(inner, list):
                inner = "".join(b.get("text", "") for b in inner if isinstance(b, dict))
            found.append(inner if isinstance(inner, str) else json.dumps(inner))
    return found


def _wants_structured(body: dict[str, Any]) -> bool:
    return any(tool.get("name") == "StructuredOutput" for tool in body.get("tools") or [])


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.server.state.paths.append("GET " + self.path)
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})

    def do_HEAD(self) -> None:
        self.server.state.paths.append("HEAD " + self.path)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        with state.lock:
            state.paths.append("POST " + self.path)
            if len(state.requests) >= state.max_requests:
                self._send_json(500, {"type": "error", "error": {"type": "api_error"}})
                return
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": 10})
            return
        if path != "/v1/messages":
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"type": "error", "error": {"type": "invalid_request_error"}})
            return
        with state.lock:
            state.requests.append(body)
            state.times.append(time.monotonic())
        if state.stall:
            time.sleep(min(state.stall, MAX_STALL))
        if state.status != 200:
            kind = _ERRORS.get(state.status, "api_error")
            self._send_json(
                state.status,
                {"type": "error", "error": {"type": kind, "message": f"mock {kind}"}},
            )
            return
        self._answer(body)

    def _answer(self, body: dict[str, Any]) -> None:
        model = body.get("model", "claude-mock")
        prompt = _last_user_text(body)
        input_tokens = 40 + len(prompt) // 4
        structured = _wants_structured(body) and not _has_tool_result(body)
        script = self.server.state.tool_script
        call = script(body) if script is not None else None
        if call is not None:
            name, arguments = call
            number = len(tool_results(body)) + 1
            blocks: list[dict[str, Any]] = [
                {"type": "tool_use", "id": f"toolu_mock{number}", "name": name, "input": arguments}
            ]
            stop_reason = "tool_use"
        elif structured:
            payload = self.server.state.structured
            if payload is None:
                payload = {"echo": prompt}
            structured_call = {"type": "tool_use", "id": "toolu_mock", "name": "StructuredOutput"}
            blocks = [{**structured_call, "input": payload}]
            stop_reason = "tool_use"
        else:
            text = "ECHO: " + prompt if not _has_tool_result(body) else "Done."
            if self.server.state.reply is not None:
                text = self.server.state.reply(body)
            blocks = [{"type": "text", "text": text}]
            stop_reason = "end_turn"
        usage = {
            "input_tokens": input_tokens,
            "output_tokens": 1,
            "cache_read_input_tokens": CACHE_READ,
            "cache_creation_input_tokens": CACHE_WRITE,
        }
        message = {
            "id": "msg_mock",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            full = dict(message, content=blocks, stop_reason=stop_reason)
            full["usage"] = dict(usage, output_tokens=OUTPUT_TOKENS)
            self._send_json(200, full)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self._event("message_start", {"type": "message_start", "message": message})
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start: dict[str, Any] = {"type": "text", "text": ""}
                self._event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
                text = block["text"]
                for i in range(0, len(text), CHUNK):
                    delta = {"type": "text_delta", "text": text[i : i + CHUNK]}
                    self._event(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                self._event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                self._event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": OUTPUT_TOKENS},
            },
        )
        self._event("message_stop", {"type": "message_stop"})
        self.close_connection = True

    def _event(self, name: str, data: dict[str, Any]) -> None:
        if self.server.state.delay:
            time.sleep(self.server.state.delay)
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: StandinState


class AnthropicStandin:
    """Serve the stand-in on a random loopback port in a background thread.

    Use as a context manager; ``base_url`` goes into ``ANTHROPIC_BASE_URL``.
    """

    def __init__(
        self,
        status: int = 200,
        structured: Any = None,
        delay: float = 0.0,
        stall: float = 0.0,
        tool_script: Callable[[dict[str, Any]], tuple[str, dict[str, Any]] | None] | None = None,
        reply: Callable[[dict[str, Any]], str] | None = None,
        max_requests: int = MAX_REQUESTS,
    ) -> None:
        self.state = StandinState(
            status=status, structured=structured, delay=delay, stall=stall,
            tool_script=tool_script, reply=reply, max_requests=max_requests,
        )  # fmt: skip
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = self.state
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> AnthropicStandin:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


if __name__ == "__main__":  # manual use: python anthropic_standin.py [status]
    import sys

    with AnthropicStandin(status=int(sys.argv[1]) if len(sys.argv) > 1 else 200) as standin:
        print(standin.base_url, flush=True)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            time.sleep(1)
