"""The recall block with a vector side: fragments and facts close in meaning join the keyword
hits, noise below the similarity floor stays out, and a failing vector side changes nothing."""

from __future__ import annotations

import pytest
import sqlite_utils
from clawback.core.chat.recall import recall
from clawback.core.db import connect, write_transaction
from clawback.core.embeddings.chunks import fact_text, text_hash
from clawback.core.embeddings.coverage import chunk_texts
from clawback.core.errors import ClawbackError


@pytest.fixture
def db() -> sqlite_utils.Database:
    database = connect(None)
    with write_transaction(database) as conn:
        conn.execute(
            "INSERT INTO files (id, source, file_key, path) VALUES (1, 'claude-code', 's', '/s')"
        )
        for line, (role, text) in enumerate(
            [
                ("user", "we removed the caching tier last spring"),
                ("assistant", "the weather in Lisbon is sunny"),
                ("user", "postgres backups run nightly"),
            ],
            1,
        ):
            conn.execute(
                "INSERT INTO entries (file_id, line, role, kind, ts, conversational, text)"
                " VALUES (1, ?, ?, 'text', '2026-01-01T00:00:00.000Z', 1, ?)",
                (line, role, text),
            )
        conn.execute("INSERT INTO entries_fts (rowid, text, cjk) SELECT id, text, cjk FROM entries")
        conn.execute(
            "INSERT INTO facts (id, type, content, created_at, updated_at)"
            " VALUES (9, 'decision', 'no cache layer in front of the API', 'x', 'x')"
        )
    return database


class Nearest:
    def __init__(self, db: sqlite_utils.Database, similarity: dict[int, float]) -> None:
        self.similarity = similarity
        ids = [row[0] for row in db.execute("SELECT id FROM entries")]
        self.hashes = {i: text_hash(text) for i, text in chunk_texts(db, ids).items()}
        self.hashes[-9] = text_hash(
            fact_text("decision", "no cache layer in front of the API", None)
        )

    def nearest(self, query: str, limit: int) -> list[tuple[int, int, float]]:
        ranked = sorted(self.similarity.items(), key=lambda kv: -kv[1])[:limit]
        return [(chunk, self.hashes[chunk], score) for chunk, score in ranked]


ASKED = ["why did we get rid of memoization in front of the service?"]


def test_meaning_finds_fragments_and_facts_no_word_matches(db: sqlite_utils.Database) -> None:
    assert not recall(db, ASKED, cap=2000)
    block = recall(db, ASKED, cap=2000, nearest=Nearest(db, {1: 0.62, -9: 0.55, 2: 0.1}))
    assert [hit.entry_id for hit in block.details] == [1]  # Lisbon is below the floor
    assert [fact.text for fact in block.knowledge] == ["no cache layer in front of the API"]
    assert "caching tier" in block.text and "sunny" not in block.text


def test_keyword_hits_stay_when_vectors_disagree(db: sqlite_utils.Database) -> None:
    block = recall(db, ["postgres backups"], cap=2000, nearest=Nearest(db, {1: 0.9, 2: 0.8}))
    assert 3 in [hit.entry_id for hit in block.details]


def test_a_failing_vector_side_changes_nothing(db: sqlite_utils.Database) -> None:
    class Broken:
        def nearest(self, query: str, limit: int) -> list[tuple[int, int, float]]:
            raise ClawbackError("model gone")

    plain = recall(db, ["postgres backups"], cap=2000)
    assert recall(db, ["postgres backups"], cap=2000, nearest=Broken()).text == plain.text
