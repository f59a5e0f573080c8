"""A small in-memory index and a vector side with fixed similarities, for search and recall tests
that need exact control over what each side finds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlite_utils
from clawback.core.db import connect, write_transaction
from clawback.core.embeddings.chunks import text_hash
from clawback.core.embeddings.coverage import chunk_texts

ENTRY_DEFAULTS: dict[str, Any] = {
    "kind": "text",
    "ts": "2026-01-01T00:00:00.000Z",
    "conversational": 1,
    "session_id": None,
    "sidechain": 0,
}


def small_index(rows: Sequence[Mapping[str, Any]]) -> sqlite_utils.Database:
    """An in-memory index of one Claude Code file whose lines are ``rows`` (each a ``role`` and a
    ``text``, and any of :data:`ENTRY_DEFAULTS`), entry ids and lines counting from 1."""
    database = connect(None)
    with write_transaction(database) as conn:
        conn.execute(
            "INSERT INTO files (id, source, file_key, path) VALUES (1, 'claude-code', 's', '/s')"
        )
        for line, row in enumerate(rows, 1):
            entry = {**ENTRY_DEFAULTS, **row, "line": line}
            conn.execute(
                "INSERT INTO entries (file_id, session_id, line, role, kind, ts, conversational,"
                " sidechain, text) VALUES (1, :session_id, :line, :role, :kind, :ts,"
                " :conversational, :sidechain, :text)",
                entry,
            )
        conn.execute("INSERT INTO entries_fts (rowid, text, cjk) SELECT id, text, cjk FROM entries")
    return database


class FixedNearest:
    """A vector side answering every query with fixed similarities per chunk id, each with the
    hash of the chunk's text as the index holds it now (``embedded``: texts of chunks that are
    not entries, a fact's say), and remembering what it was asked."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        similarity: dict[int, float],
        embedded: Mapping[int, str] | None = None,
    ) -> None:
        ids = [row[0] for row in db.execute("SELECT id FROM entries")]
        self.hashes = {i: text_hash(text) for i, text in chunk_texts(db, ids).items()}
        self.hashes.update({i: text_hash(text) for i, text in (embedded or {}).items()})
        self.similarity = similarity
        self.asked: list[str] = []

    def nearest(self, query: str, limit: int) -> list[tuple[int, int, float]]:
        self.asked.append(query)
        ranked = sorted(self.similarity.items(), key=lambda kv: -kv[1])[:limit]
        return [(chunk, self.hashes.get(chunk, 0), score) for chunk, score in ranked]
