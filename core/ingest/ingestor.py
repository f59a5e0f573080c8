"""Incremental, crash-safe ingestion of transcript files into the index.

For each file the index keeps a ``files`` row: size, mtime, the byte offset of the last complete
line consumed, and a hash of a window of the bytes before it. A re-scan stats every file and
reads only what grew; a file that shrank or whose consumed bytes changed is re-imported.

Crash safety comes from one rule: entries and the offset that produced them commit in the same
transaction. ``status = 'ingesting'`` is committed before the first batch and cleared with the
last, so a process killed in between leaves a marker that :meth:`Ingestor.recover` uses on the
next start to drop anything past the committed offset and rebuild that file's derived rows.
Re-running then yields exactly the entries of a clean run.

Small files commit several to a transaction (``GROUP_BYTES``; each file's own commits nest in
it as savepoints), so the rule holds for the group: a kill loses the group's work, never part
of it, and the next run reads those files again.

This module must never modify a source file, and never let one bad line stop a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core.archive.catalog import refresh_session, resolve_leaf_titles
from clawback.core.archive.conversations import refresh_ready
from clawback.core.config import Config
from clawback.core.db import write_transaction
from clawback.core.formats.detect import WORKFLOW_JOURNAL, is_workflow_journal, sniff
from clawback.core.formats.openclaw import load_session_store
from clawback.core.ingest.batch import FileBatch, FileState
from clawback.core.ingest.file_reader import (
    QUIET_SECONDS,
    Chunk,
    FileReader,
    Start,
    WorkItem,
    is_quiet,
    window_hash,
)
from clawback.core.ingest.parse_ahead import MAX_FILE_BYTES, ParseAhead, ReadOptions, worth_it
from clawback.core.ingest.problems import record_skipped_files
from clawback.core.ingest.sources import SourceRoot, configured_roots
from clawback.core.locking import WriterLock
from clawback.core.paths import Paths
from clawback.core.records import SessionMeta, Source
from clawback.core.safejson import clean_text
from clawback.core.text.chunking import chunk_markdown
from clawback.core.text.cjk import cjk_bigrams
from clawback.core.text.masking import mask_secrets, seal

# Small files commit together, up to this many bytes per transaction: a commit (its pages into
# the WAL, a new FTS5 segment) costs more than a small file's rows. A bigger file commits alone,
# a chunk at a time.
GROUP_BYTES = 4 * 1024 * 1024

Progress = Callable[[int], None]  # called with bytes consumed since the last call
# Given (files to read, bytes to read), returns the Progress callback for this run.
ProgressFactory = Callable[[int, int], Progress]


@dataclass
class IngestStats:
    files: int = 0  # files read (new, grown or re-imported)
    unchanged: int = 0
    reimported: int = 0
    entries: int = 0
    skipped_lines: int = 0
    unsupported_files: int = 0
    missing: int = 0
    bytes: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    # (path, why) for every file not read: unknown format, unreadable, a bad name, a failure
    skipped_files: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "unchanged": self.unchanged,
            "reimported": self.reimported,
            "entries": self.entries,
            "skipped_lines": self.skipped_lines,
            "unsupported_files": self.unsupported_files,
            "missing": self.missing,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "errors": self.errors,
            "skipped_files": [{"path": p, "reason": r} for p, r in self.skipped_files],
        }


def _groups(work: list[WorkItem]) -> Iterator[list[WorkItem]]:
    """``work`` in order, cut into runs of at most ``GROUP_BYTES`` (a bigger file alone)."""
    group: list[WorkItem] = []
    size = 0
    for item in work:
        if group and size + item.size > GROUP_BYTES:
            yield group
            group, size = [], 0
        group.append(item)
        size += item.size
    if group:
        yield group


class Ingestor:
    """Brings the index up to date with transcript files; one writer per home at a time."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        config: Config,
        paths: Paths,
        *,
        on_indexed: Callable[[set[str]], None] | None = None,
    ) -> None:
        self.db = db
        self.config = config
        self.paths = paths
        self.lock = WriterLock(paths.lock)
        self.on_indexed = on_indexed
        self._max_line = config.archive.max_line_mb * 1024 * 1024
        self._mask = mask_secrets if config.archive.mask_secrets else None
        # What every stored text other than an entry body passes through: names, titles, paths.
        self._seal = seal if config.archive.mask_secrets else clean_text
        self._last_path: tuple[str, str] = ("", "")  # (path, sealed): a file is sealed once
        self._stores: dict[Path, dict[str, SessionMeta]] = {}
        self.seen: set[tuple[str, str]] = set()  # files found by the last scan

    # -- entry points ---------------------------------------------------------------------------

    def recover(self) -> int:
        """Finish what a killed ingestion left behind; returns the number of files repaired."""
        with self.lock:
            rows = list(self.db.query("SELECT * FROM files WHERE status = 'ingesting'"))
            for row in rows:
                state = FileState.from_row(row)
                with write_transaction(self.db) as conn:
                    self._delete_entries(conn, state.id, after_line=state.last_line)
                    conn.execute(
                        "DELETE FROM conversations WHERE file_id = ? AND first_line > ?",
                        (state.id, state.last_line),
                    )
                    conn.execute(
                        "DELETE FROM leaf_titles WHERE file_id = ? AND line > ?",
                        (state.id, state.last_line),
                    )
                    # size 0 makes the next scan look at the file again and resume at the offset.
                    conn.execute(
                        "UPDATE files SET status = 'idle', size = 0 WHERE id = ?", (state.id,)
                    )
                    if state.session_id:
                        refresh_session(conn, state.session_id)
        return len(rows)

    def scan(
        self, roots: Iterable[SourceRoot], *, reimport: bool = False, stats: IngestStats
    ) -> list[WorkItem]:
        """Stat every file under ``roots`` and return those that need reading. No reads here."""
        quiet_before = time.time() - QUIET_SECONDS
        states = {
            (source, key): (size, mtime, status == "idle" and not missing, tail > 0)
            for source, key, size, mtime, status, missing, tail in self.db.execute(
                "SELECT source, file_key, size, mtime, status, missing, tail_bytes FROM files"
            )
        }
        work: list[WorkItem] = []
        self.seen = set()
        problems: list[tuple[str, str]] = []
        seal = self._seal
        for root in roots:
            for path, raw_key, st in root.stat_files(problems):
                source = root.source
                if source is None:
                    source, why = self.sniff(Path(path))
                    if source is None:
                        stats.unsupported_files += 1
                        problems.append((path, why))
                        continue
                if source is Source.CLAUDE_CODE and is_workflow_journal(raw_key):
                    stats.unsupported_files += 1
                    problems.append((path, WORKFLOW_JOURNAL))
                    continue
                key = seal(raw_key)  # a key is stored and shown: no secret in a folder name
                known = states.get((source.value, key))
                self.seen.add((source.value, key))
                if (
                    not reimport
                    and known is not None
                    and known[0] == st.st_size
                    and known[2]
                    and (source is not Source.MEMORY or known[1] == st.st_mtime)
                    # An unfinished last line of a file gone quiet may now be read whole.
                    and not (known[3] and st.st_mtime <= quiet_before)
                ):
                    stats.unchanged += 1
                    continue
                work.append(WorkItem(root, Path(path), source, key, st.st_size, st.st_mtime))
        stats.skipped_files += [(seal(path), why) for path, why in problems]
        return work

    def ingest(
        self,
        roots: Iterable[SourceRoot],
        *,
        reimport: bool = False,
        full_scan: bool = False,
        progress: ProgressFactory | None = None,
    ) -> IngestStats:
        """Scan ``roots`` and ingest what changed.

        ``full_scan`` means ``roots`` are all configured sources, so files the index knows that
        were not seen (and no longer exist where they were) are marked source-missing.
        ``progress(total_files, total_bytes)`` returns a callback fed with bytes consumed.
        """
        started = time.perf_counter()
        stats = IngestStats()
        self.recover()
        roots = list(roots)
        work = self.scan(roots, reimport=reimport, stats=stats)
        advance = progress(len(work), sum(w.size for w in work)) if progress else None
        touched: set[str] = set()
        with self._read_ahead(work, reimport=reimport) as ahead:
            for group in _groups(work):
                with self._together(len(group) > 1):
                    for item in group:
                        touched |= self._ingest_or_report(
                            item, reimport=reimport, stats=stats, advance=advance, ahead=ahead
                        )
        if full_scan:
            stats.missing = self.mark_missing()
        with write_transaction(self.db) as conn:
            resolve_leaf_titles(conn)
            refresh_ready(conn, self.config.archive.conversation_gap_minutes)
            record_skipped_files(conn, roots, work, stats.skipped_files, self._seal)
        stats.seconds = time.perf_counter() - started
        if touched and self.on_indexed:
            self.on_indexed(touched)
        return stats

    def _ingest_or_report(
        self,
        item: WorkItem,
        *,
        reimport: bool,
        stats: IngestStats,
        advance: Progress | None,
        ahead: ParseAhead | None,
    ) -> set[str]:
        """:meth:`ingest_file`, but a file that fails is named in ``stats`` (and health) and
        rolled back to its last commit: one file must never stop the others."""
        try:
            return self.ingest_file(
                item, reimport=reimport, stats=stats, advance=advance, ahead=ahead
            )
        except Exception as exc:
            why = (
                f"cannot read: {exc.strerror}"
                if isinstance(exc, OSError) and exc.strerror
                else f"failed: {type(exc).__name__}: {exc}"
            )
            path, why = self._seal(str(item.path)), self._seal(why)
            stats.skipped_files.append((path, why))
            stats.errors.append(f"{path}: {why}")  # the app shows these as they happen
            self._abandon(item)
            return set()

    @contextmanager
    def _together(self, grouped: bool) -> Iterator[None]:
        """One transaction around a group of small files, whose own commits nest in it as
        savepoints. Taken under the writer lock, so the order is always lock, then database."""
        if not grouped:
            yield
            return
        with self.lock, write_transaction(self.db):
            yield

    def classify(self, path: Path) -> Source | None:
        """A file's source from where it lives under the configured roots, else its content."""
        resolved = path.resolve()

        for root in configured_roots(self.config, self.paths):
            if root.source is not None and resolved.is_relative_to(root.root.resolve()):
                return root.source
        return self.detect(path)

    def detect(self, path: Path) -> Source | None:
        """A file's format from its first lines' shapes (``None``: not a format we read)."""
        return self.sniff(path)[0]

    def sniff(self, path: Path) -> tuple[Source | None, str]:
        """A file's format from the shapes of its first lines, or ``None`` and why not."""
        return sniff(path, self._max_line)

    def _abandon(self, item: WorkItem) -> None:
        """After a file failed: keep what was committed, and never leave it ``ingesting``.

        Its size is forgotten, so the next scan tries it again (and names it again if it fails).
        """
        with write_transaction(self.db) as conn:
            for file_id, last_line, session_id in conn.execute(
                "SELECT id, last_line, session_id FROM files WHERE source = ? AND file_key = ?",
                (item.source.value, item.key),
            ).fetchall():
                self._delete_entries(conn, file_id, after_line=last_line)
                conn.execute(
                    "DELETE FROM conversations WHERE file_id = ? AND first_line > ?",
                    (file_id, last_line),
                )
                conn.execute("UPDATE files SET status = 'idle', size = 0 WHERE id = ?", (file_id,))
                if session_id:
                    refresh_session(conn, session_id)

    # -- one file -------------------------------------------------------------------------------

    def ingest_file(
        self,
        item: WorkItem,
        *,
        reimport: bool = False,
        stats: IngestStats | None = None,
        advance: Progress | None = None,
        ahead: ParseAhead | None = None,
    ) -> set[str]:
        """Bring one file up to date; returns the session ids whose entries changed.

        ``ahead`` may hold the file already read by a worker (see :meth:`_read_ahead`).
        """
        stats = stats if stats is not None else IngestStats()
        with self.lock:
            state = self._state(item)
            if item.source is Source.MEMORY:
                return self._ingest_memory(item, state, stats)
            if (
                not reimport
                and state.size == item.size
                and state.status == "idle"
                and not state.missing
                and not (state.tail_bytes and is_quiet(item))
            ):
                stats.unchanged += 1  # another process got here first
                return set()
            if self._starts_over(item, state, reimport=reimport):
                if state.offset:
                    stats.reimported += 1
                with write_transaction(self.db) as conn:
                    self._reset(conn, state)
            stats.files += 1
            return self._consume(item, state, stats, advance, ahead)

    def _sealed_path(self, item: WorkItem) -> str:
        """``item``'s path as stored; asked for twice per new file, so the last one is kept."""
        path = str(item.path)
        last, sealed = self._last_path
        if path != last:
            sealed = self._seal(path)
            self._last_path = (path, sealed)
        return sealed

    def _state(self, item: WorkItem) -> FileState:
        select = "SELECT * FROM files WHERE source = ? AND file_key = ?"
        ident = (item.source.value, item.key)
        cursor = self.db.execute(select, ident)
        row = cursor.fetchone()
        if row is None:
            with write_transaction(self.db) as conn:
                conn.execute(
                    "INSERT INTO files (source, file_key, path) VALUES (?, ?, ?)",
                    (*ident, self._sealed_path(item)),
                )
            cursor = self.db.execute(select, ident)
            row = cursor.fetchone()
        columns = [d[0] for d in cursor.description]
        return FileState.from_row(dict(zip(columns, row, strict=True)))

    @staticmethod
    def _starts_over(item: WorkItem, state: FileState, *, reimport: bool) -> bool:
        """Whether the file is read again from its start: asked to, shrunk, or rewritten."""
        return (
            reimport
            or item.size < state.offset
            or (state.offset > 0 and window_hash(item.path, state.offset) != state.prefix_hash)
        )

    def _reset(self, conn: Any, state: FileState) -> None:
        """Forget everything indexed from a file so it is read again from the start."""
        self._delete_entries(conn, state.id)
        conn.execute("DELETE FROM conversations WHERE file_id = ?", (state.id,))
        conn.execute("DELETE FROM skipped_lines WHERE file_id = ?", (state.id,))
        conn.execute("DELETE FROM leaf_titles WHERE file_id = ?", (state.id,))
        conn.execute(
            """UPDATE files SET "offset" = 0, last_line = 0, size = 0, prefix_hash = NULL,
               skipped_lines = 0, last_ts = NULL WHERE id = ?""",
            (state.id,),
        )
        state.offset = state.last_line = state.size = 0
        state.prefix_hash = None

    @staticmethod
    def _delete_entries(conn: Any, file_id: int, after_line: int = 0) -> None:
        # External-content FTS needs the old values to remove a row's terms.
        conn.execute(
            """INSERT INTO entries_fts (entries_fts, rowid, text, cjk)
               SELECT 'delete', id, text, cjk FROM entries WHERE file_id = ? AND line > ?""",
            (file_id, after_line),
        )
        conn.execute("DELETE FROM entries WHERE file_id = ? AND line > ?", (file_id, after_line))

    # -- reading JSONL --------------------------------------------------------------------------

    def _consume(
        self,
        item: WorkItem,
        state: FileState,
        stats: IngestStats,
        advance: Progress | None,
        ahead: ParseAhead | None,
    ) -> set[str]:
        batch = FileBatch(
            self.db,
            item,
            state,
            gap_minutes=self.config.archive.conversation_gap_minutes,
            seal=self._seal,
            store_meta=self.store_meta,
        )
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE files SET status = 'ingesting', path = ?, missing = 0 WHERE id = ?",
                (self._sealed_path(item), state.id),
            )
        start = Start(state.offset, state.last_line, state.session_id)
        chunks: Iterable[Chunk] | None = ahead.take(item, start) if ahead else None
        if chunks is None:
            chunks = FileReader(
                item, start, max_line=self._max_line, mask=self._mask, seal=self._seal
            ).chunks()
        session_id = None
        consumed = start.offset
        for chunk in chunks:
            batch.commit(chunk)
            if advance:
                advance((item.size if chunk.final else chunk.end_offset) - consumed)
            consumed, session_id = chunk.end_offset, chunk.session_id
        stats.entries += batch.total_entries
        stats.skipped_lines += batch.total_skipped
        stats.bytes += state.offset - start.offset
        return {session_id} if session_id else set()

    def _read_ahead(
        self, work: list[WorkItem], *, reimport: bool
    ) -> AbstractContextManager[ParseAhead | None]:
        """A worker reading the files ahead of their turn, when there is enough to read.

        Each file is planned with the start it will have if nothing changes before its turn;
        :meth:`_consume` uses the worker's chunks only if that still holds.
        """
        files = [item for item in work if item.source is not Source.MEMORY]
        if not self.config.archive.parse_worker or not worth_it([i.size for i in files]):
            return nullcontext()  # sizes are an upper bound of what is left to read
        # The rows of these files only: the scan read every row once already.
        wanted = json.dumps([[item.source.value, item.key] for item in files])
        known = {
            (state.source, state.file_key): state
            for state in map(
                FileState.from_row,
                self.db.query(
                    """SELECT f.* FROM json_each(?) AS w CROSS JOIN files AS f
                       ON f.source = json_extract(w.value, '$[0]')
                       AND f.file_key = json_extract(w.value, '$[1]')""",
                    [wanted],
                ),
            )
        }
        plan: list[tuple[WorkItem, Start]] = []
        for item in files:
            state = known.get((item.source.value, item.key))
            try:
                start = self._planned_start(item, state, reimport=reimport)
            except OSError:  # gone or unreadable already: its own turn reports it
                continue
            if item.size - start.offset <= MAX_FILE_BYTES:
                plan.append((item, start))
        if not worth_it([item.size - start.offset for item, start in plan]):
            return nullcontext()
        try:
            return ParseAhead(plan, ReadOptions(self._max_line, self._mask, self._seal))
        except (OSError, RuntimeError):  # no process, thread or temp file: read it all here
            return nullcontext()

    def _planned_start(self, item: WorkItem, state: FileState | None, *, reimport: bool) -> Start:
        """Where reading ``item`` will start when its turn comes, if nothing changes first:
        what :meth:`ingest_file` decides, without the writes."""
        if state is None:
            return Start(0, 0, None)
        if self._starts_over(item, state, reimport=reimport):
            return Start(0, 0, state.session_id)
        return Start(state.offset, state.last_line, state.session_id)

    def store_meta(self, path: Path) -> SessionMeta | None:
        """What OpenClaw's ``sessions.json`` beside a transcript says about it."""
        folder = path.parent
        if folder not in self._stores:
            self._stores[folder] = load_session_store(folder / "sessions.json")
        return self._stores[folder].get(path.stem)

    # -- memory markdown ------------------------------------------------------------------------

    def _ingest_memory(self, item: WorkItem, state: FileState, stats: IngestStats) -> set[str]:
        data = item.path.read_bytes()
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if digest == state.prefix_hash:
            with write_transaction(self.db) as conn:
                conn.execute(
                    "UPDATE files SET size = ?, mtime = ?, missing = 0 WHERE id = ?",
                    (item.size, item.mtime, state.id),
                )
            stats.unchanged += 1
            return set()
        text = data.decode("utf-8", "replace")
        chunks = chunk_markdown(text)
        rows = []
        for chunk in chunks:
            body = self._mask(chunk.text) if self._mask else chunk.text
            rows.append(
                (state.id, chunk.start_line, chunk.end_line, body, chunk.heading, cjk_bigrams(body))
            )
        with write_transaction(self.db) as conn:
            self._reset(conn, state)
            first_id = conn.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()[0]
            conn.executemany(
                """INSERT INTO entries (file_id, line, end_line, role, kind, text, display, cjk)
                   VALUES (?, ?, ?, 'system', 'text', ?, ?, ?)""",
                rows,
            )
            conn.execute(
                """INSERT INTO entries_fts (rowid, text, cjk)
                   SELECT id, text, cjk FROM entries WHERE id > ?""",
                (first_id,),
            )
            conn.execute(
                """UPDATE files SET size = ?, mtime = ?, "offset" = ?, last_line = ?,
                   prefix_hash = ?, missing = 0, path = ? WHERE id = ?""",
                (
                    item.size,
                    item.mtime,
                    len(data),
                    text.count("\n"),
                    digest,
                    self._sealed_path(item),
                    state.id,
                ),
            )
        stats.files += 1
        stats.entries += len(rows)
        return set()

    # -- bookkeeping ----------------------------------------------------------------------------

    def mark_missing(self) -> int:
        """Flag files (and sessions all of whose files) no longer exist; returns files flagged.

        The entries stay: a deleted transcript's session remains browsable and searchable.
        """
        seen = self.seen
        rows = list(
            self.db.query(
                "SELECT id, source, file_key, path, session_id FROM files WHERE missing = 0"
            )
        )
        gone = [
            row
            for row in rows
            if (row["source"], row["file_key"]) not in seen and not os.path.exists(row["path"])
        ]
        if not gone:
            return 0
        with self.lock, write_transaction(self.db) as conn:
            conn.executemany(
                "UPDATE files SET missing = 1 WHERE id = ?", [(r["id"],) for r in gone]
            )
            for session_id in {r["session_id"] for r in gone if r["session_id"]}:
                refresh_session(conn, session_id)
        return len(gone)
