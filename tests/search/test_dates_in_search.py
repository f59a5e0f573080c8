"""A date reading never hides what the words find: a weekday among keywords is a word to look
for, and a message saying every word asked for with the date's own words comes right after the
window's, whenever it was said; in keyword and hybrid search and through ``memory_search``."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest
import sqlite_utils
from clawback.core.home import Home
from clawback.core.mcp.tools import MemoryTools
from clawback.core.search.engine import search

from tests.helpers import cc_assistant, cc_user, write_lines
from tests.search_doubles import FixedNearest, small_index

TODAY = date(2026, 11, 25)  # a Wednesday: "Tuesday" is November 24
NOTE = "the zebracorn migration runs every Tuesday at 03:00"
ASKED = "When does the zebracorn migration run?"
THEN = "the zebracorn migration dry run went fine"
ROWS = [  # entry ids 1..4
    {"role": "user", "ts": "2026-11-10T10:00:00.000Z", "text": ASKED},
    {"role": "assistant", "ts": "2026-11-10T10:01:00.000Z", "text": f"Noted: {NOTE}."},
    {"role": "user", "ts": "2026-11-24T12:00:00.000Z", "text": THEN},  # on that Tuesday
    {"role": "user", "ts": "2026-11-12T09:00:00.000Z", "text": "the zebracorn logo is purple"},
]


@pytest.fixture
def db() -> sqlite_utils.Database:
    return small_index(ROWS)


@pytest.mark.parametrize("query", ["zebracorn Tuesday", "zebracorn migration Tuesday"])
def test_a_weekday_among_keywords_is_searched_for(db: sqlite_utils.Database, query: str) -> None:
    found = search(db, query, today=TODAY)
    assert found.hits[0].entry_id == 2


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_message_saying_the_date_comes_right_after_the_window(
    db: sqlite_utils.Database, mode: str
) -> None:
    # The vector side likes the question best: the date's order still holds.
    nearest = FixedNearest(db, {1: 0.9, 4: 0.8, 2: 0.5, 3: 0.4})
    found = search(
        db, "when did the zebracorn migration run on Tuesday?", mode=mode, nearest=nearest,
        today=TODAY,
    )  # fmt: skip
    ids = [hit.entry_id for hit in found.hits]
    assert ids[:2] == [3, 2] and 1 in ids[2:]


def test_without_the_date_in_it_the_order_is_the_words_own(db: sqlite_utils.Database) -> None:
    """The tier is the date's: the same question without one ranks by its words alone."""
    found = search(db, "when did the zebracorn migration run?", today=TODAY)
    assert found.hits[0].entry_id != 2


def _latest_tuesday() -> date:
    today = datetime.now().astimezone().date()
    return today - timedelta(days=(today.weekday() - 1 - 1) % 7 + 1)


def _local(day: date, hour: int) -> str:
    moment = datetime.combine(day, time(hour)).astimezone()
    return moment.isoformat()


def test_memory_search_finds_the_note_for_zebracorn_tuesday(home: Home, cc_root: Path) -> None:
    """What the real-CLI integration test's model asks: the note holding both words first."""
    sid = "c0ffee00-2222-4333-8444-555555555555"
    before = _local(_latest_tuesday() - timedelta(days=10), 10)
    tuesday = _local(_latest_tuesday(), 12)
    write_lines(
        cc_root / "-home-u-proj" / f"{sid}.jsonl",
        [cc_user(sid, "u1", ASKED, ts=before),
         cc_assistant(sid, "a1", [{"type": "text", "text": f"Noted: {NOTE}."}], ts=before),
         cc_user(sid, "u2", THEN, ts=tuesday)],
    )  # fmt: skip
    home.ingest_all()
    tools = MemoryTools(home.db)
    [first, *_] = tools.search("zebracorn Tuesday")["results"]
    assert tools.get(first["ref"], context=0)["messages"][0]["text"] == f"Noted: {NOTE}."
    asked = tools.search("when did the zebracorn migration run on Tuesday?")["results"]
    texts = [tools.get(hit["ref"], context=0)["messages"][0]["text"] for hit in asked]
    assert texts[:2] == [THEN, f"Noted: {NOTE}."]
