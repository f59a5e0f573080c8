"""One file's lines on their way into the index: parsed, placed, committed with their offset.

A :class:`FileBatch` holds what was parsed since the last commit. :meth:`FileBatch.commit`
writes entries, conversations, skipped lines and the new offset in ONE transaction; that single
rule is what makes ingestion crash-safe. It never reads the file itself: the ingestor feeds it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core.archive.catalog import refresh_session
from clawback.core.archive.cjk import cjk_bigrams
from clawback.core.archive.conversations import ConversationTracker
from clawback.core.archive.sources import SourceRoot
from clawback.core.db import write_transaction
from clawback.core.records import Entry, Kind, ParsedLine, Role, SessionMeta, Source
from clawback.core.timeutil import normalize_ts

PREFIX_WINDOW = 4096
# An enum member's ``.value`` is a Python-level property: a dict lookup is cheaper per row.
_VALUE: dict[Role | Kind, str] = {member: member.value for member in (*Role, *Kind)}


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

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> FileState:
        return cls(**{k: row[k] for k in cls.__dataclass_fields__})


@dataclass
class WorkItem:
    root: SourceRoot
    path: Path
    source: Source
    key: str
    size: int
    mtime: float


def window_hash(path: Path, offset: int) -> str | None:
    """Hash of the first and the last ``PREFIX_WINDOW`` bytes before ``offset``."""
    if offset <= 0:
        return None
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        digest.update(handle.read(min(offset, PREFIX_WINDOW)))
        if offset > PREFIX_WINDOW:
            handle.seek(max(PREFIX_WINDOW, offset - PREFIX_WINDOW))
            digest.update(handle.read(offset - max(PREFIX_WINDOW, offset - PREFIX_WINDOW)))
    return digest.hexdigest()


def _merge_into(into: SessionMeta, meta: SessionMeta) -> None:
    """Fold one line's facts into a session's: titles take the latest, the rest the first."""
    # Spelled out field by field: this runs once per line, and a getattr/setattr loop over
    # the names cost more than the rest of the line's bookkeeping.
    if meta.label is not None:
        into.label = meta.label  # "" clears
    if meta.title:
        into.title = meta.title
    if meta.custom_title:
        into.custom_title = meta.custom_title
    if meta.key and into.key is None:
        into.key = meta.key
    if meta.cwd and into.cwd is None:
        into.cwd = meta.cwd
    if meta.parent_id and into.parent_id is None:
        into.parent_id = meta.parent_id
    if meta.channel and into.channel is None:
        into.channel = meta.channel
    if meta.created and into.created is None:
        into.created = meta.created


def _is_uuid_like(text: str) -> bool:
    return len(text) == 36 and text.count("-") == 4


class FileBatch:
    """Lines parsed from one file, waiting to be committed with the offset after them."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        item: WorkItem,
        state: FileState,
        *,
        gap_minutes: int,
        mask: Callable[[str], str] | None,
        seal: Callable[[str], str] = str,
        store_meta: Callable[[Path], SessionMeta | None],
    ) -> None:
        self.db = db
        self.mask = mask  # secret masking, when the config asks for it
        self.seal = seal  # the same for every other stored text: titles, ids, reasons
        self._sealed_ids: dict[str, str] = {}
        self.torn = 0  # bytes of an unfinished last line, reported in health
        self.store_meta = store_meta  # OpenClaw's sessions.json entry for a transcript
        self.item = item
        self.state = state
        # (line, entries, session): ``session`` is None for the file's own session, ``""`` for
        # a summary waiting to learn which session it titles, else another session's id.
        self.pending: list[tuple[int, list[Entry], str | None]] = []
        self.leaf_titles: list[tuple[str, str, int]] = []  # (leaf uuid, summary, line)
        # Whether the file is a session of its own: anything besides other sessions' titles.
        self.owns_entries = bool(state.session_id) or item.source is not Source.CLAUDE_CODE
        self.others: dict[str, SessionMeta] = {}  # sessions of a file that mixes several
        self.skipped: list[tuple[int, str]] = []
        self.meta = SessionMeta()
        self.lines = 0
        self.total_entries = 0
        self.total_skipped = 0
        self.end_line = state.last_line
        self.end_offset = state.offset
        self.last_ts: str | None = None
        self.session_id = state.session_id or self._session_from_path()
        self.force_sidechain = item.source is Source.CLAUDE_CODE and (
            "subagents" in item.path.parts[:-1] or item.path.name.startswith("agent-")
        )
        # Only a main Claude Code file is split per sessionId: sub-agent lines carry their
        # parent's id (or ``<parent>#agent-...`` in workflows) and belong to the parent.
        self.split_sessions = item.source is Source.CLAUDE_CODE and not self.force_sidechain
        self.conversations = ConversationTracker(db, state.id, item.source.value, gap_minutes)

    def _session_from_path(self) -> str | None:
        """A sub-agent's parent session: the folder above ``subagents/`` (workflows included)."""
        parts = self.item.path.parts[:-1]
        if self.item.source is Source.CLAUDE_CODE and "subagents" in parts:
            at = len(parts) - 1 - parts[::-1].index("subagents")
            return self.seal(parts[at - 1]) if at > 0 else None
        return None

    def skip(self, line: int, reason: str) -> None:
        self.skipped.append((line, reason))

    def mark(self, line: int, offset: int) -> None:
        self.lines += 1
        self.end_line, self.end_offset = line, offset

    def add(self, line: int, parsed: ParsedLine) -> None:
        if parsed.unknown:
            self.skip(line, parsed.unknown)
        meta = parsed.meta
        if meta and meta.title_for_uuid:
            # A Claude Code summary titles whichever session holds its leaf message, usually
            # another file's, maybe one not ingested yet: the catalog resolves it by uuid.
            self.leaf_titles.append((meta.title_for_uuid, meta.title or "", line))
            if parsed.entries:
                self.pending.append((line, parsed.entries, ""))
            return
        session = None
        if meta and meta.session_id and self.split_sessions:
            sealed = self._seal_id(meta.session_id)
            if self.session_id is None:
                self.session_id = sealed
            elif sealed != self.session_id:
                session = sealed  # a file mixing sessions: each keeps its own
                _merge_into(self.others.setdefault(session, SessionMeta()), meta)
        if parsed.entries:
            self.pending.append((line, parsed.entries, session))
            self.owns_entries = self.owns_entries or session is None
        if meta and session is None:
            self._merge(meta)
            self.owns_entries = self.owns_entries or bool(meta.title or meta.custom_title)

    def _seal_id(self, session_id: str) -> str:
        """A session id as stored; every line repeats it, so it is sealed once per file."""
        sealed = self._sealed_ids.get(session_id)
        if sealed is None:
            sealed = self._sealed_ids[session_id] = self.seal(session_id)
        return sealed

    def _merge(self, meta: SessionMeta) -> None:
        if meta.session_id and self.session_id is None:
            self.session_id = self._seal_id(meta.session_id)
        _merge_into(self.meta, meta)

    def _rows(self, file_id: int, session_id: str | None) -> Iterator[tuple[Any, ...]]:
        mask = self.mask
        place = self.conversations.place
        force_sidechain = self.force_sidechain
        for line, entries, other in self.pending:
            first_ts = entries[0].timestamp
            ts = normalize_ts(first_ts)
            row_session = session_id if other is None else (other or None)
            conv_id = place(line, ts, entries, other) if other != "" else None
            if ts:
                self.last_ts = ts
            for block, entry in enumerate(entries):
                text = display = entry.display
                if mask:
                    text = mask(entry.text)
                    if display:
                        display = mask(display)
                else:
                    text = entry.text
                entry_ts = ts if entry.timestamp == first_ts else normalize_ts(entry.timestamp)
                # One row per entry however long (piece 0): a phrase or an AND query must match
                # the entry as a whole, and snippet() picks the window of it to show.
                yield (
                    file_id, row_session, line, block, 0, _VALUE[entry.role], _VALUE[entry.kind],
                    entry_ts, entry.uuid, entry.sidechain or force_sidechain,
                    entry.conversational, entry.partial, entry.model, display, text,
                    cjk_bigrams(text), conv_id, entry.error,
                )  # fmt: skip

    def commit(self, *, final: bool) -> None:
        item, state = self.item, self.state
        if self.session_id is None and final:
            self.session_id = (
                self.seal(item.path.stem) if _is_uuid_like(item.path.stem) else item.key
            )
        if item.source is Source.OPENCLAW and final:
            stored = self.store_meta(item.path)
            if stored:
                self._merge(stored)
        with write_transaction(self.db) as conn:
            first_id = conn.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()[0]
            session_id = self.session_id or self.seal(item.path.stem)
            self.conversations.begin(conn, session_id, self.force_sidechain)
            before = conn.total_changes
            conn.executemany(
                """INSERT INTO entries (file_id, session_id, line, block, piece, role, kind, ts,
                   uuid, sidechain, conversational, partial, model, display, text, cjk,
                   conversation_id, error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                self._rows(state.id, session_id),
            )
            inserted = conn.total_changes - before
            if inserted:
                conn.execute(
                    """INSERT INTO entries_fts (rowid, text, cjk)
                       SELECT id, text, cjk FROM entries WHERE id > ?""",
                    (first_id,),
                )
            self.conversations.flush(conn)
            if self.leaf_titles:
                conn.executemany(
                    """INSERT OR REPLACE INTO leaf_titles (leaf_uuid, title, file_id, line)
                       VALUES (?, ?, ?, ?)""",
                    [(leaf, self.seal(title), state.id, line)
                     for leaf, title, line in self.leaf_titles],
                )  # fmt: skip
            if self.skipped:
                conn.executemany(
                    "INSERT OR REPLACE INTO skipped_lines (file_id, line, reason) VALUES (?, ?, ?)",
                    [(state.id, line, self.seal(reason)) for line, reason in self.skipped],
                )
            state.offset, state.last_line = self.end_offset, self.end_line
            state.prefix_hash = window_hash(item.path, state.offset)
            # A file holding only other sessions' summaries (or nothing) is no session itself.
            owner = session_id if self.owns_entries else None
            conn.execute(
                """UPDATE files SET "offset" = ?, last_line = ?, prefix_hash = ?,
                   skipped_lines = skipped_lines + ?, session_id = ?, new_entries = 1,
                   last_ts = coalesce(?, last_ts) WHERE id = ?""",
                (state.offset, state.last_line, state.prefix_hash, len(self.skipped),
                 owner, self.last_ts, state.id),
            )  # fmt: skip
            if final:
                conn.execute(
                    """UPDATE files SET status = 'idle', size = ?, mtime = ?, tail_bytes = ?
                       WHERE id = ?""",
                    (item.size, item.mtime, self.torn, state.id),
                )
                if owner:
                    self._save_session(conn, owner, self.meta)
                for other, meta in self.others.items():
                    self._save_session(conn, other, meta)
        self.total_entries += inserted
        self.total_skipped += len(self.skipped)
        self.pending.clear()
        self.skipped.clear()
        self.leaf_titles.clear()
        self.lines = 0

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
        refresh_session(conn, session_id)
