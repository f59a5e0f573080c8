"""A turn that only acknowledges ("yo", "ok") is never a hit on its own, in hybrid, semantic or
a question's keyword replies: the turn it answers stands in its place."""

from __future__ import annotations

import pytest
import sqlite_utils
from clawback.core.search.acknowledgements import is_acknowledgement
from clawback.core.search.engine import SearchFilters, search

from tests.search_doubles import FixedNearest, small_index

ANSWER = "Store the sessions index in SQLite with FTS5: a JSON file would not scale."
ROWS = [
    ("user", "how should we store the sessions index?"),
    ("assistant", ANSWER),
    ("user", "yo"),
    ("assistant", "The parser moved into its own module."),
    ("user", "ok thanks"),
    ("assistant", "Should the sessions index also keep deleted sessions?"),
    ("user", "no, keep only live sessions in the index"),
]


@pytest.fixture
def db() -> sqlite_utils.Database:
    return small_index([{"role": role, "text": text} for role, text in ROWS])


@pytest.mark.parametrize(
    ("text", "only_acknowledges"),
    [
        ("yo", True),
        ("ok", True),
        ("OK!", True),
        ("ok thanks", True),
        ("yes do it", True),
        ("Thanks!!", True),
        ("continue", True),
        ("👍", True),
        ("no", True),
        ("ok, let's do vite", False),
        ("no, use sqlite", False),
        ("yes but rename it", False),
        ("", False),
        ("ok " * 20, False),
    ],
)
def test_what_only_acknowledges(text: str, only_acknowledges: bool) -> None:
    assert is_acknowledgement(text) is only_acknowledges


def _texts(db: sqlite_utils.Database, ids: list[int]) -> list[str]:
    return [ROWS[i - 1][1] for i in ids]


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_an_acknowledgement_stands_aside_for_the_turn_it_answers(
    db: sqlite_utils.Database, mode: str
) -> None:
    # "yo" and "ok thanks" were embedded with what they answer: as near as the answer, or nearer.
    nearest = FixedNearest(db, {3: 0.72, 2: 0.6, 5: 0.7, 4: 0.5, 7: 0.55})
    hits = search(db, "where do we keep the sessions index?", mode=mode, nearest=nearest).hits
    texts = _texts(db, [hit.entry_id for hit in hits])
    assert "yo" not in texts and "ok thanks" not in texts
    assert texts.count(ANSWER) == 1 and texts.count(ROWS[3][1]) == 1
    if mode == "semantic":  # "yo" was the nearest: its answer takes its place, first
        assert texts[0] == ANSWER
    assert "no, keep only live sessions in the index" in texts  # a reply that says something


def test_the_turn_answered_must_pass_the_filters(db: sqlite_utils.Database) -> None:
    nearest = FixedNearest(db, {3: 0.72, 7: 0.55})
    mine = SearchFilters(role="user")
    hits = search(db, "sessions index", mine, mode="semantic", nearest=nearest).hits
    assert _texts(db, [hit.entry_id for hit in hits]) == [
        "no, keep only live sessions in the index"
    ]


def test_a_questions_keyword_side_brings_no_acknowledgement_as_a_reply(
    db: sqlite_utils.Database,
) -> None:
    hits = search(db, "which format did we store the sessions index in, sqlite?").hits
    texts = _texts(db, [hit.entry_id for hit in hits])
    assert ANSWER in texts and "yo" not in texts
