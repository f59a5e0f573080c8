"""Usage for files read before the index kept it, read back without reading them again.

An index from before usage was indexed (migration ``0014_usage``) holds every file's entries
but none of its usage; its files are marked ``usage_read = 0``. Before each ingest pass,
:func:`read_back_usage` reads the usage lines of each such file up to its committed line (the
lines the index holds) and commits them with the mark cleared, one file per transaction, so a
kill only leaves files to do again. A file that changed since it was read is left to the pass,
which reads it again from its start (usage included); a Claude Code file that is gone is read
from its kept copy; one gone without a copy has no usage left to read (``docs/usage.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core.archive import KeptCopies, KeptCopyError
from clawback.core.db import write_transaction
from clawback.core.formats.lines import LineReader
from clawback.core.ingest.file_reader import FileReader, Start, window_hash
from clawback.core.ingest.sources import SourceRoot, WorkItem
from clawback.core.records import Source
from clawback.core.usage import index as usage_index
from clawback.core.usage.index import UsageValues

_PENDING = """SELECT id, source, file_key, path, session_id, last_line, "offset", prefix_hash,
                     missing, kept_bytes
              FROM files WHERE usage_read = 0"""


def read_back_usage(
    db: sqlite_utils.Database,
    copies: KeptCopies,
    *,
    max_line: int,
    seal: Callable[[str], str],
) -> int:
    """Read back the usage of every file marked unread; returns how many files it read.

    The caller holds the writer lock.
    """
    done = 0
    for row in db.execute(_PENDING).fetchall():
        file_id, source, key, path, session_id, last_line, offset, prefix, missing, kept = row
        lines = _lines(Path(path), offset, prefix, last_line, max_line, missing=bool(missing))
        if lines is None and source == Source.CLAUDE_CODE.value and kept:
            lines = _kept_lines(copies, key, kept, last_line)
        with write_transaction(db) as conn:
            if lines is not None:
                root = SourceRoot(Source(source), Path(path).parent, "usage")
                item = WorkItem(root, Path(path), Source(source), key, 0, 0)
                start = Start(0, 0, session_id)
                reader = FileReader(item, start, max_line=max_line, mask=None, seal=seal)
                own, rows = reader.read_usage(lines)
                _write(conn, file_id, own or session_id, rows)
                done += 1
            conn.execute("UPDATE files SET usage_read = 1 WHERE id = ?", (file_id,))
    return done


def _write(conn: Any, file_id: int, session_id: str | None, rows: list[UsageValues]) -> None:
    values = [
        (file_id, line, seq, other or session_id, *columns)
        for line, seq, other, *columns in rows
        if other or session_id
    ]
    for changed in usage_index.write(conn, file_id, values, after=0) | {file_id}:
        usage_index.refresh_buckets(conn, changed)


def _lines(
    path: Path, offset: int, prefix: str | None, last_line: int, max_line: int, *, missing: bool
) -> Iterator[tuple[int, bytes]] | None:
    """The file's lines up to ``last_line`` as numbered when it was read, or ``None`` when it
    is gone or no longer holds the bytes that were read (the ingest pass reads it again)."""
    try:
        if missing or not path.is_file() or window_hash(path, offset) != prefix:
            return None
    except OSError:
        return None
    return _numbered(LineReader(path, 0, max_line, finished=True), last_line)


def _numbered(reader: LineReader, last_line: int) -> Iterator[tuple[int, bytes]]:
    """Lines numbered as the reader that indexed them numbered them (a run of blank lines
    counts each, a line over ``max_line_mb`` counts without being held)."""
    number = 0
    for raw, _end, count in reader:
        number += 1 if raw is None else count if count > 1 else 1
        if number > last_line:
            return
        if raw is not None and count <= 1:
            yield number, raw


def _kept_lines(
    copies: KeptCopies, key: str, kept: int, last_line: int
) -> Iterator[tuple[int, bytes]] | None:
    try:
        frames = list(copies.read(Source.CLAUDE_CODE.value, key, kept))
    except KeptCopyError:
        return None
    lines = (line for frame in frames for line in frame.lines)
    return ((number, raw) for number, raw in enumerate(lines, 1) if raw and number <= last_line)
