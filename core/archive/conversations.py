"""Conversations: a file's entries split at long silences, the unit memory processing works on.

Entries of one source file are grouped in order; a gap longer than ``conversation_gap_minutes``
between two timestamped lines starts a new conversation. Status moves ``active`` -> ``ready``
(the gap has elapsed since its last message) -> ``processing`` -> ``archived`` or ``skipped``.
Lines arriving after a conversation left ``active``/``ready`` never reopen it: they start a new
one, so processed conversations are never processed twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from clawback.core.timeutil import format_ts, parse_ts

if TYPE_CHECKING:  # an unchanged re-scan asks any_ripe() without loading sqlite-utils
    import sqlite_utils

OPEN_STATUSES = ("active", "ready")


@dataclass
class _Conversation:
    id: int
    session_id: str | None
    started_at: str | None
    ended_at: str | None
    first_line: int
    last_line: int
    message_count: int
    status: str
    is_new: bool = False


class ConversationTracker:
    """Places one file's new lines into conversations; writes them at commit time.

    Ids are allocated here, inside the writer's transaction, so rows can be inserted with their
    ``conversation_id`` already set.
    """

    def __init__(
        self, db: sqlite_utils.Database, file_id: int, source: str, gap_minutes: int
    ) -> None:
        self.file_id = file_id
        self.source = source
        self.gap = gap_minutes * 60.0  # seconds
        self.session_id: str | None = None
        row = db.execute(
            """SELECT id, session_id, started_at, ended_at, first_line, last_line,
                      message_count, status
               FROM conversations WHERE file_id = ? ORDER BY id DESC LIMIT 1""",
            (file_id,),
        ).fetchone()
        self.current = _Conversation(*row) if row else None
        ended = parse_ts(self.current.ended_at) if self.current else None
        self._last = ended.timestamp() if ended else None  # seconds, as ``place`` gets them
        self._touched: dict[int, _Conversation] = {}
        self._next_id = 0

    def begin(self, conn: Any, session_id: str | None) -> None:
        """Called at the start of each commit, inside the write transaction."""
        self._next_id = conn.execute(
            "SELECT coalesce(max(id), 0) + 1 FROM conversations"
        ).fetchone()[0]
        self.session_id = session_id

    def place(
        self,
        line: int,
        ts: str | None,
        moment: float | None,
        counts: bool,
        session_id: str | None = None,
    ) -> int:
        """The conversation ``line`` belongs to.

        ``moment`` is ``ts`` in seconds since the epoch (the reader works it out, off the
        writer's path); ``counts`` when the line holds a main-thread message
        (:func:`clawback.core.ingest.file_reader.counts_as_message`). ``session_id`` names a
        session other than the file's (a file mixing sessions), which never shares a
        conversation with another.
        """
        current = self.current
        last = self._last
        session = session_id or self.session_id
        if (
            current is None
            or current.status not in OPEN_STATUSES
            or (moment is not None and last is not None and moment - last > self.gap)
            or (current.session_id or self.session_id) != session
        ):
            current = _Conversation(
                self._next_id, session, ts, ts, line, line, 0, "active", is_new=True
            )
            self._next_id += 1
            self.current = current
            self._last = None
        if ts:
            current.started_at = current.started_at or ts
            current.ended_at = ts
            self._last = moment
        current.last_line = line
        current.status = "active"
        if counts:
            current.message_count += 1
        self._touched[current.id] = current
        return current.id

    def flush(self, conn: Any) -> None:
        for conv in self._touched.values():
            if conv.is_new:
                conn.execute(
                    """INSERT INTO conversations (id, file_id, session_id, source, started_at,
                           ended_at, first_line, last_line, message_count, status)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        conv.id,
                        self.file_id,
                        conv.session_id or self.session_id,
                        self.source,
                        conv.started_at,
                        conv.ended_at,
                        conv.first_line,
                        conv.last_line,
                        conv.message_count,
                        conv.status,
                    ),
                )
                conv.is_new = False
            else:
                conn.execute(
                    """UPDATE conversations SET started_at = ?, ended_at = ?, last_line = ?,
                           message_count = ?, status = ? WHERE id = ?""",
                    (
                        conv.started_at,
                        conv.ended_at,
                        conv.last_line,
                        conv.message_count,
                        conv.status,
                        conv.id,
                    ),
                )
        self._touched.clear()


_RIPE = "status = 'active' AND ended_at < ?"  # a gap has elapsed since it ended


def refresh_ready(conn: Any, gap_minutes: int, now: datetime | None = None) -> int:
    """Mark ``active`` conversations whose gap has elapsed as ``ready``; returns how many."""
    cursor = conn.execute(
        f"UPDATE conversations SET status = 'ready' WHERE {_RIPE}", (_cutoff(gap_minutes, now),)
    )
    return int(cursor.rowcount)


def any_ripe(conn: Any, gap_minutes: int) -> bool:
    """Would :func:`refresh_ready` mark any conversation now? (A read, for an idle re-scan.)"""
    query = f"SELECT 1 FROM conversations WHERE {_RIPE} LIMIT 1"
    return conn.execute(query, (_cutoff(gap_minutes, None),)).fetchone() is not None


def _cutoff(gap_minutes: int, now: datetime | None) -> str:
    return format_ts((now or datetime.now(UTC)) - timedelta(minutes=gap_minutes))
