"""OpenClaw and pi-coding-agent session transcripts (one format) -> entries; OpenClaw's store.

What each entry type becomes is listed in ``docs/formats.md``. :func:`load_session_store`
reads OpenClaw's ``sessions.json`` into :class:`SessionMeta` keyed by session id.

``parse_line`` is a pure function of one decoded line: it must never read files and never
raise. ``load_session_store`` reads one file and must never raise either.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawback.core.formats.dispatch import dispatch, str_or_none
from clawback.core.formats.rendering import IMAGE_MARKER, describe_tool_call, flatten_content
from clawback.core.formats.session_keys import key_channel
from clawback.core.formats.token_usage import pi_usage
from clawback.core.records import Entry, Kind, ParsedLine, Role, SessionMeta
from clawback.core.timeutil import normalize_ts

IGNORED_TYPES = frozenset({"model_change", "thinking_level_change", "custom", "label"})
PARTIAL_STOP_REASONS = frozenset({"aborted", "error"})


def parse_line(obj: Any) -> ParsedLine:
    """Turn one decoded pi / OpenClaw line into entries and meta; never raises."""
    return dispatch(obj, _HANDLERS, IGNORED_TYPES, noun="entry")


def session_id_from_path(value: Any) -> str | None:
    """The session id in a parent reference: a bare id, or a path like ``<ts>_<id>.jsonl``."""
    if not isinstance(value, str) or not value.strip():
        return None
    name = value.strip().replace("\\", "/").rsplit("/", 1)[-1]
    if name.endswith(".jsonl"):
        name = name[: -len(".jsonl")]
        name = name.rsplit("_", 1)[-1]
    return name or None


def _stamp(obj: dict[str, Any]) -> str | None:
    """An entry's time: ISO text as written, or pi's epoch milliseconds made ISO."""
    value = obj.get("timestamp")
    if isinstance(value, str):
        return value
    return normalize_ts(value) if isinstance(value, int | float) else None


@dataclass(slots=True)
class _Stamp:
    """What every entry of one line shares: its time and id."""

    timestamp: str | None
    uuid: str | None

    def entry(
        self,
        role: Role,
        kind: Kind,
        text: str,
        *,
        conversational: bool = False,
        display: str | None = None,
        model: str | None = None,
        partial: bool = False,
        error: bool = False,
    ) -> Entry:
        return Entry(
            role=role,
            kind=kind,
            text=text,
            timestamp=self.timestamp,
            uuid=self.uuid,
            conversational=conversational,
            display=display,
            model=model,
            partial=partial,
            error=error,
        )


def _stamp_of(obj: dict[str, Any]) -> _Stamp:
    return _Stamp(_stamp(obj), str_or_none(obj.get("id")))


def _header(obj: dict[str, Any]) -> ParsedLine:
    parent = obj.get("parentSession")
    if parent is None:
        parent = obj.get("branchedFrom")
    meta = SessionMeta(
        session_id=str_or_none(obj.get("id")),
        cwd=str_or_none(obj.get("cwd")),
        created=_stamp(obj),
        title=str_or_none(obj.get("title")),
        parent_id=session_id_from_path(parent),
    )
    return ParsedLine(meta=meta)


def _title_line(field: str) -> Callable[[dict[str, Any]], ParsedLine]:
    """A line that names the session in ``field``: pi's ``session_info`` (``name``) and
    oh-my-pi's ``title`` (``title``, often the file's first line)."""

    def parse(obj: dict[str, Any]) -> ParsedLine:
        title = obj.get(field)
        if not isinstance(title, str) or not title.strip():
            return ParsedLine()
        return ParsedLine(meta=SessionMeta(title=title.strip()))

    return parse


def _summary_entry(obj: dict[str, Any]) -> ParsedLine:
    """``compaction`` and ``branch_summary`` entries: a summary the model continues from."""
    summary = obj.get("summary")
    if not isinstance(summary, str):
        return ParsedLine(unknown=f"{obj.get('type')} entry without a summary")
    text = summary or "Conversation compacted"
    entry = _stamp_of(obj).entry(Role.SYSTEM, Kind.COMPACTION, text, conversational=True)
    return ParsedLine(entries=[entry])


def _custom_message(obj: dict[str, Any]) -> ParsedLine:
    text = flatten_content(obj.get("content"))
    if not text.strip():
        return ParsedLine()
    return ParsedLine(entries=[_stamp_of(obj).entry(Role.SYSTEM, Kind.TEXT, text)])


def _message(obj: dict[str, Any]) -> ParsedLine:
    message = obj.get("message")
    if not isinstance(message, dict):
        return ParsedLine(unknown="message entry without a message object")
    role = message.get("role")
    handler = _ROLE_HANDLERS.get(role) if isinstance(role, str) else None
    if handler is None:
        return ParsedLine(unknown=f"unknown message role {str(role)[:40]!r}")
    stamp = _stamp_of(obj)
    parsed = ParsedLine(entries=handler(message, stamp))
    if role == "assistant":
        parsed.usage = pi_usage(message, stamp.timestamp or message.get("timestamp"))
    return parsed


def _conversation(message: dict[str, Any], stamp: _Stamp) -> list[Entry]:
    role = Role.ASSISTANT if message.get("role") == "assistant" else Role.USER
    model = str_or_none(message.get("model")) if role is Role.ASSISTANT else None
    partial = str_or_none(message.get("stopReason")) in PARTIAL_STOP_REASONS
    content = message.get("content")
    entries: list[Entry] = []
    saw_image = False

    def add(kind: Kind, text: str, conversational: bool, display: str | None = None) -> None:
        entries.append(
            stamp.entry(
                role,
                kind,
                text,
                conversational=conversational,
                display=display,
                model=model,
                partial=partial,
            )
        )

    blocks = [content] if isinstance(content, str) else content
    for block in blocks if isinstance(blocks, list) else ():
        if isinstance(block, str):
            if block.strip():
                add(Kind.TEXT, block, True)
            continue
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        if block_type == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                add(Kind.TEXT, text, True)
        elif block_type == "toolCall":
            display, text = describe_tool_call(block.get("name"), block.get("arguments"))
            add(Kind.TOOL_USE, text, True, display)
        elif block_type == "thinking":
            thinking = block.get("thinking")
            if isinstance(thinking, str) and thinking.strip():
                add(Kind.THINKING, thinking, False)
        elif block_type == "image":
            saw_image = True
    if not entries and saw_image:
        add(Kind.TEXT, IMAGE_MARKER, True)
    error = message.get("errorMessage")
    if isinstance(error, str) and error.strip():
        entries.append(stamp.entry(Role.SYSTEM, Kind.TEXT, error))
    return entries


def _tool_result(message: dict[str, Any], stamp: _Stamp) -> list[Entry]:
    text = flatten_content(message.get("content"))
    if not text:
        return []
    error = message.get("isError") is True
    return [stamp.entry(Role.TOOL, Kind.TOOL_RESULT, text, error=error)]


def _bash_execution(message: dict[str, Any], stamp: _Stamp) -> list[Entry]:
    command = message.get("command")
    if not isinstance(command, str) or not command.strip():
        return []
    display, text = describe_tool_call("bash", {"command": command})
    entries = [stamp.entry(Role.USER, Kind.TOOL_USE, text, conversational=True, display=display)]
    output = message.get("output")
    if isinstance(output, str) and output:
        entries.append(stamp.entry(Role.TOOL, Kind.TOOL_RESULT, output))
    return entries


def _system_text(message: dict[str, Any], stamp: _Stamp) -> list[Entry]:
    text = flatten_content(message.get("content"))
    if not text.strip():
        return []
    return [stamp.entry(Role.SYSTEM, Kind.TEXT, text)]


def _summary_role(message: dict[str, Any], stamp: _Stamp) -> list[Entry]:
    summary = message.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        return []
    return [stamp.entry(Role.SYSTEM, Kind.COMPACTION, summary, conversational=True)]


_RoleHandler = Callable[[dict[str, Any], _Stamp], list[Entry]]

_ROLE_HANDLERS: dict[str, _RoleHandler] = {
    "user": _conversation,
    "assistant": _conversation,
    "toolResult": _tool_result,
    "tool": _tool_result,  # some pi builds and forks name the tool-output role "tool"
    "bashExecution": _bash_execution,
    "custom": _system_text,
    "hookMessage": _system_text,  # the v1/v2 name of "custom"
    "system": _system_text,
    "branchSummary": _summary_role,
    "compactionSummary": _summary_role,
}

_HANDLERS: dict[str, Callable[[dict[str, Any]], ParsedLine]] = {
    "session": _header,
    "message": _message,
    "compaction": _summary_entry,
    "branch_summary": _summary_entry,
    "custom_message": _custom_message,
    "session_info": _title_line("name"),
    "title": _title_line("title"),
}


# --- the session store (sessions.json) ------------------------------------------------------


def load_session_store(path: Path) -> dict[str, SessionMeta]:
    """Read OpenClaw's ``sessions.json`` into meta keyed by session id; ``{}`` if unreadable.

    The store maps session keys (``agent:<agentId>:<rest>``) to ``SessionEntry`` objects
    (OpenClaw ``src/config/sessions/types.ts``): ``sessionId`` and ``updatedAt`` (epoch ms)
    always; by version and channel ``displayName``, ``subject``, ``groupChannel``, ``space``,
    ``label``, ``channel``, ``lastChannel``, ``origin`` ({label, provider, ...}),
    ``sessionFile`` (a transcript not named ``<sessionId>.jsonl``, e.g. a Telegram topic's
    ``<id>-topic-<thread>.jsonl``), ``spawnedBy`` / ``parentSessionKey`` (the key of the
    session that spawned this one). The first key naming a session id wins; a transcript's
    file name (stem) finds its entry too.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    ids = {
        key: entry["sessionId"]
        for key, entry in data.items()
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str)
    }
    store: dict[str, SessionMeta] = {}
    for key, entry in data.items():
        session_id = ids.get(key)
        if not session_id or session_id in store:
            continue
        meta = _store_meta(key, session_id, entry)
        parent_key = _first_text(entry.get("spawnedBy"), entry.get("parentSessionKey"))
        meta.parent_id = ids.get(parent_key) if parent_key else None
        store[session_id] = meta
        transcript = session_id_from_path(entry.get("sessionFile"))
        if transcript and transcript != session_id:
            store.setdefault(transcript, meta)
    return store


def _store_meta(key: str, session_id: str, entry: dict[str, Any]) -> SessionMeta:
    origin = entry.get("origin")
    origin = origin if isinstance(origin, dict) else {}
    channel = _first_text(entry.get("channel"), entry.get("lastChannel"), origin.get("provider"))
    if channel is None:
        channel = key_channel(key)
    title = _first_text(
        entry.get("displayName"),
        entry.get("subject"),
        entry.get("groupChannel"),
        entry.get("space"),
        origin.get("label"),
    )
    return SessionMeta(
        session_id=session_id,
        key=key,
        title=title,
        channel=channel,
        label=_first_text(entry.get("label")),
    )


def _first_text(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
