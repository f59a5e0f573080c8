"""Search modes: hybrid fuses both sides, says who found what, keeps exact matches, honours
filters, drops stale vectors and falls back to keywords with one note."""

from __future__ import annotations

import pytest
import sqlite_utils
from clawback.core.db import write_transaction
from clawback.core.errors import ClawbackError, UsageError
from clawback.core.search.engine import SearchFilters, search
from clawback.core.search.front import RELATED_ONLY, find
from clawback.core.search.fusion import RANK_BONUS, Fused
from clawback.core.search.hybrid import (
    ANSWER_FLOOR,
    HYBRID_CEILING,
    NARRATION_FACTOR,
    NARRATION_LENGTH,
    PERSON_WEIGHT,
    SESSION_WEIGHT,
    discount_narration,
    favour_person,
    favour_sessions,
)

from tests.search_doubles import FixedNearest, small_index

TEXTS = [
    ("user", "2026-01-01T10:00:00.000Z", "we should drop the cache layer entirely"),
    ("assistant", "2026-01-02T10:00:00.000Z", "removed the caching tier as you asked"),
    ("user", "2026-01-03T10:00:00.000Z", "what about the weather in Lisbon"),
    ("assistant", "2026-01-04T10:00:00.000Z", "the cache layer is gone, tests pass"),
]


@pytest.fixture
def db() -> sqlite_utils.Database:
    return small_index([{"role": role, "ts": ts, "text": text} for role, ts, text in TEXTS])


def test_semantic_finds_what_keywords_cannot(db: sqlite_utils.Database) -> None:
    nearest = FixedNearest(db, {2: 0.9, 1: 0.7, 3: 0.1})
    assert search(db, "throw away the memo store", mode="keyword").hits == []
    results = search(db, "throw away the memo store", mode="hybrid", nearest=nearest)
    assert results.mode == "hybrid"
    # Entry 3 is below the floor of similarity: not a result.
    assert [h.entry_id for h in results.hits] == [2, 1]
    assert {h.found_by for h in results.hits} == {"semantic"}
    # The words found nothing, so each hit shows its similarity: how sure meaning is, not its
    # place in a list normalised to 0..1 (where the best of weak neighbours would show as sure
    # as a perfect match). Semantic mode shows the same.
    assert [h.score for h in results.hits] == pytest.approx([0.9, 0.7])
    semantic = search(db, "throw away the memo store", mode="semantic", nearest=nearest).hits
    assert [(h.entry_id, h.score) for h in semantic] == pytest.approx([(2, 0.9), (1, 0.7)])
    weak = FixedNearest(db, {2: 0.48, 1: 0.46})
    assert [h.score for h in search(db, "memo store", mode="hybrid", nearest=weak).hits] == (
        pytest.approx([0.48, 0.46])
    )
    counted = search(db, "throw away the memo store", mode="hybrid", nearest=nearest, count=True)
    assert counted.total == 2  # no keyword match, but never fewer than shown


def test_hybrid_scores_by_hand_and_labels_each_hit(db: sqlite_utils.Database) -> None:
    nearest = FixedNearest(db, {2: 0.9, 4: 0.6, 1: 0.3})
    results = search(db, "cache layer", mode="hybrid", nearest=nearest)
    by_id = {h.entry_id: h for h in results.hits}
    # keyword: 4 then 1, both holding every word (coverage 1); vector: 2 (1.0), 4 (0.5), 1 (0.0);
    # each side's hit at 0-based rank r adds RANK_BONUS / (1 + r).
    # Shown within 0..1: divided by the most a hybrid hit can reach.
    bonus, ceiling = RANK_BONUS, HYBRID_CEILING
    assert by_id[2].found_by == "semantic"
    assert by_id[2].score == pytest.approx((0.5 * 1.0 + bonus) / ceiling)
    assert by_id[4].found_by == "both" and by_id[1].found_by == "both"
    assert by_id[4].score == pytest.approx((0.5 + 0.5 * 0.5 + bonus + bonus / 2) / ceiling)
    assert by_id[1].score == pytest.approx((0.5 + 0.5 * 0.0 + bonus / 2 + bonus / 3) / ceiling)
    # The vector side's first hit outranks a hit both sides put last.
    assert [h.entry_id for h in results.hits] == [4, 2, 1]
    assert "\x02" in by_id[4].snippet  # keyword hits keep their highlighted snippet
    assert by_id[2].to_json()["found_by"] == "semantic"


def test_a_keyword_hit_holding_a_little_of_a_question_is_not_an_answer(
    db: sqlite_utils.Database,
) -> None:
    # "weather" alone of five rare words: below the floor of coverage, so no result.
    assert search(db, "how many penguins know the weather on the moon base?").hits == []
    # Most of the question's words: an answer, though not every word is there.
    hits = search(db, "why did we drop the cache layer in march?").hits
    assert [h.entry_id for h in hits][:1] == [1]


def test_meaning_alone_below_the_answer_floor_is_only_related(db: sqlite_utils.Database) -> None:
    # No word of the question matches; the nearest turn clears the floor of any neighbour but
    # not what an answer by meaning alone needs: shown, labelled related, and said so.
    query = "which kubernetes ingress controller did we pick?"
    unsure = FixedNearest(db, {2: ANSWER_FLOOR - 0.05, 4: ANSWER_FLOOR - 0.1})
    for mode in ("semantic", "hybrid"):
        found = find(db, query, mode=mode, nearest=unsure).results
        assert [(h.entry_id, h.found_by) for h in found.hits] == [(2, "related"), (4, "related")]
        assert found.note == RELATED_ONLY
        # Scored by their similarity: the best of a related list is not shown as a sure hit.
        assert [h.score for h in found.hits] == pytest.approx(
            [ANSWER_FLOOR - 0.05, ANSWER_FLOOR - 0.1]
        )
    sure = FixedNearest(db, {2: ANSWER_FLOOR + 0.05, 4: ANSWER_FLOOR - 0.1})
    found = find(db, query, mode="hybrid", nearest=sure).results
    assert {h.found_by for h in found.hits} == {"semantic"} and found.note is None
    # Words found something: what meaning adds beside them is not judged alone.
    beside = FixedNearest(db, {2: ANSWER_FLOOR - 0.05})
    found = find(db, "why did we drop the cache layer?", mode="hybrid", nearest=beside).results
    assert found.hits and "related" not in {h.found_by for h in found.hits}


def test_nonsense_finds_nothing_in_any_mode(db: sqlite_utils.Database) -> None:
    # The vector side always has nearest neighbours; below the query floor they are not results.
    nearest = FixedNearest(db, {1: 0.3, 2: 0.29, 3: 0.2, 4: 0.1})
    for mode in ("keyword", "semantic", "hybrid"):
        assert search(db, "xyzzyplugh", mode=mode, nearest=nearest).hits == []


def test_exact_matches_stay_on_the_page(db: sqlite_utils.Database) -> None:
    # The vectors love everything but the one exact match.
    nearest = FixedNearest(db, {1: 0.99, 2: 0.98, 4: 0.97, 3: -0.5})
    results = search(db, "Lisbon", mode="hybrid", nearest=nearest, limit=2)
    assert 3 in [h.entry_id for h in results.hits]


@pytest.mark.parametrize("query", ["cach*", "cache -Lisbon"])
def test_prefixes_and_exclusions_stay_exact(db: sqlite_utils.Database, query: str) -> None:
    nearest = FixedNearest(db, {3: 0.99})
    results = search(db, query, mode="hybrid", nearest=nearest)
    assert results.mode == "keyword" and nearest.asked == []
    assert 3 not in [h.entry_id for h in results.hits]


def test_a_quoted_phrase_is_exact_without_switching_meaning_off(
    db: sqlite_utils.Database,
) -> None:
    nearest = FixedNearest(db, {3: 0.99, 2: 0.5})
    results = search(db, 'what did we say about "cache layer"?', mode="hybrid", nearest=nearest)
    assert results.mode == "hybrid"
    assert nearest.asked == ["what did we say about cache layer?"]  # no quotes for the model
    found = {h.entry_id: h.found_by for h in results.hits}
    assert found[1] == found[4] == "keyword"  # the phrase, exactly
    assert found[3] == "semantic"  # and what is close in meaning
    # A title the archive does not hold exactly still finds what is near in meaning.
    missing = search(db, 'the book "Becoming Nicole"', mode="hybrid", nearest=nearest)
    assert [h.entry_id for h in missing.hits] == [3, 2]


def test_filters_apply_to_the_vector_side(db: sqlite_utils.Database) -> None:
    nearest = FixedNearest(db, {1: 0.9, 2: 0.8, 3: 0.7, 4: 0.6})
    hits = search(
        db, "anything", SearchFilters(role="assistant"), mode="semantic", nearest=nearest
    ).hits
    assert [h.entry_id for h in hits] == [2, 4]
    hits = search(
        db, "anything", SearchFilters(since="2026-01-03"), mode="semantic", nearest=nearest
    ).hits
    assert [h.entry_id for h in hits] == [3, 4]


def test_a_vector_for_changed_text_is_not_trusted(db: sqlite_utils.Database) -> None:
    nearest = FixedNearest(db, {1: 0.9, 2: 0.8, 3: 0.7})
    with write_transaction(db) as conn:
        conn.execute("UPDATE entries SET text = 'something else now' WHERE id = 1")
    hits = search(db, "anything", mode="semantic", nearest=nearest).hits
    # Entry 2 answers entry 1 and was embedded with it: its vector is stale too.
    assert [h.entry_id for h in hits] == [3]


def test_a_message_copied_into_another_file_shows_once(db: sqlite_utils.Database) -> None:
    """A resumed session carries its history into a new file: the same turn twice in the first
    page would push another answer off it."""
    with write_transaction(db) as conn:
        conn.execute(
            "INSERT INTO files (id, source, file_key, path) VALUES (2, 'claude-code', 'r', '/r')"
        )
        conn.execute(
            "INSERT INTO entries (id, file_id, line, role, kind, ts, conversational, text)"
            " SELECT 5, 2, 1, role, kind, ts, conversational, text FROM entries WHERE id = 1"
        )
        conn.execute(
            "INSERT INTO entries_fts (rowid, text, cjk) SELECT id, text, cjk FROM entries"
            " WHERE id = 5"
        )
    nearest = FixedNearest(db, {1: 0.9, 5: 0.9, 3: 0.5})
    for mode in ("semantic", "hybrid"):
        hits = [
            h.entry_id for h in search(db, "drop the cache layer", mode=mode, nearest=nearest).hits
        ]
        assert len([h for h in hits if h in (1, 5)]) == 1, (mode, hits)


def test_recency_boost_favours_new_without_dropping_old(db: sqlite_utils.Database) -> None:
    nearest = FixedNearest(db, {1: 0.9, 4: 0.9})
    plain = search(db, "x", mode="semantic", nearest=nearest).hits
    boosted = search(db, "x", mode="semantic", nearest=nearest, recency=True).hits
    assert [h.entry_id for h in plain] == [1, 4]  # a tie keeps the vector side's order
    assert [h.entry_id for h in boosted] == [4, 1]
    # Found by meaning alone, each still shows its similarity: recency orders, it is no match.
    assert [h.score for h in boosted] == pytest.approx([0.9, 0.9])


def test_no_vector_side_means_keywords(db: sqlite_utils.Database) -> None:
    results = search(db, "cache layer", mode="hybrid", nearest=None)
    assert results.mode == "keyword" and results.hits


def test_a_failing_vector_side_falls_back_with_one_note(db: sqlite_utils.Database) -> None:
    class Broken:
        def nearest(self, query: str, limit: int) -> list[tuple[int, int, float]]:
            raise ClawbackError("the model did not load")

    results = search(db, "cache layer", mode="hybrid", nearest=Broken())
    assert results.mode == "keyword" and results.hits
    assert results.note == "the model did not load; showing keyword results"


def test_unknown_mode_is_a_usage_error(db: sqlite_utils.Database) -> None:
    with pytest.raises(UsageError, match="mode"):
        search(db, "x", mode="fuzzy")


def test_the_session_most_hits_come_from_brings_its_turns_up() -> None:
    # The question names the recorder, which its session talks about; the answer ("let's do
    # vite") does not. A lone hit from another session scores a little more on its own.
    db = small_index(
        [
            {"role": "user", "text": "the sound recorder needs a dev server", "session_id": "a"},
            {"role": "assistant", "text": "for the sound recorder: vite or webpack", "session_id": "a"},
            {"role": "user", "text": "ok, fine, let's do vite", "session_id": "a"},
            {"role": "user", "text": "we picked a new bundler for the docs site", "session_id": "b"},
        ]
    )  # fmt: skip
    fused = [Fused(1, 0.9), Fused(2, 0.8), Fused(4, 0.5), Fused(3, 0.45)]
    boosted = favour_sessions(db, fused)
    assert [item.id for item in boosted] == [1, 2, 3, 4]
    # Session a holds 2.15 of the first hits' scores (all of the heaviest), b 0.5 of it.
    assert {item.id: item.score for item in boosted} == pytest.approx(
        {1: 0.9 + SESSION_WEIGHT, 2: 0.8 + SESSION_WEIGHT, 3: 0.45 + SESSION_WEIGHT,
         4: 0.5 + SESSION_WEIGHT * 0.5 / 2.15}
    )  # fmt: skip
    assert favour_sessions(db, []) == []


def test_a_question_about_a_decision_is_answered_by_the_persons_turn() -> None:
    # The assistant proposes, in the question's words; the person settles it in a few words.
    db = small_index(
        [
            {"role": "assistant", "text": "for the sound recorder's dev server: vite or webpack?"},
            {"role": "user", "text": "ok, fine, let's do vite"},
            {"role": "tool", "text": "dev server for the sound recorder started on :5173"},
        ]
    )
    fused = [Fused(1, 0.9), Fused(3, 0.8), Fused(2, 0.7)]
    lifted = favour_person(db, fused)
    assert [(item.id, item.score) for item in lifted] == pytest.approx(
        [(2, 0.7 + PERSON_WEIGHT), (1, 0.9), (3, 0.8)]
    )  # only the person's text turn: not the assistant's, not a tool's output
    assert favour_person(db, []) == []
    # Through search: a question about a decision puts the reply above the assistant's
    # middling turn about the same thing; asked otherwise, the order is the plain fusion's.
    db = small_index(
        [
            {"role": "assistant", "text": "the sound recorder could use vite or webpack"},
            {"role": "user", "text": "ok, fine, let's do vite"},
            {"role": "assistant", "text": "webpack needs more config for the recorder"},
            {"role": "user", "text": "what about the weather in Lisbon"},
        ]
    )
    nearest = FixedNearest(db, {1: 0.62, 3: 0.6, 2: 0.58, 4: 0.4})

    def order(query: str) -> list[int]:
        return [h.entry_id for h in search(db, query, mode="hybrid", nearest=nearest).hits]

    assert order("which bundler did we pick for the sound recorder?")[:3] == [2, 1, 3]
    assert order("which bundler suits the sound recorder?")[:3] == [1, 3, 2]


def test_the_assistant_narrating_its_next_step_does_not_answer_a_question() -> None:
    db = small_index(
        [
            {"role": "user", "text": "please add a github action that runs the tests and the linter"},
            {"role": "assistant", "text": "All tests pass. Let me run the linter:"},
            {"role": "assistant", "kind": "thinking", "text": "the lint task is in mise"},
            {"role": "assistant", "kind": "tool_use", "text": "Bash\ncommand: mise run lint"},
            {"role": "assistant", "text": "The linter and the tests now run on every push."},
            {"role": "assistant", "text": "Let me run the linter again, " + "x" * NARRATION_LENGTH},
            {"role": "assistant", "kind": "tool_use", "text": "Bash\ncommand: mise run lint"},
            {"role": "assistant", "text": "Running the linter:"},
        ]
    )  # fmt: skip
    fused = [Fused(2, 0.9), Fused(6, 0.85), Fused(1, 0.8), Fused(5, 0.7), Fused(8, 0.6)]
    assert [(item.id, item.score) for item in discount_narration(db, fused)] == pytest.approx(
        [(6, 0.85), (1, 0.8), (5, 0.7), (2, 0.9 * NARRATION_FACTOR), (8, 0.6)]
    )  # 2 only: 6 is longer, 8 is not followed by a tool call, 1 is the person's, 5 is no step
    assert discount_narration(db, []) == []
    # Through search: a question ranks the narration below the turn that says what was done;
    # the same words typed as keywords keep the plain fusion's order.
    nearest = FixedNearest(db, {2: 0.7, 5: 0.68, 1: 0.4})

    def order(query: str) -> list[int]:
        return [h.entry_id for h in search(db, query, mode="hybrid", nearest=nearest).hits]

    assert order("when did the linter start running on every push?")[:2] == [5, 2]
    assert order("linter")[:2] == [2, 5]


def test_a_todo_list_restated_at_every_step_shows_once_per_session() -> None:
    todo = "TodoWrite\ntodos: content: add tar support status: {}"
    db = small_index(
        [
            {"role": "assistant", "kind": "tool_use", "session_id": "s1", "text": text}
            for text in (todo.format("pending"), todo.format("in_progress"))
        ]
        + [{"role": "assistant", "kind": "tool_use", "session_id": "s2", "text": todo.format("")}]
        + [
            {"role": "assistant", "kind": "tool_use", "session_id": "s1", "text": text}
            for text in ("Bash\ncommand: make tar support", "Bash\ncommand: make tar support -j4")
        ]
    )
    hits = search(db, "tar support", mode="hybrid", nearest=FixedNearest(db, {})).hits
    ids = {hit.entry_id for hit in hits}
    # One version of each session's list; two different commands are two things said.
    assert len(ids & {1, 2}) == 1 and {3, 4, 5} <= ids and len(ids) == 4
    assert len(search(db, "tar support", mode="keyword").hits) == 5  # keywords list every match
