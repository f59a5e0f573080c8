"""What Claude Code sends a hook on stdin, as one typed record.

The fields are the ones Claude Code 2.1.328 sends (the tests replay a capture of each kind):
every event carries ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``;
``SessionStart`` adds ``source`` (``startup``, ``resume``, ``clear``, ``compact``),
``UserPromptSubmit`` ``prompt``, ``PreCompact`` ``trigger`` and ``custom_instructions``, ``Stop``
``stop_hook_active``, ``SessionEnd`` ``reason``. Anything else is ignored; anything missing or of
the wrong type is an :class:`EventError`, which the hook logs and answers with silence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from clawback.core.errors import ClawbackError
from clawback.core.hooks.client import MAX_EVENT_BYTES


class EventError(ClawbackError):
    """The hook's stdin is not an event it can answer."""


@dataclass(frozen=True)
class HookEvent:
    name: str  # hook_event_name
    session_id: str
    transcript_path: str
    cwd: str
    source: str = ""  # SessionStart
    prompt: str = ""  # UserPromptSubmit
    trigger: str = ""  # PreCompact
    reason: str = ""  # SessionEnd


def _text(data: dict[str, object], key: str, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise EventError(f"the event's {key!r} is missing or not text")
    return value


def parse_event(raw: bytes, expected: str) -> HookEvent:
    """The event in ``raw`` (the hook's stdin); ``expected`` is the Claude Code event name the
    command was installed for, which a mismatching ``hook_event_name`` contradicts."""
    if len(raw) > MAX_EVENT_BYTES:
        raise EventError(f"the event is larger than {MAX_EVENT_BYTES // 1024 // 1024} MB")
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
    except ValueError as exc:
        raise EventError(f"the event is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise EventError("the event is not a JSON object")
    name = _text(data, "hook_event_name", required=True)
    if name != expected:
        raise EventError(f"installed for {expected} but got a {name} event")
    return HookEvent(
        name=name,
        session_id=_text(data, "session_id", required=True),
        transcript_path=_text(data, "transcript_path"),
        cwd=_text(data, "cwd", required=True),
        source=_text(data, "source"),
        prompt=_text(data, "prompt"),
        trigger=_text(data, "trigger"),
        reason=_text(data, "reason"),
    )
