"""The one entry shape every format's ``parse_line`` shares: check the line, pick a handler.

A line that is not an object, has no type, or has a type nobody handles becomes
``ParsedLine(unknown=...)``; a known type with nothing to index becomes an empty line; and a
handler bug becomes an ``unknown`` too, because one odd line must never stop a multi-GB ingest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from clawback.core.records import ParsedLine

Handler = Callable[[dict[str, Any]], ParsedLine]


def str_or_none(value: Any) -> str | None:
    """A field that should be text: itself if it is, else ``None`` (any other JSON value)."""
    return value if isinstance(value, str) else None


def dispatch(
    obj: Any,
    handlers: Mapping[str, Handler],
    ignored: frozenset[str] = frozenset(),
    *,
    noun: str = "line",
) -> ParsedLine:
    if not isinstance(obj, dict):
        return ParsedLine(unknown=f"not a JSON object ({type(obj).__name__})")
    line_type = obj.get("type")
    if not isinstance(line_type, str):
        return ParsedLine(unknown=f"line without a type ({type(line_type).__name__})")
    handler = handlers.get(line_type)
    if handler is None:
        if line_type in ignored:
            return ParsedLine()
        return ParsedLine(unknown=f"unknown {noun} type {line_type[:40]!r}")
    try:
        return handler(obj)
    except Exception as error:  # a bug, but one odd line must not stop a multi-GB ingest
        return ParsedLine(unknown=f"parser error: {type(error).__name__}")
