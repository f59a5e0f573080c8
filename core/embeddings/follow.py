"""Vectors follow their text: after a reindex, every chunk whose text was read again keeps its
vector under the id the index gave it now.

A reindex deletes and re-inserts every entry, so the store's chunk ids name rows that are gone
(or, reused, rows with other text). Without this step semantic search finds nothing and hybrid
quietly turns keyword-only until ``clawback embed`` runs again. Each vector carries the hash of
the text it was made from, so moving it is exact: a chunk gets the vector of its own text or
none. Pure SQL and the standard library (no numpy): a reindex runs without the embeddings extra.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from clawback.core.db import BUSY_TIMEOUT_MS
from clawback.core.embeddings.coverage import current_hashes

BUMP_GENERATION = (
    "INSERT INTO meta (key, value) VALUES ('generation', '1') ON CONFLICT (key)"
    " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)


def follow_text(db: Any, store_path: Path, *, tools_and_thinking: bool = False) -> int:
    """Re-key the store's vectors to the chunks that now hold their text; how many moved.

    A vector still under its own chunk stays; one whose chunk is gone or holds other text moves
    to a chunk with its text that has no valid vector. Vectors nobody takes stay for the
    embedding worker to forget (it removes what is gone once a run has used it).
    """
    if not store_path.exists():
        return 0
    current = current_hashes(db, tools_and_thinking=tools_and_thinking)
    conn = sqlite3.connect(str(store_path), timeout=BUSY_TIMEOUT_MS / 1000)
    with contextlib.closing(conn):
        conn.isolation_level = None
        try:
            stored = dict(conn.execute("SELECT chunk, hash FROM vectors").fetchall())
        except sqlite3.Error:
            return 0  # a store without its tables yet holds nothing to move
        # hash -> chunks whose vectors are free to move (the same text can be in many chunks:
        # a prompt repeated across sessions, a file copied under another name)
        spare: dict[int, list[int]] = {}
        for chunk, digest in stored.items():
            if current.get(chunk) != digest:
                spare.setdefault(digest, []).append(chunk)
        moves = []
        for chunk, digest in current.items():
            if stored.get(chunk) != digest and spare.get(digest):
                moves.append((spare[digest].pop(), chunk))
        if not moves:
            return 0
        conn.execute("CREATE TEMP TABLE moved (old INTEGER, new INTEGER, hash INTEGER, vec BLOB)")
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Copied out before anything is deleted: a chunk can be one move's target and
            # another's source.
            conn.executemany(
                "INSERT INTO moved SELECT chunk, ?, hash, vec FROM vectors WHERE chunk = ?",
                ((new, old) for old, new in moves),
            )
            conn.execute("DELETE FROM vectors WHERE chunk IN (SELECT old FROM moved)")
            conn.execute("DELETE FROM vectors WHERE chunk IN (SELECT new FROM moved)")
            conn.execute("INSERT INTO vectors (chunk, hash, vec) SELECT new, hash, vec FROM moved")
            conn.execute(BUMP_GENERATION)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return len(moves)
