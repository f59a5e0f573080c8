"""Taking a file's derived rows back to its last commit, or to nothing.

Entries and the offset that produced them commit together, so a file's committed offset and
last line say exactly what of it the index holds. A process killed mid-file leaves
``status = 'ingesting'`` (:func:`recover_interrupted` finishes that on the next start); a file
that failed is rolled back by :func:`roll_back` at once; a file read again from its start is
emptied by :func:`forget_file`; a file gone from disk is flagged by :func:`mark_missing`, its
entries kept. Nothing here reads a source file.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils
from clawback.core.archive import refresh_session
from clawback.core.db import write_transaction
from clawback.core.ingest.batch import FileState
from clawback.core.ingest.scan import GoneFile
from clawback.core.locking import WriterLock
from clawback.core.usage import index as usage_index


def delete_entries(
    conn: Any, file_id: int, after_line: int = 0, recount: set[str] | None = None
) -> None:
    """Delete a file's entries and usage past ``after_line``, and their terms from the
    full-text index, and recount every session that had some: not only the file's own, but
    those its summaries were moved to and those of a file mixing sessions, which no later read
    may recount.
    With ``recount``, those sessions are added to it for the caller to recount before its
    transaction commits (a group of files recounts a session once, not once per file)."""
    sessions = [
        row[0]
        for row in conn.execute(
            """SELECT DISTINCT session_id FROM entries
               WHERE file_id = ? AND line > ? AND session_id IS NOT NULL""",
            (file_id, after_line),
        )
    ]
    # External-content FTS needs the old values to remove a row's terms.
    conn.execute(
        """INSERT INTO entries_fts (entries_fts, rowid, text, cjk)
           SELECT 'delete', id, text, cjk FROM entries WHERE file_id = ? AND line > ?""",
        (file_id, after_line),
    )
    conn.execute("DELETE FROM entries WHERE file_id = ? AND line > ?", (file_id, after_line))
    for changed in usage_index.forget(conn, file_id, after_line):
        usage_index.refresh_buckets(conn, changed)
    if recount is not None:
        recount.update(sessions)
        return
    for session_id in sessions:
        refresh_session(conn, session_id)


def roll_back(conn: Any, file_id: int, last_line: int, session_id: str | None) -> None:
    """Drop what a file has past its committed ``last_line`` and mark it idle with size 0,
    so the next scan looks at it again and resumes at the committed offset. Its session is
    recounted: a file's session is counted at its last chunk, which a kill may have cut off."""
    delete_entries(conn, file_id, after_line=last_line)
    conn.execute(
        "DELETE FROM conversations WHERE file_id = ? AND first_line > ?", (file_id, last_line)
    )
    conn.execute("DELETE FROM leaf_titles WHERE file_id = ? AND line > ?", (file_id, last_line))
    conn.execute("UPDATE files SET status = 'idle', size = 0 WHERE id = ?", (file_id,))
    if session_id:
        refresh_session(conn, session_id)


def recover_interrupted(db: sqlite_utils.Database) -> int:
    """Roll back every file a killed ingestion left ``ingesting``; returns how many.

    The caller holds the writer lock.
    """
    rows = list(db.query("SELECT * FROM files WHERE status = 'ingesting'"))
    for row in rows:
        state = FileState.from_row(row)
        with write_transaction(db) as conn:
            roll_back(conn, state.id, state.last_line, state.session_id)
    return len(rows)


def abandon(db: sqlite_utils.Database, source: str, key: str) -> None:
    """After a file failed: keep what was committed, and never leave it ``ingesting``.

    Its size is forgotten, so the next scan tries it again (and names it again if it fails).
    """
    with write_transaction(db) as conn:
        for file_id, last_line, session_id in conn.execute(
            "SELECT id, last_line, session_id FROM files WHERE source = ? AND file_key = ?",
            (source, key),
        ).fetchall():
            roll_back(conn, file_id, last_line, session_id)


def forget_file(conn: Any, state: FileState, recount: set[str] | None = None) -> None:
    """Forget everything indexed from a file so it is read again from the start (its sessions
    recounted now, or added to ``recount``: see :func:`delete_entries`)."""
    delete_entries(conn, state.id, recount=recount)
    conn.execute("DELETE FROM conversations WHERE file_id = ?", (state.id,))
    conn.execute("DELETE FROM skipped_lines WHERE file_id = ?", (state.id,))
    conn.execute("DELETE FROM leaf_titles WHERE file_id = ?", (state.id,))
    conn.execute(
        """UPDATE files SET "offset" = 0, last_line = 0, size = 0, prefix_hash = NULL,
           skipped_lines = 0, last_ts = NULL, kept_bytes = 0 WHERE id = ?""",
        (state.id,),
    )
    state.offset = state.last_line = state.size = state.kept_bytes = 0
    state.prefix_hash = None


def mark_missing(db: sqlite_utils.Database, lock: WriterLock, gone: list[GoneFile]) -> int:
    """Flag ``gone`` files (see :func:`.scan.gone_files`) and recount their sessions; returns
    how many. The entries stay: a deleted transcript's session remains searchable."""
    if not gone:
        return 0
    with lock, write_transaction(db) as conn:
        conn.executemany("UPDATE files SET missing = 1 WHERE id = ?", [(g.id,) for g in gone])
        sessions = {g.session_id for g in gone if g.session_id}
        for file in gone:  # the other sessions a shared file held
            sessions.update(
                found
                for (found,) in conn.execute(
                    "SELECT DISTINCT session_id FROM entries WHERE file_id = ?", (file.id,)
                )
                if found
            )
        for session_id in sessions:
            refresh_session(conn, session_id)
    return len(gone)
