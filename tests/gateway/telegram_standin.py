"""A loopback stand-in of the Telegram Bot API, for the real python-telegram-bot to talk to.

It serves ``/bot<token>/<method>`` on 127.0.0.1 as Telegram does for the methods the gateway
uses: getMe, getUpdates (long polling, updates below the offset confirmed and forgotten),
sendMessage (HTML checked as strictly as Telegram: an unknown or unclosed tag is a 400 "can't
parse entities"; more than 4,096 characters is a 400), sendChatAction, editMessageText; and on
demand 429 answers with ``retry_after`` and updates delivered again. Tests push updates with
:meth:`TelegramStandin.push` and read what the bot sent in :attr:`TelegramStandin.sent`.
Standard library only; it listens on loopback and nowhere else.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOKEN = "123456789:AAHk0-standin_token_for_tests_only1"
BOT_ID = 123456789
BOT_USERNAME = "memory_test_bot"
_TAG = re.compile(r"<(/?)([a-z-]+)(?:\s[^>]*)?>")
_ALLOWED_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre", "a"}
_ALLOWED_TAGS |= {"blockquote", "tg-spoiler", "span"}


def html_problem(text: str) -> str | None:
    """Why Telegram would refuse ``text`` as HTML, or None."""
    stack: list[str] = []
    for match in _TAG.finditer(text):
        closing, name = match.group(1), match.group(2)
        if name not in _ALLOWED_TAGS:
            return f'unsupported start tag "{name}"'
        if closing:
            if not stack or stack[-1] != name:
                return f'unexpected end tag "{name}"'
            stack.pop()
        else:
            stack.append(name)
    if stack:
        return f'can\'t find end tag corresponding to start tag "{stack[-1]}"'
    if re.search(r"<(?![a-z/])", text):
        return "unexpected '<'"
    return None


def visible_length(text: str, html: bool) -> int:
    """The length Telegram checks: UTF-16 units of the text after entity parsing."""
    if html:
        text = _TAG.sub("", text)
        for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&amp;", "&")):
            text = text.replace(entity, char)
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Sent:
    chat_id: int
    text: str
    parse_mode: str | None
    reply_to: int | None
    at: float


@dataclass
class TelegramStandin:
    token: str = TOKEN
    updates: list[dict[str, Any]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    actions: list[tuple[int, str]] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    confirmed: int = 0  # the highest offset a getUpdates asked for
    rate_limited: int = 0  # 429s still to answer to sendMessage
    retry_after: int = 1
    repeat_next: int = 0  # updates already confirmed to deliver again in the next answer
    html_rejected: int = 0  # sendMessage calls refused for their formatting
    url: str = ""
    _next_id: int = 1000
    _message_id: int = 1
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _delivered: list[dict[str, Any]] = field(default_factory=list)

    # -- what a test does ------------------------------------------------------------------------

    def push(
        self,
        text: str | None,
        *,
        chat_id: int = 42,
        user_id: int = 42,
        username: str = "alice",
        first_name: str = "Alice",
        chat_type: str = "private",
        kind: str = "message",
        extra: dict[str, Any] | None = None,
        reply_to_bot: bool = False,
    ) -> int:
        """Queue an update (``text`` None: a message without text); returns its update id."""
        with self._cond:
            self._next_id += 1
            self._message_id += 1
            message: dict[str, Any] = {
                "message_id": self._message_id,
                "date": int(time.time()),
                "chat": {"id": chat_id, "type": chat_type},
            }
            if chat_type == "private":
                message["chat"]["first_name"] = first_name
            else:
                message["chat"]["title"] = f"Group {chat_id}"
            if kind != "channel_post":
                message["from"] = {
                    "id": user_id,
                    "is_bot": False,
                    "first_name": first_name,
                    "username": username,
                }
            if text is not None:
                message["text"] = text
                mention = f"@{BOT_USERNAME}"
                at = text.find(mention)
                if at >= 0:
                    offset = len(text[:at].encode("utf-16-le")) // 2
                    message["entities"] = [
                        {"type": "mention", "offset": offset, "length": len(mention)}
                    ]
            if reply_to_bot:
                message["reply_to_message"] = {
                    "message_id": 1,
                    "date": int(time.time()),
                    "chat": message["chat"],
                    "from": {"id": BOT_ID, "is_bot": True, "first_name": "Memory"},
                    "text": "an earlier answer",
                }
            if kind == "edited_message":
                message["edit_date"] = int(time.time())
            message.update(extra or {})
            update = {"update_id": self._next_id, kind: message}
            self.updates.append(update)
            self._cond.notify_all()
            return self._next_id

    def texts(self, chat_id: int | None = None) -> list[str]:
        return [s.text for s in self.sent if chat_id is None or s.chat_id == chat_id]

    def wait_for(self, count: int, timeout: float = 20.0, chat_id: int | None = None) -> list[str]:
        """Block until ``count`` messages were sent (to ``chat_id``); returns their texts."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            texts = self.texts(chat_id)
            if len(texts) >= count:
                return texts
            time.sleep(0.02)
        raise AssertionError(f"only {len(self.texts(chat_id))} of {count} messages were sent")

    def control(self, what: str, params: dict[str, Any]) -> Any:
        """What :func:`serve_forever` answers on ``/control/...`` (``push``, ``sent``)."""
        if what == "push":
            text = params.pop("text", None)
            return self.push(text, **params)
        if what == "sent":
            return [asdict(s) for s in self.sent]
        return None

    # -- the API -----------------------------------------------------------------------------------

    def answer(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.calls.append(method)
        if method == "getMe":
            return 200, _ok(
                {"id": BOT_ID, "is_bot": True, "first_name": "Memory", "username": BOT_USERNAME}
            )
        if method == "getUpdates":
            return 200, _ok(self._get_updates(params))
        if method == "sendChatAction":
            self.actions.append((int(params["chat_id"]), str(params.get("action"))))
            return 200, _ok(True)
        if method == "sendMessage":
            return self._send(params)
        if method == "editMessageText":
            self.edits.append(params)
            return 200, _ok(self._message(int(params["chat_id"]), str(params["text"])))
        if method in ("close", "logOut", "deleteWebhook"):
            return 200, _ok(True)
        return 404, {"ok": False, "error_code": 404, "description": "Not Found: method not found"}

    def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        limit = int(params.get("limit") or 100)
        deadline = time.monotonic() + min(timeout, 30)
        with self._cond:
            if offset:
                self.confirmed = max(self.confirmed, offset)
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
            while not self.updates and not self.repeat_next:
                left = deadline - time.monotonic()
                if left <= 0:
                    return []
                self._cond.wait(left)
            batch = self.updates[:limit]
            if self.repeat_next:
                batch = self._delivered[-self.repeat_next :] + batch
                self.repeat_next = 0
            self._delivered.extend(u for u in batch if u not in self._delivered)
            return batch

    def _send(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.rate_limited > 0:
            self.rate_limited -= 1
            return 429, {
                "ok": False,
                "error_code": 429,
                "description": f"Too Many Requests: retry after {self.retry_after}",
                "parameters": {"retry_after": self.retry_after},
            }
        chat_id, text = int(params["chat_id"]), str(params.get("text", ""))
        mode = params.get("parse_mode")
        if mode == "HTML":
            problem = html_problem(text)
            if problem:
                self.html_rejected += 1
                return _bad(f"Bad Request: can't parse entities: {problem}")
        if not text.strip():
            return _bad("Bad Request: message text is empty")
        if visible_length(text, mode == "HTML") > 4096:
            return _bad("Bad Request: message is too long")
        reply = params.get("reply_parameters")
        reply_to = json.loads(reply).get("message_id") if isinstance(reply, str) else None
        self.sent.append(Sent(chat_id, text, mode, reply_to, time.monotonic()))
        return 200, _ok(self._message(chat_id, text))

    def _message(self, chat_id: int, text: str) -> dict[str, Any]:
        self._message_id += 1
        return {
            "message_id": self._message_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "Memory"},
            "text": text,
        }


def _ok(result: Any) -> dict[str, Any]:
    return {"ok": True, "result": result}


def _bad(description: str) -> tuple[int, dict[str, Any]]:
    return 400, {"ok": False, "error_code": 400, "description": description}


def _handler(standin: TelegramStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            kind = self.headers.get("Content-Type") or ""
            params: dict[str, Any] = {}
            if "json" in kind and body:
                params = json.loads(body)
            elif body:
                params = dict(urllib.parse.parse_qsl(body.decode("utf-8"), keep_blank_values=True))
            token, _, method = self.path.removeprefix("/bot").partition("/")
            if self.path.startswith("/control/"):  # a test in another process drives it
                code, answer = 200, standin.control(self.path.removeprefix("/control/"), params)
            elif token != standin.token:
                code, answer = 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
            else:
                code, answer = standin.answer(method, params)
            data = json.dumps(answer).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

        do_GET = do_POST

    return Handler


@contextmanager
def running_standin() -> Iterator[TelegramStandin]:
    """A stand-in listening on a free loopback port for the length of the block."""
    standin = TelegramStandin()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(standin))
    server.daemon_threads = True
    standin.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield standin
    finally:
        with standin._cond:
            standin._cond.notify_all()
        server.shutdown()
        server.server_close()


def serve_forever(port_file: str) -> None:
    """Run a stand-in in this process until killed, writing its address to ``port_file``
    (benches run it apart, as Telegram is, so it takes no time from the gateway's process)."""
    with running_standin() as standin:
        Path(port_file).write_text(standin.url)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    serve_forever(sys.argv[1])
