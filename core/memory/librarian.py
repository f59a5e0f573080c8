"""The librarian: turns finished conversations into knowledge facts and a summary.

The status flow (ready, processing, archived, skipped), the one-librarian lock and crash
recovery are in ``docs/memory.md``.

This module must never process a conversation twice (every transition is a conditional update
on the expected status), never leave one ``processing`` when a claude call fails or is
cancelled (it goes back to ``ready`` and the error is reported), and never delete anything.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import sqlite_utils
from clawback.core.archive import refresh_ready
from clawback.core.claude import (
    ClaudeAuthError,
    ClaudeCancelled,
    ClaudeError,
    ClaudeNotFound,
    ClaudeNotLoggedIn,
    ClaudeOverloaded,
    ClaudeRateLimited,
    ClaudeRunner,
)
from clawback.core.config import Config
from clawback.core.db import write_transaction
from clawback.core.errors import ClawbackError
from clawback.core.locking import WriterLock
from clawback.core.memory.extraction import ExtractionMessage, extract
from clawback.core.memory.facts import Action, FactChange, FactStore
from clawback.core.paths import PRIVATE_FILE, Paths, ensure_private_dir
from clawback.core.records import Kind
from clawback.core.timeutil import now_ts

__all__ = ["ConversationOutcome", "Librarian", "LibrarianBusy", "ProcessReport"]

LOCK_NAME = "librarian.lock"
# Failures that will fail every other conversation too: the run stops at the first one.
_STOPS_THE_RUN = (
    ClaudeNotFound,
    ClaudeNotLoggedIn,
    ClaudeAuthError,
    ClaudeRateLimited,
    ClaudeOverloaded,
)


class LibrarianBusy(ClawbackError):
    """Another ``clawback process`` holds this home's librarian lock."""


@dataclass
class ConversationOutcome:
    """What happened to one conversation: ``archived``, ``skipped`` or ``failed``."""

    id: int
    session_id: str | None
    source: str
    status: str
    message_count: int
    summary: str | None = None
    changes: list[FactChange] = field(default_factory=list)
    dropped_facts: int = 0
    error: str | None = None
    reason: str | None = None  # why it was skipped
    stops_run: bool = False  # a failure that would fail every other conversation too

    def counts(self) -> dict[str, int]:
        """Facts per update rule: ``{"add": 2, "update": 0, "supersede": 1, "none": 3}``."""
        found = {action.value: 0 for action in Action}
        for change in self.changes:
            found[change.action.value] += 1
        return found

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["stops_run"]
        data["changes"] = [change.to_json() for change in self.changes]
        data["facts"] = self.counts()
        return data


@dataclass
class ProcessReport:
    recovered: int = 0  # conversations a crashed run had left ``processing``
    conversations: list[ConversationOutcome] = field(default_factory=list)
    stopped: str | None = None  # why the run ended before the queue did

    def count(self, status: str) -> int:
        return sum(1 for c in self.conversations if c.status == status)

    @property
    def failed(self) -> int:
        return self.count("failed")

    def to_json(self) -> dict[str, Any]:
        return {
            "recovered": self.recovered,
            "archived": self.count("archived"),
            "skipped": self.count("skipped"),
            "failed": self.failed,
            "stopped": self.stopped,
            "conversations": [c.to_json() for c in self.conversations],
        }


@dataclass(frozen=True)
class _Row:
    id: int
    session_id: str | None
    source: str
    message_count: int


class Librarian:
    """Processes a home's ready conversations; ``runner`` defaults to the configured claude."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        paths: Paths,
        config: Config,
        runner: ClaudeRunner | None = None,
        *,
        on_outcome: Callable[[ConversationOutcome], None] | None = None,
    ) -> None:
        self.db = db
        self.paths = paths
        self.runner = runner or ClaudeRunner.from_config(
            config.chat, cwd=ensure_private_dir(paths.home / "claude-cwd")
        )
        self.facts = FactStore(db)
        self.on_outcome = on_outcome
        self.min_messages = config.archive.min_conversation_messages
        self.gap_minutes = config.archive.conversation_gap_minutes

    # -- locks and recovery -----------------------------------------------------------------

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the home's librarian lock, or raise :class:`LibrarianBusy` at once."""
        path = self.paths.home / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LibrarianBusy(
                    "another `clawback process` is already running on this home; "
                    "wait for it to finish"
                ) from None
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _ingest_lock(self) -> WriterLock:
        return WriterLock(self.paths.lock)

    def recover(self) -> int:
        """Return conversations a crashed run left ``processing`` to ``ready`` (hold the lock)."""
        with self._ingest_lock(), write_transaction(self.db) as conn:
            cursor = conn.execute(
                "UPDATE conversations SET status = 'ready' WHERE status = 'processing'"
            )
            refresh_ready(conn, self.gap_minutes)
        return int(cursor.rowcount)

    # -- the queue --------------------------------------------------------------------------

    def ready(self) -> list[_Row]:
        """Ready conversations, oldest first."""
        rows = self.db.execute(
            """SELECT id, session_id, source, message_count FROM conversations
               WHERE status = 'ready' ORDER BY coalesce(ended_at, ''), id"""
        ).fetchall()
        return [_Row(*row) for row in rows]

    def _move(self, conversation_id: int, old: str, new: str, **values: Any) -> bool:
        """Change a status only if it is still ``old``; False if someone else moved it."""
        sets = ", ".join(["status = ?", *(f"{k} = ?" for k in values)])
        params = [new, *values.values(), conversation_id, old]
        with self._ingest_lock(), write_transaction(self.db) as conn:
            cursor = conn.execute(
                f"UPDATE conversations SET {sets} WHERE id = ? AND status = ?", params
            )
        return cursor.rowcount == 1

    def _skip_short(self, conversation_id: int) -> bool:
        """Skip a ready conversation if it is (still) too short to be worth a call."""
        with self._ingest_lock(), write_transaction(self.db) as conn:
            cursor = conn.execute(
                """UPDATE conversations SET status = 'skipped', processed_at = ?
                   WHERE id = ? AND status = 'ready' AND message_count < ?""",
                (now_ts(), conversation_id, self.min_messages),
            )
        return cursor.rowcount == 1

    def messages(self, conversation_id: int) -> list[ExtractionMessage]:
        """A conversation's main-thread conversational messages, long blocks re-joined."""
        rows = self.db.execute(
            """SELECT e.role, e.kind, e.ts, e.uuid, e.session_id, group_concat(e.text, ''),
                      max(e.display)
               FROM (SELECT * FROM entries WHERE conversation_id = ? AND conversational = 1
                     AND sidechain = 0 ORDER BY file_id, line, block, piece) e
               GROUP BY e.file_id, e.line, e.block
               ORDER BY e.file_id, e.line, e.block""",
            (conversation_id,),
        ).fetchall()
        found = []
        for role, kind, ts, uuid, session_id, text, display in rows:
            if kind == Kind.TOOL_USE:
                text = f"(tool call) {display or text}"
            elif kind == Kind.COMPACTION:
                text = f"(summary of earlier messages) {text}"
            found.append(ExtractionMessage(role, text or "", ts, uuid, session_id))
        return found

    # -- processing -------------------------------------------------------------------------

    async def process(self, limit: int | None = None) -> ProcessReport:
        """Process ready conversations; ``limit`` caps the claude calls (skips are free)."""
        report = ProcessReport()
        with self.exclusive():
            report.recovered = self.recover()
            calls = 0
            for row in self.ready():
                if limit is not None and calls >= limit:
                    break
                if row.message_count < self.min_messages and self._skip_short(row.id):
                    why = f"fewer than {self.min_messages} messages"
                    self._report(report, self._outcome(row, "skipped", reason=why))
                    continue
                if not self._move(row.id, "ready", "processing"):
                    continue  # taken or changed since the queue was read
                outcome = await self._process_claimed(row)
                if outcome.status != "skipped":
                    calls += 1
                self._report(report, outcome)
                if outcome.status == "failed" and outcome.stops_run:
                    report.stopped = outcome.error
                    break
        return report

    def _report(self, report: ProcessReport, outcome: ConversationOutcome) -> None:
        report.conversations.append(outcome)
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    @staticmethod
    def _outcome(row: _Row, status: str, **values: Any) -> ConversationOutcome:
        return ConversationOutcome(
            row.id, row.session_id, row.source, status, row.message_count, **values
        )

    async def _process_claimed(self, row: _Row) -> ConversationOutcome:
        """Extract and store one conversation already marked ``processing``."""
        messages = self.messages(row.id)
        if not messages:
            self._move(row.id, "processing", "skipped", processed_at=now_ts())
            return self._outcome(row, "skipped", reason="no conversational text")
        try:
            extraction = await extract(
                self.runner, messages, conversation_id=row.id, session_id=row.session_id
            )
        except ClaudeCancelled:
            self._move(row.id, "processing", "ready")
            raise
        except ClaudeError as exc:
            self._move(row.id, "processing", "ready")
            return self._outcome(
                row, "failed", error=str(exc), stops_run=isinstance(exc, _STOPS_THE_RUN)
            )
        except BaseException:
            self._move(row.id, "processing", "ready")
            raise
        try:
            with write_transaction(self.db) as conn:
                changes = self.facts.apply(extraction.facts)
                cursor = conn.execute(
                    """UPDATE conversations SET status = 'archived', summary = ?,
                           processed_at = ? WHERE id = ? AND status = 'processing'""",
                    (extraction.summary or None, now_ts(), row.id),
                )
                if cursor.rowcount != 1:
                    raise _Vanished
        except _Vanished:
            return self._outcome(
                row, "failed", error="the conversation was re-indexed while it was processed"
            )
        return self._outcome(
            row,
            "archived",
            summary=extraction.summary,
            changes=changes,
            dropped_facts=extraction.dropped,
        )


class _Vanished(Exception):
    """The conversation row changed under us (a re-import); the transaction rolls back."""
