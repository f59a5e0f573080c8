"""The chat session store: which session a chat key is in, when it goes stale, and its counters.

Keys, freshness and token counters are explained in ``docs/chat.md``; the rules without
storage live in :mod:`clawback.core.chat.policy` (re-exported here).

This module must never delete a session, a transcript or a transcript line, and never touch the
archive's own tables except through the index callback.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core.chat.policy import (
    BUILTIN_MODEL_ALIASES,
    LABEL_MAX_CHARS,
    FreshnessPolicy,
    ResetTrigger,
    local_session_key,
    normalize_label,
    parse_label_command,
    parse_reset_trigger,
    policy_for,
    resolve_model,
)
from clawback.core.chat.transcript import Transcript
from clawback.core.claude import Usage
from clawback.core.config import ChatConfig
from clawback.core.db import write_transaction
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.formats.native import label_event, session_header
from clawback.core.formats.session_keys import parse_session_key, thread_key
from clawback.core.paths import Paths
from clawback.core.timeutil import format_ts, parse_ts


def _utc_now() -> datetime:
    return datetime.now(UTC)


__all__ = [
    "BUILTIN_MODEL_ALIASES",
    "LABEL_MAX_CHARS",
    "ChatSession",
    "Clock",
    "FreshnessPolicy",
    "ResetTrigger",
    "SessionStore",
    "local_session_key",
    "normalize_label",
    "parse_label_command",
    "parse_reset_trigger",
    "policy_for",
    "resolve_model",
]

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class ChatSession:
    """One row of ``chat_sessions``. Timestamps are the index's UTC text form."""

    id: str
    key: str
    transcript: str
    created_at: str
    updated_at: str
    label: str | None = None
    model_override: str | None = None
    message_count: int = 0
    compaction_count: int = 0
    memory_flush_at: str | None = None
    memory_flush_compaction_count: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    context_tokens: int | None = None
    last_model: str | None = None
    parent_id: str | None = None
    current: bool = True

    @property
    def transcript_path(self) -> Path:
        return Path(self.transcript)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _COLUMNS}


_COLUMNS = tuple(ChatSession.__dataclass_fields__)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM chat_sessions"


def transcript_file(stored: str, home: Path) -> Path:
    """Where a transcript is, from the ``transcript`` column: relative paths are in ``home``.

    New rows store ``sessions/<id>.jsonl``, so a home copied elsewhere (a backup, the demo)
    writes its own transcripts, never the original home's.
    """
    path = Path(stored)
    return path if path.is_absolute() else home / path


def _row(row: Sequence[Any], home: Path) -> ChatSession:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["current"] = bool(values["current"])
    values["transcript"] = str(transcript_file(values["transcript"], home))
    return ChatSession(**values)


class SessionStore:
    """Chat sessions in the index database, their transcripts in ``paths.sessions``.

    ``clock`` returns an aware datetime (default: now, UTC); ``tz`` is the local zone for the
    daily policy (default: the system's). ``on_write(path)`` is called after this store writes
    something searchable to a transcript (a label), so the index can pick it up at once.
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        paths: Paths,
        chat: ChatConfig,
        *,
        clock: Clock | None = None,
        tz: tzinfo | None = None,
        on_write: Callable[[Path], None] | None = None,
    ) -> None:
        self.db = db
        self.paths = paths
        self.chat = chat
        self.clock = clock or _utc_now
        self.tz = tz
        self.on_write = on_write

    def now(self) -> datetime:
        return self.clock()

    def _stamp(self, now: datetime | None) -> str:
        return format_ts(now or self.clock())

    # -- reading --------------------------------------------------------------------------------

    def get(self, session_id: str) -> ChatSession | None:
        row = self.db.execute(f"{_SELECT} WHERE id = ?", (session_id,)).fetchone()
        return _row(row, self.paths.home) if row else None

    def require(self, session_id: str) -> ChatSession:
        found = self.get(session_id)
        if found is None:
            raise NotFoundError(f"no chat session {session_id!r}")
        return found

    def current(self, key: str) -> ChatSession | None:
        """The key's current session, fresh or not."""
        row = self.db.execute(
            f"{_SELECT} WHERE key = ? AND current = 1 ORDER BY updated_at DESC LIMIT 1",
            (self.normalize_key(key),),
        ).fetchone()
        return _row(row, self.paths.home) if row else None

    def list(self, key: str | None = None, limit: int = 100) -> list[ChatSession]:
        """Sessions newest first, of one key or all."""
        if key is None:
            rows = self.db.execute(f"{_SELECT} ORDER BY updated_at DESC LIMIT ?", (limit,))
        else:
            rows = self.db.execute(
                f"{_SELECT} WHERE key = ? ORDER BY updated_at DESC LIMIT ?",
                (self.normalize_key(key), limit),
            )
        return [_row(row, self.paths.home) for row in rows.fetchall()]

    def is_fresh(self, session: ChatSession, now: datetime | None = None) -> bool:
        last = parse_ts(session.updated_at)
        if last is None:
            return False
        return policy_for(session.key, self.chat).is_fresh(last, now or self.clock(), self.tz)

    def peek(self, key: str, now: datetime | None = None) -> ChatSession | None:
        """What :meth:`get_or_create` would resume, without writing anything (for dry runs)."""
        found = self.current(key)
        return found if found is not None and self.is_fresh(found, now) else None

    @staticmethod
    def normalize_key(key: str) -> str:
        """The canonical spelling of a key; a malformed key is a :class:`SessionKeyError`."""
        return str(parse_session_key(key))

    def transcript(self, session: ChatSession) -> Transcript:
        return Transcript(session.transcript_path)

    def header(self, session: ChatSession) -> dict[str, Any]:
        """The transcript header of ``session`` (rewritten only if the file was lost)."""
        return session_header(
            session.id,
            session.key,
            session.created_at,
            parent=session.parent_id,
            label=session.label,
        )

    def ensure_transcript(self, session: ChatSession) -> Transcript:
        """The session's transcript, its header written if the file is missing or empty."""
        transcript = self.transcript(session)
        transcript.create(self.header(session))
        return transcript

    # -- creating -------------------------------------------------------------------------------

    def get_or_create(self, key: str, *, now: datetime | None = None) -> tuple[ChatSession, bool]:
        """The key's session, resumed if fresh, else a new one; ``(session, created)``."""
        key = self.normalize_key(key)
        now = now or self.clock()
        with write_transaction(self.db):
            found = self.current(key)
            if found is not None and self.is_fresh(found, now):
                return found, False
            session = self._insert(key, now=now)
        self.ensure_transcript(session)
        return session, True

    def reset(
        self, key: str, *, model_override: str | None = None, now: datetime | None = None
    ) -> ChatSession:
        """Start a new session for ``key`` (``/new``, ``/reset``, ``--new``)."""
        return self.create(key, model_override=model_override, now=now)

    def create(
        self,
        key: str,
        *,
        parent_id: str | None = None,
        model_override: str | None = None,
        label: str | None = None,
        now: datetime | None = None,
    ) -> ChatSession:
        """A new session that becomes the current one of ``key``."""
        key = self.normalize_key(key)
        with write_transaction(self.db):
            session = self._insert(
                key,
                now=now or self.clock(),
                parent_id=parent_id,
                model_override=model_override,
                label=normalize_label(label),
            )
        self.ensure_transcript(session)
        return session

    def _insert(
        self,
        key: str,
        *,
        now: datetime,
        parent_id: str | None = None,
        model_override: str | None = None,
        label: str | None = None,
    ) -> ChatSession:
        """Insert a row and make it current; the caller holds the write transaction."""
        session_id = str(uuid.uuid4())
        stamp = format_ts(now)
        session = ChatSession(
            id=session_id,
            key=key,
            transcript=str(self.paths.sessions / f"{session_id}.jsonl"),
            created_at=stamp,
            updated_at=stamp,
            label=label,
            model_override=model_override,
            parent_id=parent_id,
        )
        self.db.execute("UPDATE chat_sessions SET current = 0 WHERE key = ?", (key,))
        values = session.to_json()
        values["transcript"] = Path(session.transcript).relative_to(self.paths.home).as_posix()
        self.db.execute(
            f"INSERT INTO chat_sessions ({', '.join(values)}) VALUES "
            f"({', '.join('?' * len(values))})",
            list(values.values()),
        )
        return session

    def fork(
        self, parent_id: str, *, key: str | None = None, now: datetime | None = None
    ) -> ChatSession:
        """A new session whose header names ``parent_id`` and whose context starts from it.

        The parent may be a clawback chat or any archived session (Claude Code, OpenClaw): the
        chat engine seeds the fork's context from the parent as it was at the fork's creation.
        The fork becomes current for ``key``: by default the parent chat's own key, and for an
        archived session ``local:<user>:thread:<parent id prefix>``, so forking never replaces
        the user's main chat.
        """
        parent = self.get(parent_id)
        if parent is None:
            row = self.db.execute("SELECT id FROM sessions WHERE id = ?", (parent_id,)).fetchone()
            native_file = self.paths.sessions / f"{parent_id}.jsonl"
            if row is None and not native_file.is_file():
                raise NotFoundError(f"no session {parent_id!r} to fork (see `clawback sessions`)")
        if key is None:
            if parent is not None:
                key = parent.key
            else:
                thread = re.sub(r"[^a-z0-9_-]", "", parent_id.lower())[:12] or "fork"
                key = str(thread_key(parse_session_key(local_session_key()), thread))
        model = parent.model_override if parent is not None else None
        return self.create(key, parent_id=parent_id, model_override=model, now=now)

    # -- updating -------------------------------------------------------------------------------

    def set_label(
        self, session_id: str, text: str | None, *, now: datetime | None = None
    ) -> str | None:
        """Label a session (None or blank clears it); written to the transcript and indexed."""
        session = self.require(session_id)
        label = normalize_label(text)
        stamp = self._stamp(now)
        transcript = self.ensure_transcript(session)
        transcript.append([label_event(label, stamp)], sync=True)
        with write_transaction(self.db) as conn:
            conn.execute("UPDATE chat_sessions SET label = ? WHERE id = ?", (label, session_id))
        if self.on_write is not None:
            self.on_write(transcript.path)
        return label

    def set_model_override(self, session_id: str, model: str | None) -> None:
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET model_override = ? WHERE id = ?", (model, session_id)
            )

    def record_messages(
        self, session_id: str, count: int = 1, *, now: datetime | None = None
    ) -> None:
        """``count`` messages were appended to the transcript: bump the count and the clock."""
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET message_count = message_count + ?, updated_at = ?"
                " WHERE id = ?",
                (count, self._stamp(now), session_id),
            )

    def touch(self, session_id: str, *, now: datetime | None = None) -> None:
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET updated_at = ? WHERE id = ?",
                (self._stamp(now), session_id),
            )

    def record_usage(
        self,
        session_id: str,
        usage: Usage,
        *,
        model: str | None = None,
        context_window: int | None = None,
        now: datetime | None = None,
    ) -> ChatSession:
        """Replace the token counters with the latest turn's real usage (not a running sum)."""
        with write_transaction(self.db) as conn:
            conn.execute(
                """UPDATE chat_sessions SET input_tokens = ?, output_tokens = ?,
                       cache_read_tokens = ?, cache_write_tokens = ?, total_tokens = ?,
                       context_tokens = coalesce(?, context_tokens),
                       last_model = coalesce(?, last_model), updated_at = ?
                   WHERE id = ?""",
                (
                    usage.input,
                    usage.output,
                    usage.cache_read,
                    usage.cache_write,
                    usage.total_tokens,
                    context_window,
                    model,
                    self._stamp(now),
                    session_id,
                ),
            )
        return self.require(session_id)

    def mark_memory_flush(self, session_id: str, *, now: datetime | None = None) -> None:
        """A memory flush ran: remember when, and at which compaction count."""
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET memory_flush_at = ?,"
                " memory_flush_compaction_count = compaction_count WHERE id = ?",
                (self._stamp(now), session_id),
            )

    def find(self, ref: str) -> ChatSession | None:
        """The chat session ``ref`` names: its id, or a unique prefix of 4+ characters.

        ``None`` when no chat session matches; an ambiguous prefix is an error that says so.
        """
        rows = self.db.execute(
            f"{_SELECT} WHERE id = ? OR id LIKE ? ORDER BY id = ? DESC LIMIT 2",
            (ref, ref + "%" if len(ref) >= 4 else ref, ref),
        ).fetchall()
        if len(rows) == 1 or (rows and rows[0][0] == ref):
            return _row(rows[0], self.paths.home)
        if len(rows) > 1:
            raise UsageError(f"session id prefix {ref!r} is ambiguous; give more characters")
        return None

    def live_fork(self, parent_id: str) -> ChatSession | None:
        """A fresh, current fork of ``parent_id`` made earlier: a chat continues it rather
        than forking again."""
        for session in self.list(limit=1000):
            if session.parent_id == parent_id and session.current and self.is_fresh(session):
                return session
        return None

    def record_compaction(
        self,
        session_id: str,
        *,
        tokens_after: int | None = None,
        conn: sqlite3.Connection | None = None,
    ) -> None:
        """A compaction line was appended to the session's transcript; ``tokens_after`` is the
        context's size estimate after it.

        ``conn``: the caller's open transaction (compaction writes its ledger row in the same
        one, so the count and the ledger never disagree); without it, a transaction of its own.
        """
        sql = (
            "UPDATE chat_sessions SET compaction_count = compaction_count + 1,"
            " total_tokens = coalesce(?, total_tokens) WHERE id = ?"
        )
        if conn is not None:
            conn.execute(sql, (tokens_after, session_id))
            return
        with write_transaction(self.db) as own:
            own.execute(sql, (tokens_after, session_id))
