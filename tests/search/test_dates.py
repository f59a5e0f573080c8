"""Dates a person says become a window of days in their time zone, relative to now; ordinary
words that look like months or weekdays ("may", "march", "sat", "sun", "wed") do not."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone

import pytest
from clawback.core.search.dates import date_window

from ..zones import system_zone

TODAY = date(2026, 11, 25)  # a Wednesday: "last week" is November 16-22

# (what a person says, first day, last day), each read against TODAY
PHRASES = [
    ("who did Maria have dinner with on May 3, 2023?", "2023-05-03", "2023-05-03"),
    ("what did we change on January 14?", "2026-01-14", "2026-01-14"),
    ("what happened on December 24?", "2025-12-24", "2025-12-24"),  # the last one, not next
    ("on 3rd of May", "2026-05-03", "2026-05-03"),
    ("the 2026-01-14 deploy", "2026-01-14", "2026-01-14"),
    ("what did we do last week", "2026-11-16", "2026-11-22"),
    ("yesterday's bug", "2026-11-24", "2026-11-24"),
    ("in March", "2026-03-01", "2026-03-31"),
    ("during December", "2025-12-01", "2025-12-31"),
    ("in March 2024", "2024-03-01", "2024-03-31"),
    ("in 2024", "2024-01-01", "2024-12-31"),
    ("last month", "2026-10-01", "2026-10-31"),
    ("what did we ship in July 2025?", "2025-07-01", "2025-07-31"),
    ("the migration in June 2025", "2025-06-01", "2025-06-30"),
    ("the Jul 2025 outage", "2025-07-01", "2025-07-31"),
    ("Jan 2026 planning", "2026-01-01", "2026-01-31"),
    ("what broke in Feb", "2026-02-01", "2026-02-28"),
    ("everything since Mar", "2026-03-01", "2026-11-25"),
    ("the Apr 2025 release", "2025-04-01", "2025-04-30"),
    ("what did we try in May?", "2026-05-01", "2026-05-31"),
    ("in Jun", "2026-06-01", "2026-06-30"),
    ("in Aug", "2026-08-01", "2026-08-31"),
    ("in Sep 2025", "2025-09-01", "2025-09-30"),
    ("the Sept retro", None, None),  # a month with no cue: no date
    ("in Sept", "2026-09-01", "2026-09-30"),
    ("in Oct", "2026-10-01", "2026-10-31"),
    ("in Nov", "2026-11-01", "2026-11-30"),
    ("in Dec", "2025-12-01", "2025-12-31"),
    ("the Sept 14 call", "2026-09-14", "2026-09-14"),
    ("on Oct 3rd, 2024", "2024-10-03", "2024-10-03"),
    ("14 Feb 2025", "2025-02-14", "2025-02-14"),
    ("Jul 3", "2026-07-03", "2026-07-03"),
    ("mid-August 2025", "2025-08-01", "2025-08-31"),
    ("in early March", "2026-03-01", "2026-03-31"),
    ("what did we do last June?", "2026-06-01", "2026-06-30"),
    ("what did we do on Tuesday?", "2026-11-24", "2026-11-24"),
    ("last Tuesday", "2026-11-24", "2026-11-24"),
    ("the Tuesday before last", "2026-11-17", "2026-11-17"),
    ("on Monday", "2026-11-23", "2026-11-23"),
    ("on Wednesday", "2026-11-18", "2026-11-18"),  # today is one: the one before
    ("Friday's standup", "2026-11-20", "2026-11-20"),
    ("last Friday", "2026-11-20", "2026-11-20"),
    ("on Sat", "2026-11-21", "2026-11-21"),
    ("on Thu", "2026-11-19", "2026-11-19"),
    ("since Thursday", "2026-11-19", "2026-11-25"),
    ("this Monday", "2026-11-23", "2026-11-23"),
    ("this week", "2026-11-23", "2026-11-25"),
    ("this month", "2026-11-01", "2026-11-25"),
    ("this year", "2026-01-01", "2026-11-25"),
    ("last year", "2025-01-01", "2025-12-31"),
    ("today", "2026-11-25", "2026-11-25"),
    ("the day before yesterday", "2026-11-23", "2026-11-23"),
    ("last weekend", "2026-11-21", "2026-11-22"),
    ("in the last 3 days", "2026-11-22", "2026-11-25"),
    ("in the last few days", "2026-11-22", "2026-11-25"),
    ("over the past two weeks", "2026-11-11", "2026-11-25"),
    ("in the last 2 months", "2026-09-25", "2026-11-25"),
    ("3 days ago", "2026-11-21", "2026-11-23"),
    ("2 days ago", "2026-11-23", "2026-11-23"),
    ("a week ago", "2026-11-15", "2026-11-21"),
    ("on the 14th", "2026-11-14", "2026-11-14"),
    ("May I ask what we did last week?", "2026-11-16", "2026-11-22"),  # "May I" is no month
]


@pytest.mark.parametrize(("query", "first", "last"), PHRASES)
def test_dates_people_say(query: str, first: str | None, last: str | None) -> None:
    window = date_window(query, TODAY)
    if first is None:
        assert window is None
        return
    assert window is not None
    assert window.days() == (first, last)
    after = date.fromisoformat(last or first) + timedelta(days=1)
    # In UTC (the tests' zone), the window is those days' timestamps exactly.
    assert window.contains(f"{first}T00:00:00.000Z") and window.contains(f"{last}T23:59:59.999Z")
    assert not window.contains(f"{after.isoformat()}T00:00:00.000Z")


def test_there_are_at_least_forty_phrasings() -> None:
    assert sum(first is not None for _, first, _ in PHRASES) >= 40


@pytest.mark.parametrize(
    "query",
    [
        "you may 3 times try",
        "march on",
        "February 30",
        "the mar tool",
        "fts5 tokenizer",
        "2026-13-45",
        "0001-01-01",
        "I may have broken the build",
        "this may happen again",
        "since may be empty, check it first",
        "May I see the logs?",
        "we march the tests through CI",
        "the cat sat on the mat",
        "we sat on it for a while",
        "the sun is out",
        "we wed the two modules",
        "Jan said the build broke",
        "the fix in Jan's branch",
        "the sat solver",
        "Sun Microsystems' JVM",
        "a mon process",
        "the dec instruction",
        "the oct tree",
        "fri",
        "the last 3 commits",
        "last time we tried",
        "version 2024 of the spec",
        "this march toward v2",
        "the august committee",
        "what does 'may' mean in RFC 2119?",
    ],
)
def test_ordinary_words_are_not_dates(query: str) -> None:
    assert date_window(query, TODAY) is None


# A weekday named alone: a time in a question or a sentence, a word to look for among keywords
# (the note "the zebracorn migration runs every Tuesday" answers "zebracorn Tuesday").
WEEKDAY_ALONE = [
    ("zebracorn Tuesday", None),
    ("Tuesday", None),
    ("standup notes Friday", None),
    ("cron Monday 03:00", None),
    ("zebracorn on Tuesday", "2026-11-24"),
    ("zebracorn last Tuesday", "2026-11-24"),
    ("zebracorn since Tuesday", "2026-11-24"),
    ("Tuesday's standup", "2026-11-24"),
    ("what did we do Tuesday?", "2026-11-24"),
    ("the deploy we talked about Tuesday broke", "2026-11-24"),
    ("zebracorn Tuesday?", "2026-11-24"),
]


@pytest.mark.parametrize(("query", "first"), WEEKDAY_ALONE)
def test_a_weekday_alone_is_a_time_only_in_a_question(query: str, first: str | None) -> None:
    window = date_window(query, TODAY)
    assert (window and window.days()[0]) == first


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("what did we decide on Tuesday?", ("Tuesday",)),
        ("the Tuesday before last", ("Tuesday",)),
        ("on Oct 3rd, 2024", ("Oct", "2024")),
        ("on May 3, 2023", ("2023",)),  # "may" is a word every other message says
        ("in March", ()),
        ("in June", ("June",)),
        ("on Sat", ()),
        ("in 2024", ("2024",)),
        ("the 2026-01-14 deploy", ("2026-01-14",)),
        ("yesterday's bug", ()),
        ("in the last 3 days", ()),
        ("two weeks ago", ()),
        ("on the 14th", ()),
    ],
)
def test_a_window_knows_which_of_its_words_a_message_can_say(
    query: str, words: tuple[str, ...]
) -> None:
    window = date_window(query, TODAY)
    assert window is not None and window.words == words


def test_the_span_says_where_the_date_was() -> None:
    for query, said in [
        ("what did we decide on May 3 about the cache?", "on May 3"),
        ("what changed since Thursday in the parser?", "since Thursday"),
        ("the fix from the Tuesday before last", "Tuesday before last"),
        ("errors in the last 3 days", "in the last 3 days"),
    ]:
        window = date_window(query, TODAY)
        assert window is not None and query[window.span[0] : window.span[1]] == said


def test_days_are_the_persons_own() -> None:
    """Yesterday at 01:00 in New York (06:00 UTC) is the New York day before, midnight to
    midnight there, whatever day it is in UTC."""
    new_york = timezone(timedelta(hours=-5))
    now = datetime(2026, 11, 25, 1, 0, tzinfo=new_york)
    window = date_window("what did we do yesterday?", now)
    assert window is not None and window.days() == ("2026-11-24", "2026-11-24")
    assert (window.since, window.until) == ("2026-11-24T05:00:00.000Z", "2026-11-25T05:00:00.000Z")
    tokyo = datetime(2026, 11, 25, 8, 0, tzinfo=timezone(timedelta(hours=9)))
    window = date_window("on Monday", tokyo)
    assert window is not None and window.since == "2026-11-22T15:00:00.000Z"


@pytest.fixture
def in_berlin() -> Iterator[None]:
    """The system's zone is Europe/Berlin (CET, CEST in summer) for this test."""
    with system_zone("Europe/Berlin"):
        yield


@pytest.mark.usefixtures("in_berlin")
def test_the_local_zone_is_the_systems_with_its_summer_time() -> None:
    winter = date_window("on 2026-01-14", date(2026, 11, 25))
    summer = date_window("on 2026-07-14", date(2026, 11, 25))
    assert winter is not None and winter.since == "2026-01-13T23:00:00.000Z"
    assert summer is not None and summer.since == "2026-07-13T22:00:00.000Z"
    today = date_window("what did we do today?")  # now, here
    assert today is not None and today.first == datetime.now().astimezone().date()


def test_a_long_prompt_is_read_for_dates_only_at_its_start() -> None:
    pasted = "log line without a date " * 200 + "on 2024-05-03"
    assert date_window(pasted, TODAY) is None
    assert date_window("on 2024-05-03 " + pasted, TODAY) is not None
