"""Transcript parsers: one module per format, each a pure ``parse_line(obj) -> ParsedLine``.

The ingestor reads a file, decodes its first few JSON lines, asks :func:`detect_lines` which
format they are, then feeds every decoded line to ``PARSERS[source]``. Parsers never read files,
never raise and hold no state between lines, so ingestion can resume at any byte offset.

``ParsedLine(unknown=...)`` means "valid JSON, but not a shape this parser knows": count it,
do not fail. An empty ``ParsedLine()`` means "a known line that holds nothing to index".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from clawback.core.formats import claude_code, native, openclaw
from clawback.core.records import ParsedLine, Source

PARSERS: dict[Source, Callable[[Any], ParsedLine]] = {
    Source.CLAUDE_CODE: claude_code.parse_line,
    Source.OPENCLAW: openclaw.parse_line,
    Source.NATIVE: native.parse_line,
}

# Claude Code line types too generic to trust without a Claude Code field beside them.
_GENERIC_TYPES = frozenset({"user", "assistant", "system", "summary", "tool_use", "tool_result"})
_CLAUDE_CODE_FIELDS = ("sessionId", "uuid", "parentUuid", "leafUuid")


def detect_line(first_obj: Any) -> Source | None:
    """Name the format of a file from its first decoded JSON line; ``None`` if not ours.

    - ``{"type": "session", "format": "clawback", ...}`` -> native;
    - any other ``{"type": "session", ...}`` header without a ``format`` -> OpenClaw / pi
      (as is a headerless file starting with a pi ``message`` entry);
    - a Claude Code line type: the specific ones (``queue-operation``, ``file-history-snapshot``,
      ...) on their own, the generic ones (``user``, ``summary``, ...) only beside a Claude Code
      field such as ``sessionId`` or ``leafUuid``, and any other typed line that carries a
      ``sessionId`` string (Claude Code adds line types often and every one carries it);
    - an untyped line with a ``sessionId`` and a ``message.usage``: a usage-only Claude Code
      line (as ccusage's fixtures hold them).

    Codex (``session_meta``), Gemini CLI (untyped header) and Cursor (untyped lines) get None.
    """
    if not isinstance(first_obj, dict):
        return None
    line_type = first_obj.get("type")
    if not isinstance(line_type, str):
        # An untyped line with a session id and a message's usage: Claude Code's usage as
        # ccusage's fixtures write it (read for its tokens alone).
        message = first_obj.get("message")
        if (
            line_type is None
            and isinstance(first_obj.get("sessionId"), str)
            and isinstance(message, dict)
            and isinstance(message.get("usage"), dict)
        ):
            return Source.CLAUDE_CODE
        return None
    if line_type == "session":
        if native.is_native_header(first_obj):
            return Source.NATIVE
        if "format" in first_obj or "key" in first_obj:
            return None
        return Source.OPENCLAW
    if line_type == "message" and isinstance(first_obj.get("message"), dict):
        return Source.OPENCLAW
    if line_type in _GENERIC_TYPES:
        if any(isinstance(first_obj.get(field), str) for field in _CLAUDE_CODE_FIELDS):
            return Source.CLAUDE_CODE
        return None
    if line_type in claude_code.KNOWN_TYPES or isinstance(first_obj.get("sessionId"), str):
        return Source.CLAUDE_CODE
    return None


def detect_lines(objs: Iterable[Any]) -> Source | None:
    """Name a file's format from its first decoded lines: the first line that tells wins.

    A line that says nothing (oh-my-pi's leading ``{"type": "title"}``, a stray non-object, a
    generic ``user`` line without a Claude Code field) does not decide; a file none of whose
    first lines has a known shape (Cursor's untyped ``{"role": ...}`` lines, Codex, Gemini CLI,
    usage logs without a session id or time) is not ours and is skipped by name, never parsed
    as Claude Code.
    """
    for obj in objs:
        source = detect_line(obj)
        if source is not None:
            return source
    return None


__all__ = ["PARSERS", "detect_line", "detect_lines"]
