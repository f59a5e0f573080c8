"""Issue 11, class 2: every query string and date a person can type gets results or one clear
line, never an exception. Property tests against a real FTS5 table whose vocabulary is small
enough that prefix expansion runs (so the rewritten expression is what SQLite parses)."""

from __future__ import annotations

import contextlib

import pytest
import sqlite_utils
from clawback.core.db import connect, write_transaction
from clawback.core.errors import UsageError
from clawback.core.search.engine import SearchFilters, search
from clawback.core.search.query import build_match
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TEXTS = [
    "don't stop the search",
    "searched for ab and abc",
    "t ta tab table",
    "学习Python编程 你好世界",
    "naïve café résumé",
    "emoji 🎉 party",
]

PIECES = st.one_of(
    st.characters(),
    st.characters(codec="utf-8"),
    st.sampled_from(
        ['"', '""', "*", "-", "(", ")", ":", "^", " ", "\t", "\x00", "\ud83d", "\U0010ffff",
         "\ud7ff", "AND", "OR", "NOT", "NEAR", "NEAR(", "text:", "cjk:", "学", "don", "t", "ab",
         "sea", "tab", "é"]
    ),
)  # fmt: skip
QUERIES = st.lists(PIECES, max_size=12).map("".join)


@pytest.fixture(scope="module")
def db() -> sqlite_utils.Database:
    from clawback.core.text.cjk import cjk_bigrams

    database = connect(None)
    with write_transaction(database) as conn:
        conn.execute(
            "INSERT INTO files (id, source, file_key, path) VALUES (1, 'native', 'a.jsonl', '/a')"
        )
        for line, text in enumerate(TEXTS, 1):
            conn.execute(
                "INSERT INTO entries (file_id, line, role, kind, ts, text, cjk)"
                " VALUES (1, ?, 'user', 'text', '2026-01-01T00:00:00.000Z', ?, ?)",
                (line, text, cjk_bigrams(text)),
            )
        conn.execute("INSERT INTO entries_fts (rowid, text, cjk) SELECT id, text, cjk FROM entries")
    return database


class Nearest:
    """A vector side that finds every entry, so hybrid runs its whole path."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.ids = [row[0] for row in db.execute("SELECT id FROM entries")]

    def nearest(self, query: str, limit: int) -> list[tuple[int, int, float]]:
        return [(chunk, 0, 0.5) for chunk in self.ids[:limit]]


@pytest.mark.parametrize(
    "query", ['"a\U0010ffff"*', "ab\U0010ffff*", 'don"t*', 'ab"c*', 'x"" y"*', "ab\ud7ff*"]
)
def test_the_reported_queries_run(db: sqlite_utils.Database, query: str) -> None:
    search(db, query)


def test_a_quote_inside_a_prefix_still_expands_the_real_prefix(db: sqlite_utils.Database) -> None:
    assert {h.entry_id for h in search(db, "ta*").hits} == {3}
    assert search(db, 'don"t*').hits  # "don" then a prefix "t*": the first text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(QUERIES)
def test_no_typed_query_raises(db: sqlite_utils.Database, query: str) -> None:
    match = build_match(query)
    if match is not None:
        db.execute("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?", (match,))
    search(db, query, limit=5)
    search(db, query, limit=5, mode="hybrid", nearest=Nearest(db))


@pytest.mark.parametrize(
    "day",
    ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "99999-01-01", "2026-02-30",
     "\x00", "１２３４-01-01", "2026-01-01T25:00", "-1"],
)  # fmt: skip
def test_impossible_dates_are_one_clear_error(db: sqlite_utils.Database, day: str) -> None:
    for filters in (SearchFilters(since=day), SearchFilters(until=day)):
        try:
            search(db, "search", filters)
        except UsageError as exc:
            assert day in str(exc) or repr(day) in str(exc)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_no_typed_date_raises_anything_but_a_usage_error(
    db: sqlite_utils.Database, day: str
) -> None:
    with contextlib.suppress(UsageError):
        search(db, "search", SearchFilters(since=day, until=day))
