"""Which files need reading, and which the index knows that are gone: stats only, no reads.

An unchanged re-scan of 10,000 files must stay a directory walk plus one ``stat`` each, so
:func:`scan` reads every ``files`` row once up front and compares sizes (and, for memory files,
mtimes) in memory. A file is ``(source, key)``; what it was found as is kept in
:attr:`Scan.seen` so :func:`gone_files` can tell what a full scan no longer found. Nothing here
writes, so an unchanged re-scan (:mod:`.unchanged`) reads through a plain connection.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from clawback.core.db import Queryable
from clawback.core.formats.detect import WORKFLOW_JOURNAL, is_workflow_journal
from clawback.core.ingest.sources import QUIET_SECONDS, SourceRoot, WorkItem, stored_key
from clawback.core.ingest.stats import IngestStats
from clawback.core.records import Source
from clawback.core.text import MASK

DetectFile = Callable[[Path], tuple[Source | None, str]]  # a file's format, or None and why not


@dataclass(frozen=True)
class GoneFile:
    id: int
    session_id: str | None


@dataclass
class Scan:
    work: list[WorkItem] = field(default_factory=list)  # files to read, in walk order
    seen: set[tuple[str, str]] = field(default_factory=set)  # (source, key) of every file found


def scan(
    db: Queryable,
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
            # A key the index holds as itself was stored unmasked: masking it again (the scan's
            # main cost) would give it back. Keys stored masked hold MASK; no raw key does.
            known_raw = raw_key in known_keys and MASK not in raw_key
            # No secret in the index, never two files in one:
            key = raw_key if known_raw else stored_key(raw_key, seal)
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


def gone_files(db: Queryable, seen: set[tuple[str, str]], *, full: bool) -> list[GoneFile]:
    """Files the index holds as present that the scan did not find and that no longer exist.

    ``seen`` is what the scan found; ``full`` says it walked every configured source. A path
    stored masked cannot be looked up on disk, so only a full scan that did not find it calls
    it gone.
    """
    rows = db.execute("SELECT id, source, file_key, path, session_id FROM files WHERE missing = 0")
    return [
        GoneFile(file_id, session_id)
        for file_id, source, key, path, session_id in rows.fetchall()
        if (source, key) not in seen and not os.path.exists(path) and (full or MASK not in path)
    ]
