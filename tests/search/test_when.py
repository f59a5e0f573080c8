"""A question that only names a time ("what did we do last week?") is answered by what the
person asked then: a hit per session active in that time, newest first, each its most
substantive prompt there; in every mode, through the one search every client asks."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import pytest
import sqlite_utils
from clawback.core.db import write_transaction
from clawback.core.search.engine import SearchFilters
from clawback.core.search.front import (
    NOTHING,
    NOTHING_THEN,
    as_you_type,
    find,
    says_nothing,
    why_nothing,
)
from clawback.core.search.plan import plan_query

from tests.search_doubles import small_index

TODAY = date(2026, 5, 13)  # a Wednesday: "last week" is May 4-10
LONG = "please look into why the nightly export to the bucket fails since the move " * 3
# (session, cwd, role, ts, text, conversational, sidechain)
ROWS = [
    ("old", "/w/alpha", "user", "2026-04-20T09:00:00Z", "an april question about caching", 1, 0),
    ("mon", "/w/alpha", "user", "2026-05-04T09:00:00Z", "fix the login form", 1, 0),
    ("mon", "/w/alpha", "user", "2026-05-04T09:05:00Z", LONG, 1, 0),
    (
        "mon",
        "/w/alpha",
        "user",
        "2026-05-04T09:06:00Z",
        "<command-name>/clear</command-name>" * 20,
        1,
        0,
    ),
    ("mon", "/w/alpha", "assistant", "2026-05-04T09:07:00Z", "a long answer " * 50, 1, 0),
    ("mon", "/w/alpha", "user", "2026-05-04T09:08:00Z", "sub-agent task " * 40, 1, 1),
    (
        "mon",
        "/w/alpha",
        "user",
        "2026-05-04T09:09:00Z",
        "Base directory for this skill " * 40,
        0,
        0,
    ),
    ("fri", "/w/beta", "user", "2026-05-08T17:00:00Z", "ship the release notes", 1, 0),
    ("fri", "/w/beta", "user", "2026-05-11T08:00:00Z", "and this is monday again", 1, 0),
    ("now", "/w/beta", "user", "2026-05-12T10:00:00Z", "today's work on the parser", 1, 0),
]


@pytest.fixture
def db() -> sqlite_utils.Database:
    database = small_index(
        [
            {"session_id": session, "role": role, "ts": ts, "text": text, "conversational": said,
             "sidechain": side}
            for session, _, role, ts, text, said, side in ROWS
        ]
    )  # fmt: skip
    with write_transaction(database) as conn:
        for session, cwd in {(row[0], row[1]) for row in ROWS}:
            conn.execute(
                "INSERT INTO sessions (id, source, title, cwd) VALUES (?, 'claude-code', ?, ?)",
                (session, f"{session} session", cwd),
            )
    return database


class Unasked:
    """A vector side that must not be asked: a date alone gives it nothing to read."""

    def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
        raise AssertionError(f"the vector side was asked {query!r}")


def texts(db: sqlite_utils.Database, query: str, **options: object) -> list[str]:
    found = find(db, query, today=TODAY, **options)  # type: ignore[arg-type]
    return [hit.snippet for hit in found.results.hits]


@pytest.mark.parametrize(
    "query",
    [
        "what did we do last week?",
        "what happened on May 4?",
        "2026-05-04",
        "what was I working on in April?",
        "last week",
        "recap of yesterday",
    ],
)
def test_a_question_naming_only_a_time(query: str) -> None:
    assert plan_query(query, today=TODAY).when_only
    assert plan_query(as_you_type(query), today=TODAY).when_only  # while typing it, too


@pytest.mark.parametrize(
    "query",
    [
        "what did we decide about the login form last week?",
        "login last week",
        '"release notes" last week',
        "release* last week",
        "what did we do?",  # no time: nothing to list
        "what was said on May 3",  # "said" asks about the words: searched as ever
    ],
)
def test_a_question_with_something_to_look_for(query: str) -> None:
    assert not plan_query(query, today=TODAY).when_only


def test_what_the_person_asked_then_a_session_each_newest_first(db: sqlite_utils.Database) -> None:
    found = find(db, "what did we do last week?", today=TODAY)
    hits = found.results.hits
    assert [hit.session_id for hit in hits] == ["fri", "mon"]  # May 11 and "now" are not in it
    assert hits[0].snippet == "ship the release notes"  # fri's prompt of last week
    # mon's most substantive prompt: not a wrapper, a sub-agent's task, an injected skill or
    # Claude's answer, each longer
    assert hits[1].snippet.startswith("please look into why the nightly export")
    assert {hit.found_by for hit in hits} == {"date"} and not found.results.note
    window = found.results.window
    assert window is not None and window.days() == ("2026-05-04", "2026-05-10")


def test_every_mode_answers_it_the_same_without_the_vector_side(db: sqlite_utils.Database) -> None:
    keyword = texts(db, "what happened on May 4?", mode="keyword")
    assert keyword and keyword == texts(db, "what happened on May 4?", nearest=Unasked())
    assert keyword == texts(db, "what happened on May 4?", mode="semantic", nearest=Unasked())


def test_limits_and_filters_apply(db: sqlite_utils.Database) -> None:
    everything = texts(db, "what happened this year?", limit=10)
    assert len(everything) == 4  # a hit for each of the four sessions
    assert texts(db, "what happened this year?", limit=2) == everything[:2]
    assert texts(db, "what happened this year?", limit=2, offset=2) == everything[2:]
    beta = find(db, "what happened this year?", SearchFilters(project="beta"), today=TODAY)
    assert {hit.session_id for hit in beta.results.hits} == {"fri", "now"}
    replies = find(db, "what happened on May 4", SearchFilters(role="assistant"), today=TODAY)
    assert [hit.role for hit in replies.results.hits] == ["assistant"]


def test_a_time_with_nothing_said_says_so_and_which_days_it_read(
    db: sqlite_utils.Database,
) -> None:
    march = find(db, "what did we do in March?", today=TODAY).results
    assert march.note == "nothing in the archive was said then (2026-03-01 to 2026-03-31)"
    assert says_nothing(march.note) and why_nothing(march) == march.note
    apart = find(db, "last week", SearchFilters(since="2026-05-12"), today=TODAY)
    assert apart.empty and apart.results.note == f"{NOTHING_THEN} (2026-05-04 to 2026-05-10)"
    # Anything else that finds nothing says the plain sentence.
    plain = find(db, "xyzzyplugh", today=TODAY).results
    assert plain.note == NOTHING and why_nothing(plain) == NOTHING
    assert not says_nothing("semantic search unavailable; showing keyword results")
