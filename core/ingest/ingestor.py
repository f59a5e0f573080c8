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
of it, and the next run reads those files again. A group recounts each session its files touched
once, just before it commits (a file alone, at its last part): a session spread over thousands
of sub-agent files is recounted once per group, not once per file (``bench/many_files.py``).

This module runs a pass and one file's turn; the rest sits beside it: :mod:`.scan` (what needs
reading, what is gone), :mod:`.plan` (where reading starts, the parse worker's plan),
:mod:`.repair` (back to the last commit), :mod:`.memory_files` (memory markdown).
It must never modify a source file, and never let one bad line stop a file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core.archive import KeptCopies, refresh_ready, refresh_session, resolve_leaf_titles
from clawback.core.config import Config
from clawback.core.db import write_transaction
from clawback.core.faults import is_index_fault
from clawback.core.formats.detect import detect_file
from clawback.core.formats.openclaw import load_session_store
from clawback.core.ingest import repair
from clawback.core.ingest.batch import FileBatch, FileState
from clawback.core.ingest.file_reader import FilePart, FileReader, Start
from clawback.core.ingest.memory_files import ingest_memory_file
from clawback.core.ingest.parse_ahead import ParseAhead, ReadOptions
from clawback.core.ingest.plan import copy_lacks_start, read_ahead, starts_over
from clawback.core.ingest.problems import record_skipped_files
from clawback.core.ingest.scan import gone_files, scan
from clawback.core.ingest.sources import SourceRoot, WorkItem, configured_roots, is_quiet
from clawback.core.ingest.stats import IngestStats, Progress, ProgressFactory
from clawback.core.ingest.usage_backfill import read_back_usage
from clawback.core.locking import WriterLock
from clawback.core.paths import Paths
from clawback.core.records import SessionMeta, Source
from clawback.core.safejson import clean_text
from clawback.core.text import mask_secrets, seal

__all__ = ["GROUP_BYTES", "IngestStats", "Ingestor", "Progress", "ProgressFactory"]

# Small files commit together, up to this many bytes per transaction: a commit (its pages into
# the WAL, a new FTS5 segment) costs more than a small file's rows. A bigger file commits alone,
# a part at a time.
GROUP_BYTES = 4 * 1024 * 1024


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
        self._keep = config.archive.keep_lines  # a kept copy of each Claude Code line
        self.copies = KeptCopies(paths.kept)
        self.seen: set[tuple[str, str]] = set()  # files found by the last scan
        # Inside a group of small files: the sessions it touched, recounted as it commits.
        self._recount: set[str] | None = None

    # -- entry points ---------------------------------------------------------------------------

    def recover(self) -> int:
        """Finish what a killed ingestion left behind; returns the number of files repaired.

        Files read before the index kept usage get theirs read back here (once).
        """
        with self.lock:
            repaired = repair.recover_interrupted(self.db)
            read_back_usage(self.db, self.copies, max_line=self._max_line, seal=self._seal)
            return repaired

    def scan(
        self, roots: Iterable[SourceRoot], *, reimport: bool = False, stats: IngestStats
    ) -> list[WorkItem]:
        """Stat every file under ``roots`` and return those that need reading. No reads here."""
        found = scan(
            self.db,
            roots,
            reimport=reimport,
            stats=stats,
            seal=self._seal,
            detect=self.detect_file,
            keep=self._keep,
        )
        self.seen = found.seen
        return found.work

    def mark_missing(self, *, full: bool = False) -> int:
        """Flag files the last scan did not find and that no longer exist; ``full``: that
        scan walked every configured source."""
        return repair.mark_missing(self.db, self.lock, gone_files(self.db, self.seen, full=full))

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
            stats.missing = self.mark_missing(full=True)
        with write_transaction(self.db) as conn:
            resolve_leaf_titles(conn)
            refresh_ready(conn, self.config.archive.conversation_gap_minutes)
            stats.known_skips = record_skipped_files(
                conn, roots, work, stats.skipped_files, self._seal
            )
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
            if is_index_fault(exc):  # a full disk or a damaged index: no file will fare better
                raise
            why = (
                f"cannot read: {exc.strerror}"
                if isinstance(exc, OSError) and exc.strerror
                else f"failed: {type(exc).__name__}: {exc}"
            )
            path, why = self._seal(str(item.path)), self._seal(why)
            stats.skipped_files.append((path, why))
            stats.errors.append(f"{path}: {why}")  # the app shows these as they happen
            repair.abandon(self.db, item.source.value, item.key)
            return set()

    @contextmanager
    def _together(self, grouped: bool) -> Iterator[None]:
        """One transaction around a group of small files, whose own commits nest in it as
        savepoints. Taken under the writer lock, so the order is always lock, then database.

        The sessions the group's files touched are recounted once, in that transaction, so a
        kill leaves neither the files without their counts nor counts without their files.
        """
        if not grouped:
            yield
            return
        with self.lock, write_transaction(self.db) as conn:
            self._recount = set()
            try:
                yield
                for session_id in sorted(self._recount):
                    refresh_session(conn, session_id)
            finally:
                self._recount = None

    def detect(self, path: Path) -> Source | None:
        """A file's source from where it lives under the configured roots, else its content."""
        resolved = path.resolve()
        for root in configured_roots(self.config, self.paths):
            if root.source is not None and resolved.is_relative_to(root.root.resolve()):
                return root.source
        return self.detect_file(path)[0]

    def detect_file(self, path: Path) -> tuple[Source | None, str]:
        """A file's format from the shapes of its first lines, or ``None`` and why not."""
        return detect_file(path, self._max_line)

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
                ingest_memory_file(
                    self.db,
                    item,
                    state,
                    stats,
                    mask=self._mask,
                    stored_path=self._sealed_path(item),
                )
                return set()
            if (
                not reimport
                and state.size == item.size
                and state.status == "idle"
                and not state.missing
                and not (state.tail_bytes and is_quiet(item))
                and not copy_lacks_start(item, state, keep=self._keep)
            ):
                stats.unchanged += 1  # another process got here first
                return set()
            if starts_over(item, state, reimport=reimport, keep=self._keep):
                if state.offset:
                    stats.reimported += 1
                with write_transaction(self.db) as conn:
                    repair.forget_file(conn, state, self._recount)
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
                if not self._adopt(conn, item):
                    conn.execute(
                        "INSERT INTO files (source, file_key, path) VALUES (?, ?, ?)",
                        (*ident, self._sealed_path(item)),
                    )
            cursor = self.db.execute(select, ident)
            row = cursor.fetchone()
        columns = [d[0] for d in cursor.description]
        return FileState.from_row(dict(zip(columns, row, strict=True)))

    def _adopt(self, conn: Any, item: WorkItem) -> bool:
        """Give ``item`` the row an older index kept it under (its masked key alone, maybe
        shared by several files: see ``sources.stored_key``), if one is left; returns whether.

        That row may hold another file's lines: the window hash tells, and the file is then
        read again. Its kept copy, named after the old key, is dropped: the file's next read
        writes one under its own key.
        """
        legacy = self._seal(item.root.file_key(item.path))
        if legacy == item.key:
            return False
        adopted = conn.execute(
            "UPDATE files SET file_key = ?, kept_bytes = 0 WHERE source = ? AND file_key = ?",
            (item.key, item.source.value, legacy),
        ).rowcount
        if adopted:
            self.copies.discard(item.source.value, legacy)
        return bool(adopted)

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
            copies=self.copies,
            keep=self._keep,
            recount=self._recount,
        )
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE files SET status = 'ingesting', path = ?, missing = 0 WHERE id = ?",
                (self._sealed_path(item), state.id),
            )
        start = Start(state.offset, state.last_line, state.session_id)
        parts: Iterable[FilePart] | None = ahead.take(item, start) if ahead else None
        if parts is None:
            parts = FileReader(
                item,
                start,
                max_line=self._max_line,
                mask=self._mask,
                seal=self._seal,
                keep=self._keep,
            ).parts()
        session_id = None
        consumed = start.offset
        for part in parts:
            batch.commit(part)
            if advance:
                advance((item.size if part.final else part.end_offset) - consumed)
            consumed, session_id = part.end_offset, part.session_id
        stats.entries += batch.total_entries
        stats.skipped_lines += batch.total_skipped
        stats.bytes += state.offset - start.offset
        return {session_id} if session_id else set()

    def _read_ahead(
        self, work: list[WorkItem], *, reimport: bool
    ) -> AbstractContextManager[ParseAhead | None]:
        """A worker reading the files ahead of their turn, when enabled and worth it.

        :meth:`_consume` uses the worker's parts only if the file's start is still the
        planned one (:mod:`clawback.core.ingest.plan`).
        """
        if not self.config.archive.parse_worker:
            return nullcontext()
        options = ReadOptions(self._max_line, self._mask, self._seal, self._keep)
        return read_ahead(self.db, work, options, reimport=reimport)

    def store_meta(self, path: Path) -> SessionMeta | None:
        """What OpenClaw's ``sessions.json`` beside a transcript says about it."""
        folder = path.parent
        if folder not in self._stores:
            self._stores[folder] = load_session_store(folder / "sessions.json")
        return self._stores[folder].get(path.stem)
