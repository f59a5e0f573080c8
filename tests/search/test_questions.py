"""Queries as people write them: keywords AND-ed, questions by their content words, phrases
exact without switching meaning off, dates favoured, and one list whatever ``limit`` shows."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
import sqlite_utils
from clawback.core.search.engine import SearchFilters, search
from clawback.core.search.plan import plan_query
from clawback.core.search.sentence import is_natural
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.search_doubles import FixedNearest, small_index

TEXTS = [
    ("user", "2026-03-02T10:00:00.000Z", "let's move the session cache to redis tonight"),
    (
        "assistant",
        "2026-03-02T10:05:00.000Z",
        "moved the cache to redis; the old sqlite cache is gone",
    ),
    ("user", "2026-05-03T09:00:00.000Z", "the deploy target is fly.io from now on, not heroku"),
    ("assistant", "2026-05-03T09:01:00.000Z", "noted: deploys go to fly.io"),
    ("user", "2026-05-10T12:00:00.000Z", "the fts5 tokenizer drops emoji, is that a bug?"),
    ("assistant", "2026-05-10T12:01:00.000Z", "not a bug: unicode61 treats emoji as separators"),
    ("user", "2026-06-01T08:00:00.000Z", "see ya tomorrow"),
    ("tool", "2026-06-01T08:00:01.000Z", "redis cache deploy target tokenizer output dump"),
]
TODAY = date(2026, 6, 15)


@pytest.fixture
def db() -> sqlite_utils.Database:
    return small_index(
        [
            {"role": role, "ts": ts, "text": text, "kind": "tool_result" if role == "tool" else "text",
             "conversational": int(role != "tool")}
            for role, ts, text in TEXTS
        ]
    )  # fmt: skip


def ids(db: sqlite_utils.Database, query: str, **options: Any) -> list[int]:
    return [hit.entry_id for hit in search(db, query, today=TODAY, **options).hits]


def test_a_few_keywords_keep_and(db: sqlite_utils.Database) -> None:
    plan = plan_query("fts5 tokenizer")
    assert not plan.natural and plan.strict == '"fts5" AND "tokenizer"'
    assert ids(db, "fts5 tokenizer") == [5]  # both words; no message with only one joins them


def test_a_question_is_answered_by_its_content_words(db: sqlite_utils.Database) -> None:
    question = "when did we move the cache to redis?"
    plan = plan_query(question)
    assert plan.natural and plan.loose == '"move" OR "cache" OR "redis?"'
    assert ids(db, question)[:2] == [1, 2]  # "when", "did", "we" are not asked for
    # Keyword search alone used to want every word, "when" and "did" too, and found nothing.


def test_a_keyword_query_whose_and_finds_too_little_is_answered_too(
    db: sqlite_utils.Database,
) -> None:
    assert ids(db, "redis heroku")[:1] in ([1], [2], [3])  # no message holds both
    assert set(ids(db, "redis heroku")) >= {3}


def test_what_people_say_is_preferred_to_tool_output(db: sqlite_utils.Database) -> None:
    # The tool dump holds every word, so the strict expression finds it; a question's loose
    # words look at what people said.
    assert 8 not in ids(db, "what did we decide about the deploy target for heroku?")[:1]


@pytest.mark.parametrize(
    ("query", "natural"),
    [
        ("fts5 tokenizer", False),
        ("redis cache", False),
        ("why is the tokenizer dropping emoji", True),
        ("the deploy target?", True),
        ("cache moved to redis last night by me", True),
    ],
)
def test_questions_and_sentences_are_told_from_keywords(query: str, natural: bool) -> None:
    assert is_natural(query) is natural


@pytest.mark.parametrize(
    ("query", "decision"),
    [
        ("what did we decide about the deploy target?", True),
        ("which bundler did we pick for the recorder?", True),
        ("which dev server did we go with", True),
        ("what names did I want for the tokens?", True),
        ("why did the deploy to heroku fail?", False),
        ("decision redis", False),  # keywords: ranked as typed
        ("when did we move the cache to redis?", False),
    ],
)
def test_a_question_about_a_decision_is_told_apart(query: str, decision: bool) -> None:
    assert plan_query(query).asks_decision is decision


def test_a_stray_quote_reads_as_a_phrase_to_the_end() -> None:
    plan = plan_query('what did I say about the book "Becoming Nicole')
    assert plan.required and '"Becoming Nicole"' in (plan.loose or "")
    assert plan.meaning == "what did I say about the book Becoming Nicole"
    assert not plan.exact_only  # meaning stays on


def test_a_flag_in_a_question_is_asked_about_not_excluded(db: sqlite_utils.Database) -> None:
    # "-r" in a sentence is a command-line flag: read as an exclusion it made the question
    # exact-only (no meaning) and dropped every message with an "r" in it.
    plan = plan_query("what happened when I restarted with -r and the theme was invalid?")
    assert not plan.exact_only and "NOT" not in (plan.loose or "")
    assert (
        plan.loose == '"happened" OR "restarted" OR "theme" OR "invalid?"'
    )  # "r" alone says nothing
    semantic = FixedNearest(db, {7: 0.8})
    question = "what did we pick as the deploy target with -p?"
    found = search(db, question, mode="hybrid", nearest=semantic, today=TODAY).hits
    assert semantic.asked == [question]  # meaning is on
    assert {3, 7} <= {hit.entry_id for hit in found}  # by its words and by meaning


def test_keywords_still_exclude_but_a_double_dash_is_a_flag() -> None:
    assert plan_query("redis -heroku").exact_only
    assert plan_query("redis -heroku").strict == '("redis") NOT ("heroku")'
    assert plan_query("--resume").strict == '"--resume"'  # searched, not excluded


def test_contractions_and_possessives_read_as_their_head_word() -> None:
    plan = plan_query("why didn't the tokenizer's emoji work?")
    # "didn't" is "did", a stop word; "tokenizer's" is the word "tokenizer" (FTS5 reads the
    # text as "tokenizer s": searched as typed it found only messages with the same ending).
    assert plan.loose == '"tokenizer" OR "emoji" OR "work?"'
    assert plan_query("we're moving it up?").loose == '"moving"'


def test_a_date_in_the_question_favours_that_day(db: sqlite_utils.Database) -> None:
    plan = plan_query("what did we say about fly.io on May 3?", today=TODAY)
    assert plan.window is not None and plan.window.since.startswith("2026-05-03")
    assert "May" not in (plan.loose or "")  # the date's words are not searched for
    assert sorted(ids(db, "what did we say about fly.io on May 3?")[:2]) == [3, 4]
    assert sorted(ids(db, "what did we do with the cache in March?")[:2]) == [1, 2]


def test_a_date_narrows_the_vector_side_too(db: sqlite_utils.Database) -> None:
    nearest = FixedNearest(db, {7: 0.9, 4: 0.5, 1: 0.45})
    assert ids(db, "what was said on May 3", mode="semantic", nearest=nearest)[:1] == [4]


QUERIES = [
    "cache",
    "redis cache",
    "when did we move the cache to redis?",
    "the deploy target",
    '"fly.io"',
    "what did we say about fly.io on May 3?",
    "emoji bug",
    "see you",
]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.sampled_from(QUERIES),
    limit=st.integers(1, 9),
    mode=st.sampled_from(["keyword", "semantic", "hybrid"]),
)
def test_limit_never_changes_the_order(
    db: sqlite_utils.Database, query: str, limit: int, mode: str
) -> None:
    nearest = FixedNearest(db, {1: 0.5, 2: 0.9, 3: 0.6, 4: 0.7, 5: 0.4, 6: 0.8, 7: 0.45})
    longer = ids(db, query, limit=20, mode=mode, nearest=nearest)
    assert ids(db, query, limit=limit, mode=mode, nearest=nearest) == longer[:limit]
    shifted = ids(db, query, limit=limit, offset=1, mode=mode, nearest=nearest)
    assert shifted == longer[1 : limit + 1]
    scores = [h.score for h in search(db, query, limit=20, mode=mode, nearest=nearest).hits]
    assert all(0.0 <= score <= 1.0 for score in scores)  # as --json documents


def test_filters_still_apply_to_a_question(db: sqlite_utils.Database) -> None:
    found = ids(db, "where did the cache go?", filters=SearchFilters(role="assistant"))
    assert found and all(TEXTS[i - 1][0] == "assistant" for i in found)


def test_a_reply_is_found_through_the_proposal_it_answers() -> None:
    # What was decided is the person's answer to a proposal, and holds none of the question's
    # words; the proposal does.
    db = small_index(
        [
            {"role": "user", "text": "the sound recorder needs a dev server, any ideas?"},
            {"role": "assistant", "text": "for the sound recorder's dev server: vite or webpack"},
            {"role": "user", "text": "ok, fine, let's do vite"},
            {"role": "user", "text": "ok, fine, let's go home"},
        ]
    )
    question = "which dev server did we pick for the sound recorder?"
    found = search(db, question, today=TODAY).hits
    assert [hit.entry_id for hit in found] == [1, 2, 3]  # not 4: it answers nothing asked
    assert found[2].score == pytest.approx(found[1].score / 2)  # half its proposal's
    assert "vite" in found[2].snippet
    # The person's filters apply to the reply as to any hit.
    only_assistant = SearchFilters(role="assistant")
    assert [hit.entry_id for hit in search(db, question, only_assistant, today=TODAY).hits] == [2]
    # A few keywords want messages holding them: no replies.
    assert 3 not in [hit.entry_id for hit in search(db, "dev server", today=TODAY).hits]


def test_a_command_after_a_proposal_is_not_a_reply() -> None:
    # Claude Code stores a slash command the person ran (/exit, /clear) as their turn, wrapped
    # in markup: it answers nothing the assistant proposed.
    db = small_index(
        [
            {"role": "assistant", "text": "for the sound recorder's dev server: vite or webpack"},
            {"role": "user", "text": "<command-name>/exit</command-name> <command-args></command-args>"},
        ]
    )  # fmt: skip
    found = search(db, "which dev server did we pick for the sound recorder?", today=TODAY).hits
    assert [hit.entry_id for hit in found] == [1]
