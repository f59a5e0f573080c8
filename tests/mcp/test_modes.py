"""memory_search's ``mode``: hybrid by default when there is a vector side, labelled hits, a
clear error for a bad mode, and a keyword fallback that says why."""

from __future__ import annotations

import pytest
from clawback.core.embeddings.chunks import text_hash
from clawback.core.embeddings.coverage import chunk_texts
from clawback.core.errors import ClawbackError
from clawback.core.home import Home
from clawback.core.mcp.tools import MemoryTools, ToolInputError
from clawback.core.search.front import RELATED_ONLY
from clawback.core.search.hybrid import ANSWER_FLOOR


class Nearest:
    """Every text turn of the demo archive, equally near."""

    def __init__(self, home: Home, similarity: float = 0.5) -> None:
        ids = [row[0] for row in home.db.execute("SELECT id FROM entries WHERE kind = 'text'")]
        self.rows = sorted(chunk_texts(home.db, ids).items())
        self.similarity = similarity

    def nearest(self, query: str, limit: int) -> list[tuple[int, int, float]]:
        return [(chunk, text_hash(text), self.similarity) for chunk, text in self.rows[:limit]]


def test_default_is_hybrid_with_a_vector_side_and_hits_say_who_found_them(demo_home: Home) -> None:
    tools = MemoryTools(demo_home.db, Nearest(demo_home))
    hits = tools.search("sqlite", max_results=20)["results"]
    assert {h["found_by"] for h in hits} >= {"both", "semantic"}
    keyword = MemoryTools(demo_home.db).search("sqlite", max_results=20)["results"]
    assert {h["found_by"] for h in keyword} == {"keyword"}


def test_semantic_mode_answers_a_query_no_word_matches(demo_home: Home) -> None:
    tools = MemoryTools(demo_home.db, Nearest(demo_home))
    assert tools.search("zzqx", mode="keyword")["results"] == []
    hits = tools.search("zzqx", mode="semantic")["results"]
    assert hits and {h["found_by"] for h in hits} == {"semantic"}


def test_meaning_alone_and_unsure_is_labelled_related_and_said_so(demo_home: Home) -> None:
    tools = MemoryTools(demo_home.db, Nearest(demo_home, similarity=ANSWER_FLOOR - 0.05))
    answer = tools.search("zzqx")
    assert answer["results"] and {h["found_by"] for h in answer["results"]} == {"related"}
    assert answer["note"].startswith(RELATED_ONLY)


def test_a_bad_mode_is_one_sentence(demo_home: Home) -> None:
    with pytest.raises(ToolInputError, match="mode"):
        MemoryTools(demo_home.db).search("sqlite", mode="fuzzy")


def test_a_vector_side_that_cannot_answer_falls_back_and_says_why(demo_home: Home) -> None:
    class Broken:
        def nearest(self, query: str, limit: int) -> list[tuple[int, int, float]]:
            raise ClawbackError("nothing is embedded yet (run `clawback embed`)")

    answer = MemoryTools(demo_home.db, Broken()).search("sqlite")
    assert answer["results"] and {h["found_by"] for h in answer["results"]} == {"keyword"}
    assert answer["note"].startswith("nothing is embedded yet")


def test_a_question_naming_only_a_time_lists_what_was_asked_then(demo_home: Home) -> None:
    """The one search answers memory_search as it answers the CLI: a hit per session of that
    day, found by the date, in every mode (the vector side has nothing to read in it)."""
    tools = MemoryTools(demo_home.db, Nearest(demo_home))
    hits = tools.search("what did we do on November 21, 2026?", max_results=10)["results"]
    assert len(hits) == 2 and {h["found_by"] for h in hits} == {"date"}
    assert all(h["timestamp"].startswith("2026-11-21") and h["role"] == "user" for h in hits)
    keyword = tools.search("what did we do on November 21, 2026?", mode="keyword")["results"]
    assert [h["ref"] for h in keyword] == [h["ref"] for h in hits]
