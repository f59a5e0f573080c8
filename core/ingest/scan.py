"""Which files need reading, and which the index knows that are gone: stats only, no reads.

An unchanged re-scan of 10,000 files must stay a directory walk plus one ``stat`` each, so
:func:`scan` reads every ``files`` row once up front and compares sizes (and, for memory files,
mtimes) in memory. A file is ``(source, key)``; what it was found as is kept in
:attr:`Scan.seen` so :func:`mark_missing` can tell what a full scan no longer found.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils
from clawback.core.archive.catalog import refresh_session
from clawback.core.db import write_transaction
from clawback.core.formats.detect import WORKFLOW_JOURNAL, is_workflow_journal
from clawback.core.ingest.file_reader import QUIET_SECONDS, WorkItem
from clawback.core.ingest.sources import SourceRoot, stored_key
from clawback.core.ingest.stats import IngestStats
from clawback.core.locking import WriterLock
from clawback.core.records import Source
from clawback.core.text.masking import MASK

DetectFile = Callable[[Path], tuple[Source | None, str]]  # a file's format, or None and why not


@dataclass
class Scan:
    work: list[WorkItem] = field(default_factory=list)  # files to read, in walk order
    seen: set[tuple[str, str]] = field(default_factory=set)  # (source, key) of every file found


def scan(
    db: sqlite_utils.Database,
    roots: Iterable[SourceRoot],
    *,
    reimport: bool,
    stats: IngestStats,
    seal: Callable[[str], str],
    detect: DetectFile,
    keep: bool = False,
) -> Scan:
    """Stat every file under ``roots``; what needs reading, and (in ``stats``) what not and why."""
    quiet_before = time.time() - QUIET_SECONDS
    states = {
        # "Settled" also needs, with ``keep`` on, a kept copy of a Claude Code file that has
        # been read (else it is read again from its start: see ``plan.copy_lacks_start``).
        (source, key): (
            size,
            mtime,
            status == "idle" and not missing and not (keep and offset and not kept),
            tail > 0,
        )
        for source, key, size, mtime, status, missing, tail, offset, kept in db.execute(
            """SELECT source, file_key, size, mtime, status, missing, tail_bytes,
               CASE WHEN source = 'claude-code' THEN "offset" ELSE 0 END, kept_bytes
               FROM files"""
        )
    }
    known_keys = {key for _source, key in states}  # an emptied file is still re-read
    found = Scan()
    problems: list[tuple[str, str]] = []
    for root in roots:
        for path, raw_key, st in root.stat_files(problems):
            source = root.source
            if st.st_size == 0 and seal(raw_key) not in known_keys:
                stats.empty_files += 1  # nothing to read or detect yet: read once it has lines
                continue
            if source is None:
                source, why = detect(Path(path))
                if source is None:
                    stats.unsupported_files += 1
                    problems.append((path, why))
                    continue
            if source is Source.CLAUDE_CODE and is_workflow_journal(raw_key):
                stats.unsupported_files += 1
                problems.append((path, WORKFLOW_JOURNAL))
                continue
            key = stored_key(raw_key, seal)  # no secret in the index, never two files in one
            known = states.get((source.value, key))
            found.seen.add((source.value, key))
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
            found.work.append(WorkItem(root, Path(path), source, key, st.st_size, st.st_mtime))
    stats.skipped_files += [(seal(path), why) for path, why in problems]
    return found


def mark_missing(
    db: sqlite_utils.Database, lock: WriterLock, seen: set[tuple[str, str]], *, full: bool
) -> int:
    """Flag files (and sessions all of whose files) no longer exist; returns files flagged.

    ``seen`` is what the scan found; ``full`` says it walked every configured source. A path
    stored masked cannot be looked up on disk, so only a full scan that did not find it calls
    it gone. The entries stay: a deleted transcript's session remains browsable and searchable.
    """
    rows = list(
        db.query("SELECT id, source, file_key, path, session_id FROM files WHERE missing = 0")
    )
    gone = [
        row
        for row in rows
        if (row["source"], row["file_key"]) not in seen
        and not os.path.exists(row["path"])
        and (full or MASK not in row["path"])
    ]
    if not gone:
        return 0
    with lock, write_transaction(db) as conn:
        conn.executemany("UPDATE files SET missing = 1 WHERE id = ?", [(r["id"],) for r in gone])
        sessions = {r["session_id"] for r in gone if r["session_id"]}
        for row in gone:  # the other sessions a shared file held
            sessions.update(
                found
                for (found,) in conn.execute(
                    "SELECT DISTINCT session_id FROM entries WHERE file_id = ?", (row["id"],)
                )
                if found
            )
        for session_id in sessions:
            refresh_session(conn, session_id)
    return len(gone)
