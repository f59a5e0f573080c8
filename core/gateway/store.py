"""What a gateway keeps in the home so that a crash neither loses nor repeats a message.

- :class:`PollState` (``state.json``): the polling offset, the update ids seen lately (a bounded
  list: Telegram re-delivers), and when each stranger was last refused.
- :class:`Inbox` (``inbox.jsonl``): every accepted message, fsynced before the offset moves past
  its update (once per poll, in a thread); then the reply once it is stored, then "done" once it
  is sent. What is accepted and not done when the gateway starts again is answered (or marked
  unanswered) then.

Every file is private (0600) and replaced whole or appended in whole lines. This module only
stores; it decides nothing about who may talk or what to answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clawback.core.config import atomic_write_bytes
from clawback.core.paths import PRIVATE_FILE, make_private_dirs

__all__ = ["Inbox", "InboxEntry", "PollState"]

SEEN_MAX = 2_048  # update ids remembered: far more than one getUpdates batch (100)
REFUSED_MAX = 1_000


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass
class PollState:
    """The polling offset and the recent update ids, persisted together."""

    path: Path
    offset: int | None = None
    seen: deque[int] = field(default_factory=lambda: deque(maxlen=SEEN_MAX))
    refused: dict[str, float] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> PollState:
        state = cls(path)
        data = _read_json(path)
        if isinstance(data, dict):
            offset = data.get("offset")
            state.offset = offset if isinstance(offset, int) else None
            seen = data.get("seen")
            if isinstance(seen, list):
                state.seen.extend(i for i in seen if isinstance(i, int))
            refused = data.get("refused")
            if isinstance(refused, dict):
                state.refused = {
                    str(k): float(v) for k, v in refused.items() if isinstance(v, int | float)
                }
        return state

    def has_seen(self, update_id: int) -> bool:
        return update_id in self.seen

    def advance(self, update_id: int) -> None:
        """Mark ``update_id`` handled (in memory; :meth:`save` makes it durable)."""
        if update_id not in self.seen:
            self.seen.append(update_id)
        if self.offset is None or update_id + 1 > self.offset:
            self.offset = update_id + 1

    def may_refuse(self, user: str, now: float, every_s: float) -> bool:
        """Whether ``user`` may be refused now (at most once every ``every_s``); records it."""
        last = self.refused.get(user)
        if last is not None and now - last < every_s:
            return False
        self.refused[user] = now
        if len(self.refused) > REFUSED_MAX:
            oldest = sorted(self.refused, key=self.refused.__getitem__)
            for stale in oldest[: len(self.refused) - REFUSED_MAX]:
                del self.refused[stale]
        return True

    def save(self) -> None:
        data = {"offset": self.offset, "seen": list(self.seen), "refused": self.refused}
        atomic_write_bytes(self.path, json.dumps(data).encode("utf-8"))


@dataclass
class InboxEntry:
    """One accepted message: where it goes and what Claude will see of it.

    ``text`` is the message as the turn gets it (``[from: Name]`` first in a group);
    ``context`` the group's buffered messages before it (empty in a DM).
    """

    id: int  # the update id
    chat_id: int
    chat_type: str
    key: str  # the session key its turn runs under
    sender_id: int | None
    sender_name: str
    text: str
    context: str = ""
    at: float = 0.0  # when it was accepted (seconds since the epoch)
    message_id: int = 0
    command: str = ""  # /new, /reset, /label, /help, /start: never joined with other messages
    reply: list[str] | None = None  # the reply's parts, once stored and not yet sent


class Inbox:
    """The durable queue of accepted messages (``inbox.jsonl``)."""

    COMPACT_AFTER = 500  # done entries before the file is rewritten with only open ones

    def __init__(self, path: Path) -> None:
        self.path = path
        self.open: dict[int, InboxEntry] = {}
        self._done = 0
        self._load()

    def _load(self) -> None:
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill: the update was never acknowledged
            if not isinstance(record, dict):
                continue
            op = record.pop("op", None)
            if op == "accept":
                try:
                    entry = InboxEntry(**record)
                except TypeError:
                    continue
                self.open[entry.id] = entry
            elif op == "replied":
                for entry_id in record.get("ids", []):
                    if entry_id in self.open:
                        self.open[entry_id].reply = list(record.get("parts", []))
            elif op == "done":
                for entry_id in record.get("ids", []):
                    if self.open.pop(entry_id, None) is not None:
                        self._done += 1

    def _append(self, records: Iterable[dict[str, Any]], *, sync: bool) -> None:
        data = b"".join(json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for r in records)
        make_private_dirs(self.path.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
        try:
            os.write(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def accept(self, entry: InboxEntry) -> None:
        """Store ``entry`` (written: a kill cannot lose it); :meth:`sync` makes it durable
        before its update is acknowledged, once for a whole poll's messages."""
        if not entry.at:
            entry.at = time.time()
        self._append([{"op": "accept", **asdict(entry)}], sync=False)
        self.open[entry.id] = entry

    def sync(self) -> None:
        """fsync what was appended (before the polling offset moves past it)."""
        with contextlib.suppress(FileNotFoundError):
            fd = os.open(self.path, os.O_WRONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def replied(self, ids: Sequence[int], parts: list[str]) -> None:
        """The reply to ``ids`` is stored in its session: if sending is cut short, the parts
        are sent on restart instead of running the turn again. Written, not fsynced: a kill
        cannot lose it; a power cut can (then the turn runs again, its reply sent twice)."""
        self._append([{"op": "replied", "ids": list(ids), "parts": parts}], sync=False)
        for entry_id in ids:
            if entry_id in self.open:
                self.open[entry_id].reply = parts

    def done(self, ids: Sequence[int]) -> None:
        """The reply to ``ids`` was sent (written, not fsynced, as :meth:`replied`)."""
        self._append([{"op": "done", "ids": list(ids)}], sync=False)
        for entry_id in ids:
            if self.open.pop(entry_id, None) is not None:
                self._done += 1
        if self._done >= self.COMPACT_AFTER:
            self.compact()

    def compact(self) -> None:
        """Rewrite the file with only the open entries (atomically)."""
        lines = []
        for entry in self.open.values():
            lines.append({"op": "accept", **asdict(entry)})
            if entry.reply is not None:
                lines.append({"op": "replied", "ids": [entry.id], "parts": entry.reply})
        data = b"".join(json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for r in lines)
        atomic_write_bytes(self.path, data)
        self._done = 0

    def pending(self) -> list[InboxEntry]:
        """The open entries, oldest first."""
        return sorted(self.open.values(), key=lambda e: (e.at, e.id))
