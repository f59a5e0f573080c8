"""The group history buffer: what a group said since the bot last answered, handed over as context.

Per listed group, the last ``telegram.group_history`` messages not addressed to the bot (sender,
time, text) are kept in a small private file (``history/<chat id>.json``), so a restart keeps
them. When the bot is addressed they go before the message under two headings (the chat's
context since the bot's last reply, then the message to respond to) and the buffer is emptied.
The buffer is never indexed on its own: what reached a turn is stored as part of that turn.

Everything in the buffer came from other people: the headings are neutralised inside it so that
no message can forge the current one, and the chat engine neutralises prompt wrapper tags in the
whole turn. This module only keeps and formats text; it never decides who may talk.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from clawback.core.config import atomic_write_bytes
from clawback.core.text import neutralise_wrappers

__all__ = [
    "CONTEXT_HEADING",
    "CURRENT_HEADING",
    "GroupHistory",
    "Said",
    "compose_turn",
    "from_line",
]

CONTEXT_HEADING = "[Chat messages since your last reply, for context]"
CURRENT_HEADING = "[Current message, respond to this]"
MAX_CHARS_PER_MESSAGE = 2_000  # one long paste must not push out the rest of the context
_BREAK = "\u200b"
_FORGED = re.compile(
    r"\[(\s*)(chat messages since your last reply|current message|from:)", re.IGNORECASE
)


def neutralise_headings(text: str) -> str:
    """``text`` with anything that reads as one of the turn's headings or a ``[from: ...]``
    tag made inert (a zero-width space after the bracket): a person sees the same text."""
    return _FORGED.sub(lambda m: f"[{_BREAK}{m.group(1)}{m.group(2)}", text)


def from_line(name: str, text: str, at: float | None = None) -> str:
    """One message as Claude sees it in a group: ``[from: Name at HH:MM] text``."""
    name = " ".join(neutralise_headings(name).replace("]", ")").split()) or "someone"
    when = f" at {datetime.fromtimestamp(at).astimezone().strftime('%H:%M')}" if at else ""
    return f"[from: {name}{when}] {neutralise_headings(neutralise_wrappers(text))}"


@dataclass(frozen=True)
class Said:
    """A group message the bot was not asked about."""

    name: str
    text: str
    at: float


class GroupHistory:
    """The buffers of every listed group, each bounded to ``size`` messages (0: off)."""

    def __init__(self, folder: Path, size: int) -> None:
        self.folder = folder
        self.size = size
        self._cache: dict[int, list[Said]] = {}

    def _path(self, chat_id: int) -> Path:
        return self.folder / f"{chat_id}.json"

    def messages(self, chat_id: int) -> list[Said]:
        if chat_id not in self._cache:
            self._cache[chat_id] = self._read(chat_id)
        return self._cache[chat_id]

    def _read(self, chat_id: int) -> list[Said]:
        try:
            raw = json.loads(self._path(chat_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        found = []
        for item in raw if isinstance(raw, list) else []:
            if isinstance(item, dict):
                name, text, at = item.get("name"), item.get("text"), item.get("at")
                if isinstance(name, str) and isinstance(text, str) and isinstance(at, int | float):
                    found.append(Said(name, text, float(at)))
        return found[-self.size :] if self.size else []

    def _write(self, chat_id: int, messages: list[Said]) -> None:
        self._cache[chat_id] = messages
        data = json.dumps([asdict(m) for m in messages], ensure_ascii=False)
        atomic_write_bytes(self._path(chat_id), data.encode("utf-8"))

    def add(self, chat_id: int, name: str, text: str, at: float | None = None) -> None:
        """Keep a message the bot was not asked about (the oldest goes beyond ``size``)."""
        if self.size <= 0 or not text.strip():
            return
        if len(text) > MAX_CHARS_PER_MESSAGE:
            text = text[:MAX_CHARS_PER_MESSAGE] + " …"
        kept = [*self.messages(chat_id), Said(name, text, at or time.time())]
        self._write(chat_id, kept[-self.size :])

    def context(self, chat_id: int) -> str:
        """The buffered messages as ``[from: ...]`` lines, oldest first ("" if none)."""
        return "\n".join(from_line(m.name, m.text, m.at) for m in self.messages(chat_id))

    def clear(self, chat_id: int) -> None:
        if self.messages(chat_id):
            self._write(chat_id, [])


def compose_turn(contexts: Sequence[str], messages: Sequence[str]) -> str:
    """The text of one turn: the group's context under its heading, then the message(s)."""
    current = "\n".join(messages)
    context = "\n".join(c for c in contexts if c.strip())
    if not context:
        return current
    return f"{CONTEXT_HEADING}\n{context}\n\n{CURRENT_HEADING}\n{current}"
