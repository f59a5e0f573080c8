"""Every request line that reaches the SDK is one it can answer.

The SDK's stdio transport parses each line with pydantic's JSON parser, which refuses a lone
surrogate escape (``"data\\ud800base"``: legal JSON, not encodable text), and drops a line it
cannot parse or validate without a word: the client waits forever for that request. So stdin
reaches the SDK through a pipe fed by :func:`mend_stdin`'s thread, which hands on each line as
it came, except a message with a lone surrogate (replaced by U+FFFD, as everywhere clawback reads
JSON: :mod:`clawback.core.safejson`) and a request the SDK would drop, which is replaced by a
call of a method that does not exist, named for what was wrong, so the client gets an error for
its request id.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, BinaryIO

from clawback.core.safejson import loads
from mcp_types import jsonrpc_message_adapter


def mend_line(line: bytes) -> bytes:
    """``line`` as the SDK can parse and answer it (unchanged when it already can)."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
        return line
    except ValueError:
        pass
    try:
        message = loads(line.decode("utf-8", "replace"))
    except ValueError:
        return line  # not JSON: there is no request id to answer
    if not isinstance(message, dict):
        return line
    mended = _dump(message)
    try:
        jsonrpc_message_adapter.validate_json(mended, by_name=False)
        return mended
    except ValueError:
        pass
    ident = message.get("id")
    if "method" not in message or not isinstance(ident, int | str) or isinstance(ident, bool):
        return line  # a notification or a response: nobody waits for an answer
    method = message.get("method")
    named = method if isinstance(method, str) else "?"
    why = f"{named} (invalid request: its fields do not fit the schema)"
    return _dump({"jsonrpc": "2.0", "id": ident, "method": why})


def _dump(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"


def mend_stdin() -> None:
    """Put a pipe on fd 0, fed line by line through :func:`mend_line` from the real stdin.

    The SDK then claims fd 0 as it always does; end of input reaches it when the real stdin
    ends, so a client closing stdin still stops the server.
    """
    source = os.fdopen(os.dup(0), "rb", buffering=0)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    sink = os.fdopen(write_end, "wb", buffering=0)
    threading.Thread(
        target=_pump, args=(source, sink), name="clawback-mcp-stdin", daemon=True
    ).start()


def _pump(source: BinaryIO, sink: BinaryIO) -> None:
    with source, sink:
        for line in source:
            try:
                sink.write(mend_line(line))
            except OSError:  # the server stopped reading: nothing left to feed
                return
