"""One file's parts written into the index, each with the offset after its lines.

:class:`FileBatch` is the writing half of ingesting a file (:mod:`clawback.core.ingest.file_reader`
is the reading half). :meth:`FileBatch.commit` writes a part's entries, conversations, skipped
lines and the new offset in ONE transaction; that single rule is what makes ingestion
crash-safe. It never reads the file's lines itself: the ingestor feeds it parts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core.archive import ConversationTracker, KeptCopies, refresh_session
from clawback.core.db import write_transaction
from clawback.core.ingest.file_reader import ROW_COLUMNS, FilePart, merge_meta
from clawback.core.ingest.sources import WorkItem
from clawback.core.records import SessionMeta, Source
from clawback.core.timeutil import normalize_ts
from clawback.core.usage import index as usage_index

_INSERT_ENTRIES = (
    f"INSERT INTO entries ({', '.join(ROW_COLUMNS)}, file_id, session_id, conversation_id)"
    f" VALUES ({', '.join('?' * (len(ROW_COLUMNS) + 3))})"
)


@dataclass
class FileState:
    id: int
    source: str
    file_key: str
    path: str
    session_id: str | None
    status: str
    size: int
    mtime: float
    offset: int
    last_line: int
    prefix_hash: str | None
    missing: int
    tail_bytes: int = 0  # an unfinished last line left unread
    kept_bytes: int = 0  # committed length of the file's kept copy (0: none)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> FileState:
        return cls(**{k: row[k] for k in cls.__dataclass_fields__})


class FileBatch:
    """Writes one file's parts, in order, each in one transaction with its offset."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        item: WorkItem,
        state: FileState,
        *,
        gap_minutes: int,
        seal: Callable[[str], str] = str,
        store_meta: Callable[[Path], SessionMeta | None],
        copies: KeptCopies | None = None,
        keep: bool = False,
        recount: set[str] | None = None,
    ) -> None:
        self.db = db
        # Sessions to recount when the enclosing transaction ends, not at this file's last
        # part: the ingestor's group of small files (see ``Ingestor._together``).
        self.recount = recount
        # Where the parts' kept lines go; with ``keep`` off, an old copy is dropped instead.
        self.copies = copies
        self.keep = keep and copies is not None
        self.seal = seal  # a session's title, folder and names, sealed as they are saved
        self.store_meta = store_meta  # OpenClaw's sessions.json entry for a transcript
        self.item = item
        self.state = state
        self.total_entries = 0
        self.total_skipped = 0
        # Whether this read added usage lines: the file's sums are refreshed with its last part.
        self.usage_written = False
        self.conversations = ConversationTracker(db, state.id, item.source.value, gap_minutes)

    def _rows(self, part: FilePart, file_id: int) -> Iterator[tuple[Any, ...]]:
        """The part's rows with what only the index knows: file, session, conversation."""
        place = self.conversations.place
        session_id = part.session_id
        tail: tuple[int, str | None, int | None]  # file, session, conversation
        for line, ts, moment, other, counts, rows in part.lines:
            if other is None:
                tail = (file_id, session_id, place(line, ts, moment, counts))
            elif other:
                tail = (file_id, other, place(line, ts, moment, counts, other))
            else:  # a summary whose session is not known yet: no session, no conversation
                tail = (file_id, None, None)
            for row in rows:
                yield row + tail

    def _usage_rows(self, part: FilePart, file_id: int) -> Iterator[tuple[Any, ...]]:
        """The part's usage rows with file and session."""
        session_id = part.session_id
        for line, seq, other, *values in part.usage:
            yield (file_id, line, seq, other or session_id, *values)

    def _write_usage(self, conn: Any, part: FilePart, after: int) -> None:
        """The part's usage lines, and which lines of their responses count now; another file
        whose lines stopped counting (a copy of its response came in here) is refreshed."""
        file_id = self.state.id
        changed = usage_index.write(conn, file_id, self._usage_rows(part, file_id), after)
        for other in changed - {file_id}:
            usage_index.refresh_buckets(conn, other)
        self.usage_written = True

    def commit(self, part: FilePart) -> None:
        item, state = self.item, self.state
        session_id = part.session_id
        if item.source is Source.OPENCLAW and part.final:
            stored = self.store_meta(item.path)
            if stored:
                merge_meta(part.meta, stored)
        kept_bytes = self._keep(part)
        with write_transaction(self.db) as conn:
            first_id = conn.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()[0]
            self.conversations.begin(conn, session_id)
            before = conn.total_changes
            conn.executemany(_INSERT_ENTRIES, self._rows(part, state.id))
            inserted = conn.total_changes - before
            if inserted:
                conn.execute(
                    """INSERT INTO entries_fts (rowid, text, cjk)
                       SELECT id, text, cjk FROM entries WHERE id > ?""",
                    (first_id,),
                )
            self.conversations.flush(conn)
            if part.usage:
                self._write_usage(conn, part, after=state.last_line)
            if part.leaf_titles:
                conn.executemany(
                    """INSERT OR REPLACE INTO leaf_titles (leaf_uuid, title, file_id, line)
                       VALUES (?, ?, ?, ?)""",
                    [(leaf, title, state.id, line) for leaf, title, line in part.leaf_titles],
                )
            if part.skipped:
                conn.executemany(
                    "INSERT OR REPLACE INTO skipped_lines (file_id, line, reason) VALUES (?, ?, ?)",
                    [(state.id, line, reason) for line, reason in part.skipped],
                )
            state.offset, state.last_line = part.end_offset, part.end_line
            state.prefix_hash = part.prefix_hash
            # A file holding only other sessions' summaries (or nothing) is no session itself.
            owner = session_id if part.owns_entries else None
            conn.execute(
                """UPDATE files SET "offset" = ?, last_line = ?, prefix_hash = ?,
                   skipped_lines = skipped_lines + ?, session_id = ?, new_entries = 1,
                   last_ts = coalesce(?, last_ts), kept_bytes = ? WHERE id = ?""",
                (state.offset, state.last_line, state.prefix_hash, len(part.skipped),
                 owner, part.last_ts, kept_bytes, state.id),
            )  # fmt: skip
            if part.final:
                conn.execute(
                    """UPDATE files SET status = 'idle', size = ?, mtime = ?, tail_bytes = ?
                       WHERE id = ?""",
                    (item.size, item.mtime, part.torn, state.id),
                )
                if owner:
                    self._save_session(conn, owner, part.meta)
                for other, meta in part.others.items():
                    self._save_session(conn, other, meta)
                if self.usage_written:
                    usage_index.refresh_buckets(conn, state.id)
        self.total_entries += inserted
        self.total_skipped += len(part.skipped)
        dropped = state.kept_bytes and not kept_bytes
        state.kept_bytes = kept_bytes
        if dropped and self.copies is not None:
            self.copies.discard(self.item.source.value, self.item.key)

    def _keep(self, part: FilePart) -> int:
        """Append the part's kept lines to the file's copy, before the transaction that
        commits the length it returns (the copy's bytes past a committed length are cut off
        before the next append, so a kill between the two leaves the copy as the index)."""
        state = self.state
        if not self.keep or self.copies is None:
            return 0  # copies are off: none is kept, and an old one is no longer followed
        if part.kept is None or (state.kept_bytes == 0 and state.offset > 0):
            return state.kept_bytes  # nothing new, or a copy that would miss the file's start
        return self.copies.append(
            self.item.source.value, self.item.key, state.kept_bytes, [part.kept]
        )

    def _save_session(self, conn: Any, session_id: str, meta: SessionMeta) -> None:
        seal = self.seal
        key, title, custom, label, cwd, parent_id, channel = (
            None if value is None else seal(value)
            for value in (meta.key, meta.title, meta.custom_title, meta.label, meta.cwd,
                          meta.parent_id, meta.channel)
        )  # fmt: skip
        conn.execute(
            """INSERT INTO sessions (id, source, key, source_title, custom_title, label, cwd,
                   parent_id, channel, started_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (id) DO UPDATE SET
                   key = coalesce(excluded.key, key),
                   source_title = coalesce(excluded.source_title, source_title),
                   custom_title = coalesce(excluded.custom_title, custom_title),
                   label = CASE WHEN excluded.label IS NULL THEN label
                                WHEN excluded.label = '' THEN NULL ELSE excluded.label END,
                   cwd = coalesce(cwd, excluded.cwd),
                   parent_id = coalesce(parent_id, excluded.parent_id),
                   channel = coalesce(excluded.channel, channel),
                   started_at = coalesce(started_at, excluded.started_at)""",
            (session_id, self.item.source.value, key, title, custom, label, cwd, parent_id,
             channel, normalize_ts(meta.created)),
        )  # fmt: skip
        if self.recount is None:
            refresh_session(conn, session_id)
        else:
            self.recount.add(session_id)
