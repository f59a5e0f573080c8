"""The memory server's stdio front: the handshake answered at once, every other request relayed
to the MCP SDK once it has loaded, and no request left without an answer.

Claude Code starts ``clawback mcp`` with every session and waits for its ``initialize`` and
``tools/list`` before the first request; the SDK and the index take most of a second to load.
So this front owns the real stdin and stdout from the process's first moments:

- it reads stdin in blocks (never a byte per call) and refuses a line over
  :data:`MAX_LINE_BYTES` as soon as it is that long, answering its id with an error;
- the first request decides the protocol era, once, by the SDK's rule (an enveloped request
  opens a modern connection, anything else the handshake era); the SDK is handed the same
  opening, so both serve one era, and a request of the other era gets the SDK's refusal;
- it answers ``initialize`` (for a well-formed request) and, once initialized, ``tools/list``,
  ``prompts/list``, ``resources/list``, ``resources/templates/list`` and ``ping``, or in the
  modern era ``server/discover`` and the enveloped listings, from :mod:`.handshake`, which holds
  what the SDK answers to them (a test compares the two);
- it hands every other line to the SDK through a pipe on fd 0 (mended by :mod:`.wire` first, so
  the SDK never drops one), and the client's ``initialize`` too, under an id of its own whose
  answer it drops, so the SDK's session is initialized exactly as the client asked;
- it relays what the SDK writes (a pipe on fd 1) to the real stdout, one whole line at a time.

Nothing here imports the SDK, pydantic or the index: :func:`serve` is given ``load``, which
does, on the main thread, once a request needs it (or :data:`LOAD_AFTER_S` after the start), so
a ``claude -p`` that calls no tool pays for neither. ``CLAWBACK_MCP_FRONT=0`` relays everything
to the SDK (what the tests compare the front against).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any

from clawback.core.mcp import handshake
from clawback.core.mcp.wire import TAIL_BYTES, request_id

MAX_LINE_BYTES = 1024 * 1024  # no memory tool takes more than a few kilobytes
HEAD_BYTES = 64 * 1024  # what is kept of a line refused for its size, to find its id
READ_BYTES = 64 * 1024
REPLAY_ID = "clawback-front-initialize"
#: the SDK and the index load when a request needs them, or this long after the handshake: a
#: session that never calls a tool (most ``claude -p``) never pays for them, and an interactive
#: one finds them loaded by its first call
LOAD_AFTER_S = 3.0
SWITCH_ENV = "CLAWBACK_MCP_FRONT"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
_STOP = b""


def _dump(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def error_line(ident: int | str, code: int, message: str) -> bytes:
    return _dump({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})


class Wire:
    """The real stdout: whole lines, one writer at a time; a client gone is not an error."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.closed = False

    def write(self, data: bytes) -> None:
        with self.lock:
            view = memoryview(data)
            while view and not self.closed:
                try:
                    view = view[os.write(self.fd, view) :]
                except InterruptedError:
                    continue
                except OSError:
                    self.closed = True


class Front:
    """What happens to each line the client sends."""

    def __init__(self, wire: Wire, to_sdk: queue.Queue[bytes], *, answer: bool = True) -> None:
        self.wire = wire
        self.to_sdk = to_sdk
        self.answer = answer
        self.era: str | None = None  # "legacy" or "modern": what the first request opened
        self.version: str | None = None  # the protocol version, once initialize was answered
        self.failed: str | None = None  # why the SDK side could not load
        self.loaded = threading.Event()  # the SDK side loaded, or failed to
        self.wanted = threading.Event()  # a request needs the SDK, or the client has gone

    def take(self, line: bytes) -> None:
        """One line from the client (without its newline)."""
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except RecursionError:
            self._refuse(line, "the request is nested too deeply")
            return
        except ValueError:
            message = None
        if self.answer and isinstance(message, dict) and self._answered(message):
            return
        self.to_sdk.put(line)
        if not self.answer or request_id(line) is not None:
            self.wanted.set()  # someone waits for the SDK's answer

    def refuse_oversized(self, head: bytes, tail: bytes) -> None:
        why = f"the request is larger than {MAX_LINE_BYTES // 1024 // 1024} MB"
        self._refuse(head, why, tail)

    def _refuse(self, line: bytes, why: str, tail: bytes = b"") -> None:
        ident = request_id(line, tail)
        if ident is not None:
            self.wire.write(error_line(ident, INVALID_REQUEST, f"Invalid request: {why}"))

    def _answered(self, message: dict[str, Any]) -> bool:
        """Whether the front answered ``message`` itself (and relayed what the SDK must see)."""
        ident, method = message.get("id"), message.get("method")
        if (
            not isinstance(ident, int | str)
            or isinstance(ident, bool)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(method, str)
        ):
            return False
        params = message.get("params")
        opening = self.era is None
        if opening:  # the first request decides the era, once, as the SDK decides it
            modern = method != "initialize" and handshake.has_envelope(params)
            self.era = "modern" if modern else "legacy"
        if self.era == "legacy":
            return self._answered_legacy(message, ident, method, params)
        if not self._answered_modern(ident, method, params):
            return False
        if opening:  # the SDK opens its connection in the same era
            envelope = {"_meta": params["_meta"]} if isinstance(params, dict) else {}
            replay = {"jsonrpc": "2.0", "id": REPLAY_ID, "method": "server/discover",
                      "params": envelope}  # fmt: skip
            self.to_sdk.put(_dump(replay).rstrip(b"\n"))
        return True

    def _answered_legacy(
        self, message: dict[str, Any], ident: int | str, method: str, params: Any
    ) -> bool:
        """The handshake era: ``initialize`` answered here and relayed (under an id of the
        front's) so the SDK's session is initialized as the client asked; then the listings.
        A modern request on this connection goes to the SDK, which refuses it."""
        if handshake.has_envelope(params) and method != "initialize":
            return False
        if method == "initialize":
            result = handshake.initialize(params)
            if result is None:
                return False  # the SDK says what is wrong with it
            self.wire.write(_dump({"jsonrpc": "2.0", "id": ident, "result": result}))
            self.version = result["protocolVersion"]
            self.to_sdk.put(_dump({**message, "id": REPLAY_ID}).rstrip(b"\n"))
            return True
        if self.version is None:
            return False
        result = handshake.listing(method, params)
        if result is None:
            return False
        self.wire.write(_dump({"jsonrpc": "2.0", "id": ident, "result": result}))
        return True

    def _answered_modern(self, ident: int | str, method: str, params: Any) -> bool:
        """The modern era (each request's envelope in ``_meta``, no handshake):
        ``server/discover`` and the listings answered here, ``initialize`` refused as the SDK
        refuses it (Claude Code sends one when its discover probe timed out, then discovers
        again), ``subscriptions/listen`` acknowledged and held open as the SDK holds it
        (nothing this server lists ever changes, so nothing is ever sent on it)."""
        if method == "initialize":
            error = handshake.initialize_refused(params)
            if error is None:
                return False
            self.wire.write(_dump({"jsonrpc": "2.0", "id": ident, "error": error}))
            return True
        if handshake.modern_version(params) is None:
            return False  # the SDK says what is wrong with the envelope
        if method == "subscriptions/listen":
            notifications = params.get("notifications") if isinstance(params, dict) else None
            if not isinstance(notifications, dict):
                return False
            acknowledged = {
                "_meta": {"io.modelcontextprotocol/subscriptionId": ident},
                "notifications": notifications,
            }
            self.wire.write(
                _dump({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": acknowledged})
            )
            return True
        result = handshake.modern(method, params)
        if result is None:
            return False
        self.wire.write(_dump({"jsonrpc": "2.0", "id": ident, "result": result}))
        return True


def pump(fd: int, front: Front) -> None:
    """Read the client's lines in blocks, bounded, into ``front``; at the end, stop the SDK."""
    buffer = bytearray()
    oversized: bytes | None = None  # the head of a line being skipped for its size
    tail = b""  # and its last bytes so far
    try:
        while True:
            try:
                block = os.read(fd, READ_BYTES)
            except InterruptedError:
                continue
            except OSError:
                break
            if not block:
                break
            buffer += block
            while True:
                end = buffer.find(b"\n")
                if end < 0:
                    break
                if oversized is not None:
                    front.refuse_oversized(oversized, (tail + bytes(buffer[:end]))[-TAIL_BYTES:])
                    oversized, tail = None, b""
                else:
                    front.take(bytes(buffer[:end]))
                del buffer[: end + 1]
            if oversized is None and len(buffer) > MAX_LINE_BYTES:
                oversized = bytes(buffer[:HEAD_BYTES])
            if oversized is not None:
                tail = (tail + bytes(buffer))[-TAIL_BYTES:]
                buffer.clear()  # skipped as it comes: never held
        if buffer and oversized is None:
            front.take(bytes(buffer))
    finally:
        front.to_sdk.put(_STOP)
        if not front.loaded.is_set():
            os._exit(0)  # the client left before anything needed the SDK: nothing to finish
        front.wanted.set()


def feed(to_sdk: queue.Queue[bytes], fd: int, front: Front) -> None:
    """Hand the queued lines to the SDK once it has loaded (mended: :func:`.wire.mend_line`),
    or, when it could not load, answer each request with why."""
    front.loaded.wait()
    from clawback.core.mcp.wire import mend_line

    with os.fdopen(fd, "wb", buffering=0) as sink:
        while True:
            line = to_sdk.get()
            if line == _STOP:
                return
            if front.failed is not None:
                ident = request_id(line)
                if ident is not None and ident != REPLAY_ID:
                    front.wire.write(error_line(ident, INTERNAL_ERROR, front.failed))
                continue
            try:
                sink.write(mend_line(line + b"\n"))
            except OSError:  # the SDK stopped reading
                return


def relay(fd: int, wire: Wire, done: threading.Event) -> None:
    """Copy the SDK's output to the wire, line by line, without the answer to the relayed
    initialize; anything that is not a JSON message (a stray print) goes to stderr."""
    buffer = bytearray()
    marker = f'"{REPLAY_ID}"'.encode()
    with os.fdopen(fd, "rb", buffering=0) as source:
        while not done.is_set():
            block = source.read(READ_BYTES)
            if not block:
                return
            buffer += block
            while (end := buffer.find(b"\n")) >= 0:
                line = bytes(buffer[: end + 1])
                del buffer[: end + 1]
                if line == _END_OF_SDK:
                    done.set()
                    return
                if not line.lstrip().startswith(b"{"):
                    with contextlib.suppress(OSError):
                        os.write(2, line)
                elif marker not in line[:200] or request_id(line) != REPLAY_ID:
                    wire.write(line)


_END_OF_SDK = b"\x00clawback-sdk-done\n"


def serve(load: Callable[[], Callable[[], None]], log: Callable[[str], None]) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes stdin.

    ``load()`` runs on this thread once a request needs it, or :data:`LOAD_AFTER_S` after
    the start: it imports the SDK, opens the index and returns the function that runs the
    SDK's stdio server (which claims fd 0 and fd 1, by then the front's pipes). A client that
    closes stdin before then ends the process at once. A ``ClawbackError`` it raises (a
    damaged index) is said once on stderr (``log``) and answers every request after the
    handshake.
    """
    from clawback.core.errors import ClawbackError

    real_in, real_out = os.dup(0), os.dup(1)
    sdk_in, feed_end = os.pipe()
    relay_end, sdk_out = os.pipe()
    os.dup2(sdk_in, 0)
    os.dup2(sdk_out, 1)
    os.close(sdk_in)
    os.close(sdk_out)
    wire = Wire(real_out)
    to_sdk: queue.Queue[bytes] = queue.Queue()
    front = Front(wire, to_sdk, answer=os.environ.get(SWITCH_ENV, "").strip() != "0")
    relayed = threading.Event()
    threads = [
        threading.Thread(target=pump, args=(real_in, front), name="clawback-mcp-stdin"),
        threading.Thread(target=feed, args=(to_sdk, feed_end, front), name="clawback-mcp-feed"),
        threading.Thread(target=relay, args=(relay_end, wire, relayed), name="clawback-mcp-out"),
    ]
    for thread in threads:
        thread.daemon = True
        thread.start()
    front.wanted.wait(LOAD_AFTER_S)
    try:
        run = load()
    except ClawbackError as exc:
        front.failed = " ".join(str(exc).split())
        log(front.failed)
        front.loaded.set()
        threads[0].join()  # answer with why until the client closes stdin
        threads[1].join()
        return
    front.loaded.set()
    run()
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        os.write(1, _END_OF_SDK)  # fd 1 is the relay's pipe again once the SDK let it go
    relayed.wait(5.0)
