"""Every request line that reaches the SDK is one it can answer.

The SDK's stdio transport parses each line with pydantic's JSON parser, which refuses a lone
surrogate escape (``"data\\ud800base"``: legal JSON, not encodable text), and drops a line it
cannot parse or validate without a word: the client waits forever for that request. So each
line reaches the SDK through :mod:`.front`, which hands it on through :func:`mend_line` as it
came, except a message with a lone surrogate (replaced by U+FFFD, as everywhere clawback reads
JSON: :mod:`clawback.core.safejson`) and a request the SDK would drop, which is replaced by a
call of a method that does not exist, named for what was wrong, so the client gets an error for
its request id.

A line no parser should be given (too large, nested too deeply) is answered by the front itself,
for the id :func:`request_id` finds without parsing the line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clawback.core.safejson import loads


def mend_line(line: bytes) -> bytes:
    """``line`` as the SDK can parse and answer it (unchanged when it already can)."""
    from mcp_types import jsonrpc_message_adapter  # the SDK's parser: loaded by the SDK's side

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


TAIL_BYTES = 4096  # of a line cut short, what is searched for an id given last
#: JSON tokens: strings, runs of opening or closing brackets, ``:``, ``,``, other scalars
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{\[]+|[}\]]+|[:,]|[^\s{}\[\]:,"]+')
#: a top-level id as the last member of an object cut short at its head
_ID_AT_THE_END = re.compile(
    rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$'
)


def _scalar(token: bytes) -> int | str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def request_id(line: bytes, tail: bytes = b"") -> int | str | None:
    """The ``id`` member of the JSON object ``line`` holds, found without parsing the rest:
    ``line`` may nest too deeply for a parser, be cut short, or not be JSON past its id.
    For a line cut short, ``tail`` is its end, where a client may have put the id last.
    ``None`` when there is no such member (a notification, or no object at all)."""
    depth = 0
    key: bytes | None = None
    after_colon = False
    for found in _TOKEN.finditer(line):
        token = found.group()
        first = token[:1]
        if first in b"{[":
            if depth == 0 and first != b"{":
                return None
            depth += len(token)
            key, after_colon = None, False
        elif first in b"}]":
            depth -= len(token)
            if depth <= 0:
                return None
        elif depth != 1:
            continue
        elif token == b":":
            after_colon = key is not None
        elif token == b",":
            key, after_colon = None, False
        elif after_colon:
            if key == b'"id"':
                return _scalar(token)
            key, after_colon = None, False
        else:
            key = token if first == b'"' else None
    last = _ID_AT_THE_END.search((tail or line)[-TAIL_BYTES:])
    return _scalar(last.group(1)) if last else None
