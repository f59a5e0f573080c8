"""Whatever a person types becomes a MATCH expression SQLite accepts, or no search at all."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator

import pytest
from clawback.core.search.query import (
    MAX_TERMS,
    build_match,
    parse_query,
    score_from_rank,
    split_terms,
    terms,
)
from clawback.core.text.cjk import cjk_bigrams
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DOCS = {
    1: "Hello world, the WAL mode keeps readers from blocking the writer",
    2: "Café résumé naïve: diacritics fold away",
    3: "你好世界，今天天气很好",
    4: "学习Python编程很有趣",
    5: "東京タワーに行きました",
    6: "서울에서 만나요",
    7: "hello there, not the world",
    8: "Costs $100 (approx) AND NOT more; see text:foo",
    9: "2024年の計画",
    10: "Please read the CLAUDE.mdファイルを読んでください",
    11: "ファイルREADME.mdを開く",
}


def _table() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    # The schema and tokenizer of entries_fts in core/db.py.
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(text, cjk, tokenize='unicode61 remove_diacritics 2')"
    )
    for rowid, text in DOCS.items():
        db.execute(
            "INSERT INTO t (rowid, text, cjk) VALUES (?, ?, ?)", (rowid, text, cjk_bigrams(text))
        )
    return db


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    connection = _table()
    yield connection
    connection.close()


def search(db: sqlite3.Connection, query: str) -> set[int]:
    match = build_match(query)
    if match is None:
        return set()
    return {row[0] for row in db.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,))}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("hello", {1, 7}),
        ("hello world", {1, 7}),  # AND, not adjacency
        ('"hello world"', {1}),
        ('"hello wor"*', {1}),
        ("hel*", {1, 7}),
        ("wal readers", {1}),
        ("wal missing", set()),
        ("HELLO", {1, 7}),
        ("cafe resume", {2}),
        ("café", {2}),
        ("hello -world", set()),
        ("hello -there", {1}),
        ('hello -"the world"', {1}),
        ("AND", {8}),
        ("NOT", {7, 8}),  # a word like any other
        ("(approx)", {8}),
        ("$100", {8}),
        ("text:foo", {8}),
        ("世界", {3}),
        ("世", {3}),
        ("界", {3}),
        ("天气很好", {3}),
        ("今天 世界", {3}),
        ("你好，世界", {3}),
        ("-世界 你好", set()),
        ("Python", {4}),
        ("python编程", {4}),
        ("编程", {4}),
        ("编*", {4}),
        ("タワー", {5}),
        ("東京", {5}),
        ("行き", {5}),
        ("서울", {6}),
        ("만나요", {6}),
        ("2024", {9}),
        ("計画", {9}),
        ("年", {9}),
        # Latin glued to CJK: "md" is in the cjk column, "claude" in the text column.
        ("CLAUDE.mdファイル", {10}),
        ("CLAUDE.mdファイルを読んで", {10}),
        ('"read the CLAUDE.mdファイル"', {10}),
        ('"the read CLAUDE.mdファイル"', set()),  # the Latin words stay a phrase
        ("ファイルREADME.md", {11}),
        ("ファイルREADM*", {11}),
        ("OTHER.mdファイル", set()),
    ],
)
def test_examples(db: sqlite3.Connection, query: str, expected: set[int]) -> None:
    assert search(db, query) == expected


@pytest.mark.parametrize(
    "query",
    ["", "   ", "*", "**", '"', '""', "-", "--", "()", "!!!", "😀", '"*"', "-hello", '-"a b"'],
)
def test_nothing_searchable_is_none(query: str) -> None:
    assert build_match(query) is None


def test_only_exclusions_is_none_because_fts5_cannot_say_it(db: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.OperationalError):
        db.execute("SELECT rowid FROM t WHERE t MATCH ?", ('NOT "hello"',)).fetchall()
    assert build_match("-hello -world") is None


def test_expressions_quote_every_term() -> None:
    assert build_match("a b") == '"a" AND "b"'
    assert build_match('say "hi"') == '"say" AND "hi"'
    assert build_match('x"y') == '"x""y"'
    assert build_match("foo*") == '"foo"*'
    assert build_match("-b a") == '("a") NOT ("b")'
    assert build_match("世界") == 'cjk : "世界"'
    assert build_match("世") == 'cjk : "世"*'
    assert build_match("Python编程") == '("Python" AND cjk : "编程")'
    assert build_match("CLAUDE.mdファイル") == '("CLAUDE." AND "md" AND cjk : "ファ ァイ イル")'


def test_tables_without_a_bigram_column() -> None:
    """facts_fts has (content, context) and no cjk column: CJK must not name one."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(content, context)")
    db.execute("INSERT INTO f (rowid, content) VALUES (1, '世界和平'), (2, 'hello 世界')")
    for query in ("世界", "世界*", "hello 世界", "-世界 hello", "Python编程"):
        match = build_match(query, cjk_column=None)
        assert match is not None and "cjk" not in match
        db.execute("SELECT rowid FROM f WHERE f MATCH ?", (match,)).fetchall()
    match = build_match("世界", cjk_column=None)
    assert {r[0] for r in db.execute("SELECT rowid FROM f WHERE f MATCH ?", (match,))} == {1, 2}


def test_split_terms() -> None:
    assert [(t.text, t.prefix, t.exclude, t.phrase) for t in split_terms('a -b "c d"* -"e')] == [
        ("a", False, False, False),
        ("b", False, True, False),
        ("c d", True, False, True),
        ("e", False, True, True),
    ]


def test_terms_for_highlighting() -> None:
    assert terms('Hello "the world" -nope wor* (approx) Python编程 hello') == [
        "Hello",
        "the world",
        "wor",
        "approx",
        "Python",
        "编程",
    ]
    assert terms("") == []
    assert parse_query("x").terms == ("x",)


def test_terms_are_capped() -> None:
    query = " ".join(f"w{i}" for i in range(MAX_TERMS * 3))
    match = build_match(query)
    assert match is not None
    assert match.count(" AND ") == MAX_TERMS - 1


def test_score_from_rank_is_monotonic_in_0_1() -> None:
    ranks = [-50.0, -10.0, -2.5, -1.0, -0.1, -1e-9, 0.0, 3.0]
    scores = [score_from_rank(r) for r in ranks]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s < 1.0 for s in scores)
    assert score_from_rank(-1.0) == 0.5
    assert score_from_rank(0.0) == 0.0
    assert score_from_rank(-math.inf) == 1.0
    assert score_from_rank(math.nan) == 0.0


def test_scores_follow_bm25(db: sqlite3.Connection) -> None:
    rows = db.execute(
        "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t)", (build_match("hello"),)
    ).fetchall()
    scores = [score_from_rank(rank) for _, rank in rows]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s < 1 for s in scores)


_query_pieces = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            '"',
            "*",
            "-",
            "(",
            ")",
            ":",
            "^",
            "AND",
            "OR",
            "NOT",
            "NEAR",
            "NEAR(",
            "text:",
            "cjk:",
            "{text}",
            "+",
            " ",
            "世界",
            "你",
            "😀",
            "\u3000",
            "\x00",
            "e\u0301",
            "'",
            "\\",
        ]
    ),
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), st.lists(_query_pieces, max_size=15).map("".join)))
def test_any_query_is_none_or_accepted_by_sqlite(query: str) -> None:
    match = build_match(query)
    if match is None:
        return
    db = _DB
    db.execute(
        "SELECT rowid, bm25(t), snippet(t, 0, '[', ']', '…', 8) FROM t WHERE t MATCH ?", (match,)
    ).fetchall()
    assert terms(query) is not None


_DB = _table()
