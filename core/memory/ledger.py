"""The compaction ledger: what each compaction replaced, read back for people and the app.

One row per compaction (``compactions``), written by the compactor in the same transaction as
the session's count. :func:`compacted_messages` reads the messages a
row's summary stands for back from the transcript, which keeps every word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core.chat.sessions import transcript_file
from clawback.core.chat.transcript import Transcript, TranscriptMessage

__all__ = ["CompactionRecord", "compacted_messages", "list_compactions"]


@dataclass(frozen=True)
class CompactionRecord:
    """One row of the compaction ledger."""

    id: int
    session_id: str
    created_at: str
    tokens_before: int
    tokens_after: int
    messages_removed: int
    first_kept_id: str | None
    summary: str
    model: str | None
    transcript: str | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_LEDGER_COLUMNS = (
    "c.id, c.session_id, c.created_at, c.tokens_before, c.tokens_after, c.messages_removed,"
    " c.first_kept_id, c.summary, c.model, s.transcript"
)


def list_compactions(
    db: sqlite_utils.Database, session_id: str | None = None, *, limit: int | None = None
) -> list[CompactionRecord]:
    """Ledger rows, newest first; of one session or all."""
    sql = (
        f"SELECT {_LEDGER_COLUMNS} FROM compactions c"
        " LEFT JOIN chat_sessions s ON s.id = c.session_id"
    )
    params: list[Any] = []
    if session_id is not None:
        sql += " WHERE c.session_id = ?"
        params.append(session_id)
    sql += " ORDER BY c.created_at DESC, c.id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    records = [CompactionRecord(*row) for row in db.execute(sql, params).fetchall()]
    home = _home_of(db)
    if home is None:
        return records
    return [
        replace(r, transcript=str(transcript_file(r.transcript, home))) if r.transcript else r
        for r in records
    ]


def _home_of(db: sqlite_utils.Database) -> Path | None:
    """The home folder of an index: where its database file is (``None`` in memory)."""
    for _seq, name, file in db.execute("PRAGMA database_list").fetchall():
        if name == "main" and file:
            return Path(file).parent
    return None


def compacted_messages(record: CompactionRecord) -> list[TranscriptMessage]:
    """The messages a ledger row's compaction replaced, read back from the transcript.

    Those are the messages live before it (since the previous compaction's first kept message)
    up to its own first kept message. Messages a fork inherited from its parent are not in the
    fork's transcript and are not listed.
    """
    if not record.transcript:
        return []
    objects, _torn, _bad = Transcript(record.transcript).lines()
    messages: list[TranscriptMessage] = []
    live_start = 0
    for obj in objects:
        kind = obj.get("type")
        if kind == "message":
            message = _transcript_message(obj)
            if message is not None:
                messages.append(message)
        elif kind == "compaction" and isinstance(obj.get("summary"), str):
            end = _index_of(messages, obj.get("first_kept_id"), live_start)
            if obj.get("timestamp") == record.created_at and (
                obj.get("first_kept_id") == record.first_kept_id
            ):
                return messages[live_start:end]
            live_start = end
    return []


def _transcript_message(obj: dict[str, Any]) -> TranscriptMessage | None:
    role, content = obj.get("role"), obj.get("content")
    if role not in ("user", "assistant") or not isinstance(content, str) or not content.strip():
        return None
    return TranscriptMessage(
        id=str(obj.get("id") or ""),
        role=str(role),
        content=content,
        timestamp=obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None,
        model=obj.get("model") if isinstance(obj.get("model"), str) else None,
        partial=obj.get("partial") is True,
    )


def _index_of(messages: Sequence[TranscriptMessage], message_id: Any, start: int) -> int:
    """Where ``message_id`` is among ``messages`` (from ``start``); the end if absent."""
    if isinstance(message_id, str):
        for index in range(start, len(messages)):
            if messages[index].id == message_id:
                return index
    return len(messages)
