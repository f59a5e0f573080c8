"""A memory markdown file (``MEMORY.md``, ``memory/*.md``) into entries, one per section.

Memory files are small and rewritten in place by people and by the librarian, so unlike a
transcript they are never read incrementally: a changed file (by content hash) replaces all its
entries in one transaction; an unchanged one only has its size and mtime refreshed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import sqlite_utils
from clawback.core.db import write_transaction
from clawback.core.ingest.batch import FileState
from clawback.core.ingest.repair import forget_file
from clawback.core.ingest.sources import WorkItem
from clawback.core.ingest.stats import IngestStats
from clawback.core.text import cjk_bigrams, markdown_blocks


def ingest_memory_file(
    db: sqlite_utils.Database,
    item: WorkItem,
    state: FileState,
    stats: IngestStats,
    *,
    mask: Callable[[str], str] | None,
    stored_path: str,
) -> None:
    """Replace ``item``'s entries with its sections now, unless its bytes did not change."""
    data = item.path.read_bytes()
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if digest == state.prefix_hash:
        with write_transaction(db) as conn:
            conn.execute(
                "UPDATE files SET size = ?, mtime = ?, missing = 0 WHERE id = ?",
                (item.size, item.mtime, state.id),
            )
        stats.unchanged += 1
        return
    text = data.decode("utf-8", "replace")
    rows = []
    for block in markdown_blocks(text):
        body = mask(block.text) if mask else block.text
        rows.append(
            (state.id, block.start_line, block.end_line, body, block.heading, cjk_bigrams(body))
        )
    with write_transaction(db) as conn:
        forget_file(conn, state)
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
            (item.size, item.mtime, len(data), text.count("\n"), digest, stored_path, state.id),
        )
    stats.files += 1
    stats.entries += len(rows)
