"""Dates in a question become a window of time, relative to today."""

from __future__ import annotations

from datetime import date

import pytest
from clawback.core.search.dates import date_window

TODAY = date(2026, 11, 25)  # a Wednesday


@pytest.mark.parametrize(
    ("query", "since", "until"),
    [
        ("who did Maria have dinner with on May 3, 2023?", "2023-05-03", "2023-05-04"),
        ("what did we change on January 14?", "2026-01-14", "2026-01-15"),
        ("what happened on December 24?", "2025-12-24", "2025-12-25"),  # the last one, not next
        ("on 3rd of May", "2026-05-03", "2026-05-04"),
        ("the 2026-01-14 deploy", "2026-01-14", "2026-01-15"),
        ("what did we do last week", "2026-11-16", "2026-11-23"),
        ("yesterday's bug", "2026-11-24", "2026-11-25"),
        ("in March", "2026-03-01", "2026-04-01"),
        ("during December", "2025-12-01", "2026-01-01"),
        ("in March 2024", "2024-03-01", "2024-04-01"),
        ("in 2024", "2024-01-01", "2025-01-01"),
        ("last month", "2026-10-01", "2026-11-01"),
    ],
)
def test_dates_people_write(query: str, since: str, until: str) -> None:
    window = date_window(query, TODAY)
    assert window is not None
    assert (window.since[:10], window.until[:10]) == (since, until)
    assert window.contains(f"{since}T12:00:00.000Z") and not window.contains(
        f"{until}T00:00:00.000Z"
    )


@pytest.mark.parametrize(
    "query",
    [
        "you may 3 times try",
        "march on",
        "February 30",
        "the mar tool",
        "fts5 tokenizer",
        "2026-13-45",
    ],
)
def test_what_is_not_a_date(query: str) -> None:
    assert date_window(query, TODAY) is None


def test_the_span_says_where_the_date_was() -> None:
    query = "what did we decide on May 3 about the cache?"
    window = date_window(query, TODAY)
    assert window is not None and query[window.span[0] : window.span[1]] == "on May 3"
