"""clawback's own transcript format ("native"): the line builders and the parser.

The chat engine appends one JSON object per line to ``<session id>.jsonl``; the format is
specified in ``docs/native-format.md``. The builders below are the only code that shapes those
lines, so the writer and :func:`parse_line` cannot drift apart. Builders are pure: they return a
dict and never write, serialise or read the clock (callers pass timestamps, so tests are exact).

``parse_line`` is a pure function of one decoded line and never raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from clawback.core.formats.dispatch import dispatch, str_or_none
from clawback.core.formats.session_keys import key_channel
from clawback.core.formats.token_usage import native_usage
from clawback.core.records import Entry, Kind, ParsedLine, Role, SessionMeta

FORMAT = "clawback"
VERSION = 1
ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM}


# --- builders -------------------------------------------------------------------------------


def session_header(
    session_id: str,
    key: str,
    created: str,
    parent: str | None = None,
    label: str | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """The first line of every native transcript; ``format`` tells it apart from pi's header."""
    line = {
        "type": "session",
        "format": FORMAT,
        "version": VERSION,
        "id": session_id,
        "key": key,
        "created": created,
        "parent": parent,
    }
    return _with_set(line, label=label, cwd=cwd)


def message_event(
    message_id: str,
    role: str,
    content: str,
    timestamp: str,
    model: str | None = None,
    usage: Mapping[str, Any] | None = None,
    partial: bool = False,
) -> dict[str, Any]:
    """One message. ``partial`` marks a reply cut short (cancelled or killed mid-stream)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    line = {
        "type": "message",
        "id": message_id,
        "role": role,
        "content": content,
        "timestamp": timestamp,
    }
    return _with_set(
        line,
        model=model,
        usage=None if usage is None else dict(usage),
        partial=True if partial else None,
    )


def compaction_event(
    event_id: str,
    timestamp: str,
    summary: str,
    first_kept_id: str | None,
    tokens_before: int | None,
    tokens_after: int | None,
    model: str | None = None,
) -> dict[str, Any]:
    """A compaction: ``summary`` replaces every message before ``first_kept_id``."""
    line = {
        "type": "compaction",
        "id": event_id,
        "timestamp": timestamp,
        "summary": summary,
        "first_kept_id": first_kept_id,
        "tokens_before": tokens_before,
        "tokens_after": tokens_after,
    }
    return _with_set(line, model=model)


def _with_set(line: dict[str, Any], **optional: Any) -> dict[str, Any]:
    """``line`` and then, in order, the optional fields that are set: an unset one is left out,
    not written as null (``docs/native-format.md``)."""
    for name, value in optional.items():
        if value is not None:
            line[name] = value
    return line


def tool_call_event(
    call_id: str, name: str, arguments: Mapping[str, Any], timestamp: str
) -> dict[str, Any]:
    """A tool the model called during a reply (clawback's memory tools): shown, not replayed."""
    return {
        "type": "tool_call",
        "id": call_id,
        "name": name,
        "input": dict(arguments),
        "timestamp": timestamp,
    }


def tool_call_summary(name: str, arguments: Mapping[str, Any]) -> str:
    """``memory_search: sqlite wal``: the tool's short name and what it was asked."""
    short = name.split("__")[-1] if name.startswith("mcp__") else name
    for key in ("query", "ref"):
        if isinstance(arguments.get(key), str):
            return f"{short}: {arguments[key]}"
    first = next((v for v in arguments.values() if isinstance(v, str)), None)
    return f"{short}: {first}" if first else short


def label_event(label: str | None, timestamp: str) -> dict[str, Any]:
    """A label set (or cleared, with ``None``) after the session began; the last one wins."""
    return {"type": "label", "label": label, "timestamp": timestamp}


# --- parser ---------------------------------------------------------------------------------


def is_native_header(obj: Any) -> bool:
    """True for the first line of a native transcript (and nothing else)."""
    return isinstance(obj, dict) and obj.get("type") == "session" and obj.get("format") == FORMAT


def parse_line(obj: Any) -> ParsedLine:
    """Turn one decoded native line into entries and meta; never raises."""
    return dispatch(obj, _HANDLERS)


def _header(obj: dict[str, Any]) -> ParsedLine:
    if obj.get("format") != FORMAT:
        return ParsedLine(unknown="session header without the clawback format marker")
    key = str_or_none(obj.get("key"))
    channel = key_channel(key) if key else None
    meta = SessionMeta(
        session_id=str_or_none(obj.get("id")),
        key=key,
        created=str_or_none(obj.get("created")),
        parent_id=str_or_none(obj.get("parent")),
        label=str_or_none(obj.get("label")),
        cwd=str_or_none(obj.get("cwd")),
        channel=channel,
    )
    return ParsedLine(meta=meta)


def _message(obj: dict[str, Any]) -> ParsedLine:
    raw_role = obj.get("role")
    role = ROLES.get(raw_role) if isinstance(raw_role, str) else None
    content = obj.get("content")
    if role is None or not isinstance(content, str):
        return ParsedLine(unknown="message without a known role and text content")
    usage = native_usage(obj) if role is Role.ASSISTANT else None
    if not content.strip():
        return ParsedLine(usage=usage)
    entry = Entry(
        role=role,
        kind=Kind.TEXT,
        text=content,
        timestamp=str_or_none(obj.get("timestamp")),
        uuid=str_or_none(obj.get("id")),
        conversational=role is not Role.SYSTEM,
        model=str_or_none(obj.get("model")),
        partial=obj.get("partial") is True,
    )
    return ParsedLine(entries=[entry], usage=usage)


def _compaction(obj: dict[str, Any]) -> ParsedLine:
    summary = obj.get("summary")
    if not isinstance(summary, str):
        return ParsedLine(unknown="compaction without a summary")
    entry = Entry(
        role=Role.SYSTEM,
        kind=Kind.COMPACTION,
        text=summary or "Conversation compacted",
        timestamp=str_or_none(obj.get("timestamp")),
        uuid=str_or_none(obj.get("id")),
        conversational=True,
        model=str_or_none(obj.get("model")),
    )
    return ParsedLine(entries=[entry])


def _tool_call(obj: dict[str, Any]) -> ParsedLine:
    name, arguments = obj.get("name"), obj.get("input")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return ParsedLine(unknown="tool call without a name and an input object")
    entry = Entry(
        role=Role.ASSISTANT,
        kind=Kind.TOOL_USE,
        text=json.dumps(arguments, ensure_ascii=False),
        timestamp=str_or_none(obj.get("timestamp")),
        uuid=str_or_none(obj.get("id")),
        conversational=True,
        display=tool_call_summary(name, arguments),
    )
    return ParsedLine(entries=[entry])


def _label(obj: dict[str, Any]) -> ParsedLine:
    label = obj.get("label")
    if label is not None and not isinstance(label, str):
        return ParsedLine(unknown="label event whose label is not text")
    # A cleared label (null) cannot be told apart from "this line does not say" in SessionMeta,
    # so it is reported as an empty string.
    meta = SessionMeta(label=label if label is not None else "")
    if not label or not label.strip():
        return ParsedLine(meta=meta)
    # Labels are searchable like any other text, so a person finds a session by its name.
    ts = obj.get("timestamp")
    entry = Entry(
        role=Role.SYSTEM,
        kind=Kind.SUMMARY,
        text=label,
        timestamp=ts if isinstance(ts, str) else None,
    )
    return ParsedLine(entries=[entry], meta=meta)


_HANDLERS: dict[str, Callable[[dict[str, Any]], ParsedLine]] = {
    "session": _header,
    "message": _message,
    "compaction": _compaction,
    "label": _label,
    "tool_call": _tool_call,
}
