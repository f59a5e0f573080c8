"""Claude Code transcripts (``~/.claude/projects/<encoded-cwd>/<session>.jsonl``) -> entries.

What each line type becomes (conversation, tool calls, injected context, hooks, compactions,
titles) is listed in ``docs/formats.md``; what each content block of a message becomes is
:mod:`clawback.core.formats.claude_code_blocks`, and how tool calls and content are rendered
:mod:`clawback.core.formats.rendering`.

``parse_line`` is a pure function of one decoded line: it never reads files and never raises; a
line of a shape it does not know returns ``ParsedLine(unknown=...)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from clawback.core.formats.claude_code_blocks import MessageLine, block_entries, command_display
from clawback.core.formats.dispatch import dispatch, str_or_none
from clawback.core.formats.rendering import (
    ANSI_ESCAPE,
    describe_tool_call,
    flatten_content,
    one_line,
    render_value,
)
from clawback.core.formats.token_usage import claude_code_message_usage, claude_code_usage
from clawback.core.records import Entry, Kind, ParsedLine, Role, SessionMeta

# Line types Claude Code writes that hold no conversation: known, parsed to nothing.
# Line types that hold no conversation: state Claude Code records for itself. Together with the
# handled ones below these are every type Claude Code 2.1.328 writes (its transcript writer's
# table of 47), so none of them is reported as unknown.
IGNORED_TYPES = frozenset(
    {
        "file-history-snapshot",
        "file-history-delta",
        "progress",
        "last-prompt",
        "permission-mode",
        "mode",
        "memory-mode",
        "atis-latch",
        "isolation-latch",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "api-request-resumed",
        "cost-state",
        "agent-name",
        "agent-color",
        "agent-setting",
        "worktree-state",
        "pr-link",
        "frame-link",
        "bridge-session",
        "relocated",
        "tools-used",
        "tag",
        "session-owner",
        "dev-mods",
        "history-suppression",
        "attribution-snapshot",
        "artifact-autoreact-ledger",
        "artifact-comment-monitor",
        "content-replacement",
        "continued-in",
        "derived-from",
        "fork-context-ref",
        "observer-ref",
        "resume-head-vouch",
        "ended-by-model",
        "data-flow-records",
        "data-flow-incomplete",
    }
)

# Hook event names, to tell a 1.0.x hook notice from other system notices.
_HOOK_EVENT = re.compile(
    r"\b(?:PreToolUse|PostToolUse|Stop|SubagentStop|UserPromptSubmit|SessionStart|SessionEnd"
    r"|Notification|PreCompact)\b"
)


def parse_line(obj: Any) -> ParsedLine:
    """Turn one decoded Claude Code line into entries, meta and usage; never raises."""
    parsed = dispatch(obj, _HANDLERS, IGNORED_TYPES)
    if type(obj) is dict:
        message = obj.get("message")
        if type(message) is dict:
            usage = claude_code_message_usage(obj, message, top_level=True)
        elif obj.get("type") == "progress":
            usage = claude_code_usage(obj)
        else:
            usage = None
        if usage is not None:
            if "type" not in obj:  # a usage-only line (ccusage's fixtures): nothing else
                parsed = ParsedLine()
            parsed.usage = usage
            if parsed.meta is None:
                parsed.meta = _meta(obj)
    return parsed


# --- line handlers --------------------------------------------------------------------------


def _meta(obj: dict[str, Any]) -> SessionMeta:
    session_id = obj.get("sessionId")
    cwd = obj.get("cwd")
    return SessionMeta(
        session_id if isinstance(session_id, str) else None,
        cwd=cwd if isinstance(cwd, str) else None,
    )


def _message_line(obj: dict[str, Any]) -> ParsedLine:
    """A ``user`` or ``assistant`` line: one entry per content block that holds something."""
    message = obj.get("message")
    if not isinstance(message, dict):
        return ParsedLine(unknown=f"{obj.get('type')} line without a message object")
    content = message.get("content")
    if not isinstance(content, str | list):
        return ParsedLine(unknown=f"{obj.get('type')} message without content")
    role = Role.ASSISTANT if message.get("role", obj.get("type")) == "assistant" else Role.USER
    if obj.get("isCompactSummary") is True:
        text = flatten_content(content) or "Conversation compacted"
        return _one_entry(obj, Role.SYSTEM, Kind.COMPACTION, text, conversational=True)
    model = message.get("model") if role is Role.ASSISTANT else None
    line = MessageLine(  # by position: it runs for every message line
        role,
        str_or_none(obj.get("timestamp")),
        str_or_none(obj.get("uuid")),
        obj.get("isSidechain") is True,  # sidechain
        model if isinstance(model, str) and model != "<synthetic>" else None,
        obj.get("isMeta") is not True and obj.get("isApiErrorMessage") is not True,  # talk
    )
    entries = block_entries(line, content)
    if not entries:
        return ParsedLine()
    meta = _meta(obj)
    if role is Role.USER and entries[0].display and entries[0].display.startswith("/rename "):
        meta.custom_title = entries[0].display.removeprefix("/rename ").strip() or None
    return ParsedLine(entries=entries, meta=meta)


def _one_entry(
    obj: dict[str, Any],
    role: Role,
    kind: Kind,
    text: str,
    *,
    display: str | None = None,
    conversational: bool = False,
) -> ParsedLine:
    """A line that holds one entry, stamped with the line's own time, uuid and sidechain flag."""
    entry = Entry(
        role=role,
        kind=kind,
        text=text,
        timestamp=str_or_none(obj.get("timestamp")),
        uuid=str_or_none(obj.get("uuid")),
        sidechain=obj.get("isSidechain") is True,
        conversational=conversational,
        display=display,
    )
    return ParsedLine(entries=[entry], meta=_meta(obj))


def _system_line(obj: dict[str, Any]) -> ParsedLine:
    subtype = obj.get("subtype")
    content = obj.get("content")

    def system(kind: Kind, text: str, *, display: str | None = None) -> ParsedLine:
        return _one_entry(
            obj, Role.SYSTEM, kind, text, display=display, conversational=kind is Kind.COMPACTION
        )

    if subtype in ("compact_boundary", "microcompact_boundary"):
        text = content if isinstance(content, str) and content else "Conversation compacted"
        details = obj.get("compactMetadata") or obj.get("microcompactMetadata")
        note = _compaction_note(details)
        return system(Kind.COMPACTION, f"{text} ({note})" if note else text)
    if subtype in ("away_summary", "local_command") and isinstance(content, str) and content:
        return system(Kind.TEXT, content, display=command_display(content))
    if subtype is None and isinstance(content, str) and content.strip():
        # Claude Code 1.0.x notices ("Claude Opus 4 limit reached...", hook runs and results).
        text = ANSI_ESCAPE.sub("", content)
        kind = Kind.HOOK if _HOOK_EVENT.search(text) else Kind.NOTIFICATION
        return system(kind, text, display=one_line(text))
    if subtype == "stop_hook_summary":
        errors = [render_value(e) for e in obj.get("hookErrors") or () if e]
        if errors:
            text = "\n".join(errors)
            return system(Kind.HOOK, text, display=one_line(f"Stop hook: {text}"))
    return ParsedLine()


def _attachment_line(obj: dict[str, Any]) -> ParsedLine:
    """Hook output Claude Code 2.x attaches to a turn; other attachments are bookkeeping."""
    attachment = obj.get("attachment")
    if not isinstance(attachment, dict):
        return ParsedLine()
    kind = attachment.get("type")
    if not isinstance(kind, str) or not kind.startswith("hook_"):
        return ParsedLine()
    blocking = attachment.get("blockingError")
    if isinstance(blocking, dict):
        blocking = [blocking.get("blockingError"), blocking.get("command")]
    said: list[str] = []
    for value in (
        blocking,
        attachment.get("stderr"),
        attachment.get("stdout"),
        attachment.get("content"),
    ):
        text = flatten_content(value) if isinstance(value, list | str) else ""
        if text.strip():
            said.append(text.strip())
    if not said:
        return ParsedLine()  # a hook that ran quietly: nothing a person would look for
    name = (
        str_or_none(attachment.get("hookName"))
        or str_or_none(attachment.get("hookEvent"))
        or "hook"
    )
    command = str_or_none(attachment.get("command"))
    text = "\n".join([name, *([command] if command else []), *said])
    event = kind.removeprefix("hook_").replace("_", " ")
    return _one_entry(
        obj, Role.SYSTEM, Kind.HOOK, text, display=one_line(f"{name} ({event}): {said[0]}")
    )


def _queue_line(obj: dict[str, Any]) -> ParsedLine:
    """A prompt typed while Claude was busy.

    ``enqueue`` / ``dequeue`` prompts reappear as user lines, but a ``remove`` (2.1.x steering:
    the prompt was fed into the running turn) is the only place its text is written.
    """
    content = obj.get("content")
    if obj.get("operation") != "remove" or not isinstance(content, str) or not content.strip():
        return ParsedLine()
    entry = Entry(
        role=Role.USER,
        kind=Kind.TEXT,
        text=content,
        timestamp=str_or_none(obj.get("timestamp")),
        conversational=True,
    )
    return ParsedLine(entries=[entry], meta=_meta(obj))


def _compaction_note(details: Any) -> str:
    if not isinstance(details, dict):
        return ""
    parts: list[str] = []
    trigger = details.get("trigger")
    if isinstance(trigger, str) and trigger:
        parts.append(f"trigger: {trigger}")
    for key, label in (("preTokens", "tokens before"), ("tokensSaved", "tokens saved")):
        value = details.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            parts.append(f"{label}: {value}")
    return ", ".join(parts)


def _summary_line(obj: dict[str, Any]) -> ParsedLine:
    summary = obj.get("summary")
    if not isinstance(summary, str):
        return ParsedLine(unknown="summary line without summary text")
    if not summary.strip():
        return ParsedLine()
    entry = Entry(role=Role.SYSTEM, kind=Kind.SUMMARY, text=summary)
    leaf = obj.get("leafUuid")
    if isinstance(leaf, str) and leaf:
        # The title belongs to whichever session holds ``leaf``; the ingestor decides.
        return ParsedLine(entries=[entry], meta=SessionMeta(title_for_uuid=leaf, title=summary))
    return ParsedLine(entries=[entry], meta=SessionMeta(title=summary))


def _title_line(field: str, *, custom: bool) -> Callable[[dict[str, Any]], ParsedLine]:
    def parse(obj: dict[str, Any]) -> ParsedLine:
        title = obj.get(field)
        if not isinstance(title, str) or not title.strip():
            return ParsedLine()
        meta = SessionMeta(session_id=str_or_none(obj.get("sessionId")))
        if custom:
            meta.custom_title = title.strip()
        else:
            meta.title = title.strip()
        return ParsedLine(meta=meta)

    return parse


def _bare_tool_use(obj: dict[str, Any]) -> ParsedLine:
    """An old top-level ``tool_use`` line (seen only in schema-drift fixtures)."""
    display, text = describe_tool_call(obj.get("name"), obj.get("input"))
    return _one_entry(
        obj, Role.ASSISTANT, Kind.TOOL_USE, text, display=display, conversational=True
    )


def _bare_tool_result(obj: dict[str, Any]) -> ParsedLine:
    """An old top-level ``tool_result`` line (seen only in schema-drift fixtures)."""
    text = flatten_content(obj.get("output", obj.get("content")))
    if not text:
        return ParsedLine()
    return _one_entry(obj, Role.TOOL, Kind.TOOL_RESULT, text)


_HANDLERS: dict[str, Callable[[dict[str, Any]], ParsedLine]] = {
    "user": _message_line,
    "assistant": _message_line,
    "system": _system_line,
    "attachment": _attachment_line,
    "queue-operation": _queue_line,
    "summary": _summary_line,
    "custom-title": _title_line("customTitle", custom=True),
    "ai-title": _title_line("aiTitle", custom=False),
    "tool_use": _bare_tool_use,
    "tool_result": _bare_tool_result,
}

# Every line type this module recognises; detect_line uses it.
KNOWN_TYPES = frozenset(_HANDLERS) | IGNORED_TYPES
