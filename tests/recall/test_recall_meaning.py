"""The recall block with a vector side: fragments and facts close in meaning join the keyword
hits, noise below the similarity floor stays out, and a failing vector side changes nothing."""

from __future__ import annotations

import pytest
import sqlite_utils
from clawback.core.db import write_transaction
from clawback.core.embeddings.chunks import fact_text
from clawback.core.errors import ClawbackError
from clawback.core.recall import recall
from clawback.core.search.hybrid import ANSWER_FLOOR

from tests.search_doubles import FixedNearest, small_index

FACT = "no cache layer in front of the API"


@pytest.fixture
def db() -> sqlite_utils.Database:
    database = small_index(
        [
            {"role": "user", "text": "we removed the caching tier last spring"},
            {"role": "assistant", "text": "the weather in Lisbon is sunny"},
            {"role": "user", "text": "postgres backups run nightly"},
        ]
    )
    with write_transaction(database) as conn:
        conn.execute(
            "INSERT INTO facts (id, type, content, created_at, updated_at)"
            " VALUES (9, 'decision', ?, 'x', 'x')",
            (FACT,),
        )
    return database


def near(db: sqlite_utils.Database, similarity: dict[int, float]) -> FixedNearest:
    """The vector side, with the fact as chunk -9."""
    return FixedNearest(db, similarity, {-9: fact_text("decision", FACT, None)})


ASKED = ["why did we get rid of memoization in front of the service?"]


def test_meaning_finds_fragments_and_facts_no_word_matches(db: sqlite_utils.Database) -> None:
    assert not recall(db, ASKED, cap=2000)
    block = recall(db, ASKED, cap=2000, nearest=near(db, {1: 0.62, -9: 0.55, 2: 0.1}))
    assert [hit.entry_id for hit in block.details] == [1]  # Lisbon is below the floor
    assert [fact.text for fact in block.knowledge] == ["no cache layer in front of the API"]
    assert "caching tier" in block.text and "sunny" not in block.text


def test_meaning_alone_and_unsure_recalls_nothing(db: sqlite_utils.Database) -> None:
    # No word of the question is in the archive, and the nearest turn and fact are above the
    # floor of any neighbour but below what an answer by meaning alone needs: search shows them
    # as related; a prompt gets none of it.
    unsure = near(db, {1: ANSWER_FLOOR - 0.05, -9: ANSWER_FLOOR - 0.05})
    assert not recall(db, ASKED, cap=2000, nearest=unsure)
    sure = near(db, {1: ANSWER_FLOOR + 0.05, -9: ANSWER_FLOOR + 0.05})
    block = recall(db, ASKED, cap=2000, nearest=sure)
    assert [hit.entry_id for hit in block.details] == [1] and len(block.knowledge) == 1


def test_keyword_hits_stay_when_vectors_disagree(db: sqlite_utils.Database) -> None:
    block = recall(db, ["postgres backups"], cap=2000, nearest=near(db, {1: 0.9, 2: 0.8}))
    assert 3 in [hit.entry_id for hit in block.details]


def test_a_failing_vector_side_changes_nothing(db: sqlite_utils.Database) -> None:
    class Broken:
        def nearest(self, query: str, limit: int) -> list[tuple[int, int, float]]:
            raise ClawbackError("model gone")

    plain = recall(db, ["postgres backups"], cap=2000)
    assert recall(db, ["postgres backups"], cap=2000, nearest=Broken()).text == plain.text


def test_the_floor_for_words_lets_through_what_meaning_found_too() -> None:
    """The reply holds none of the question's words: the words find it through the proposal,
    at half its share, under the hooks' floor; meaning finds it as well, and what meaning finds
    passes, whether the words found it too or not."""
    db = small_index(
        [
            {"role": "assistant", "text": "for the sound recorder's dev server: vite or webpack"},
            {"role": "user", "text": "ok, fine, let's do vite"},
        ]
    )
    asked = ["which dev server did we pick for the sound recorder?"]
    by_words = recall(db, asked, cap=2000, min_coverage=0.45)
    assert [hit.entry_id for hit in by_words.details] == [1]  # the reply holds too little
    both = recall(db, asked, cap=2000, min_coverage=0.45, nearest=near(db, {2: 0.6, 1: 0.55}))
    assert sorted(hit.entry_id for hit in both.details) == [1, 2]
