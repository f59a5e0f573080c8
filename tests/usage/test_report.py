"""Usage reports: local days, weeks and months, projects, sessions and models, filters, and
cost that is never guessed (items 2 and 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from clawback.core.home import Home
from clawback.core.timeutil import date_bounds
from clawback.core.usage import load_prices, usage_report

from tests.helpers import cc_user
from tests.usage.test_index import SID, reply, write

OTHER = "7a7a7a7a-1111-4222-8333-444455556666"


def _usage(ts: str, message: str, *, output: int = 10, model: str = "claude-sonnet-4-5",
           session: str = SID, cwd: str = "/home/u/proj") -> dict:  # fmt: skip
    line = reply(message, message, output, request=f"req_{message}", session=session, ts=ts)
    line["message"]["model"] = model
    line["cwd"] = cwd
    return line


@pytest.fixture
def archive(home: Home, cc_root: Path) -> Home:
    write(
        cc_root / "-home-u-proj" / f"{SID}.jsonl",
        cc_user(SID, "q1", "Plan the garden", "2026-03-01T18:00:00.000Z"),
        _usage("2026-03-01T18:29:00.000Z", "m1"),  # 23:59 in Kolkata
        _usage("2026-03-01T19:00:00.000Z", "m2"),  # 00:30 on the 2nd in Kolkata
        _usage("2026-03-09T03:30:00.000Z", "m3", model="mystery-model"),  # 23:30 on 8 March, NY
    )
    question = cc_user(OTHER, "q2", "Fix the build", "2026-04-15T12:00:00.000Z")
    question["cwd"] = "/home/u/other"
    write(
        cc_root / "-home-u-other" / f"{OTHER}.jsonl",
        question,
        _usage(
            "2026-04-15T12:00:05.000Z",
            "m4",
            output=1000,
            session=OTHER,
            cwd="/home/u/other",
            model="claude-opus-4-6",
        ),
    )
    home.ingest_all()
    return home


def test_days_are_the_persons_local_days(archive: Home, zone: Callable[[str], None]) -> None:
    prices = load_prices()
    zone("Asia/Kolkata")
    days = [row.key for row in usage_report(archive.db, prices, by="day").rows]
    assert days == ["2026-03-01", "2026-03-02", "2026-03-09", "2026-04-15"]
    zone("UTC")
    days = [row.key for row in usage_report(archive.db, prices, by="day").rows]
    assert days == ["2026-03-01", "2026-03-09", "2026-04-15"]
    zone("America/New_York")  # 8 March 2026 has 23 hours there
    days = [row.key for row in usage_report(archive.db, prices, by="day").rows]
    assert days == ["2026-03-01", "2026-03-08", "2026-04-15"]


def test_since_and_until_are_inclusive_and_read_as_search_reads_them(
    archive: Home, zone: Callable[[str], None]
) -> None:
    prices = load_prices()
    zone("UTC")
    only = usage_report(archive.db, prices, by="day", since="2026-03-09", until="2026-03-09")
    assert [row.key for row in only.rows] == ["2026-03-09"] and only.total.responses == 1
    until = usage_report(archive.db, prices, by="day", until="2026-03-01")
    assert [row.key for row in until.rows] == ["2026-03-01"] and until.total.responses == 2
    zone("Asia/Kolkata")  # the bounds are search's (``timeutil.date_bounds``), whatever it reads
    low, high = date_bounds("2026-03-02", "2026-03-02")
    kept = usage_report(archive.db, prices, by="day", since="2026-03-02", until="2026-03-02")
    in_bounds = [ts for ts in ("2026-03-01T18:29:00.000Z", "2026-03-01T19:00:00.000Z")
                 if low and high and low <= ts < high]  # fmt: skip
    assert kept.total.responses == len(in_bounds)
    with pytest.raises(ValueError, match="not a date"):
        usage_report(archive.db, prices, since="yesterday-ish")
    with pytest.raises(ValueError, match="nothing can match"):
        usage_report(archive.db, prices, since="2026-04-02", until="2026-04-01")


def test_since_and_until_are_the_local_days_the_report_shows(
    archive: Home, zone: Callable[[str], None]
) -> None:
    """A bare date is the local day the report's rows are: in Kolkata, 00:30 on the 2nd (19:00
    UTC on the 1st) is the 2nd's; in New York, 23:30 on 8 March (03:30 UTC on the 9th) the 8th's."""
    prices = load_prices()
    zone("Asia/Kolkata")
    only = usage_report(archive.db, prices, by="day", since="2026-03-02", until="2026-03-02")
    assert [row.key for row in only.rows] == ["2026-03-02"] and only.total.responses == 1
    zone("America/New_York")
    until = usage_report(archive.db, prices, by="day", until="2026-03-08")
    assert [row.key for row in until.rows] == ["2026-03-01", "2026-03-08"]


def test_weeks_start_on_monday_and_months_are_calendar_months(
    archive: Home, zone: Callable[[str], None]
) -> None:
    zone("UTC")
    prices = load_prices()
    weeks = usage_report(archive.db, prices, by="week")
    # 1 March 2026 is a Sunday: its week began on Monday 23 February.
    assert [row.key for row in weeks.rows] == ["2026-02-23", "2026-03-09", "2026-04-13"]
    months = usage_report(archive.db, prices, by="month")
    assert [(row.key, row.responses) for row in months.rows] == [("2026-03", 3), ("2026-04", 1)]


def test_a_model_without_a_price_shows_its_tokens_and_no_cost(
    archive: Home, zone: Callable[[str], None]
) -> None:
    zone("UTC")
    prices = load_prices()
    by_model = {row.key: row for row in usage_report(archive.db, prices, by="model").rows}
    mystery = by_model["mystery-model"]
    assert mystery.output_tokens == 10 and mystery.cost is None
    assert mystery.to_json("model")["cost_usd"] is None
    sonnet = by_model["claude-sonnet-4-5"]
    assert sonnet.cost == pytest.approx(2 * (10 * 3 + 10 * 15 + 100 * 3.75) / 1e6)
    report = usage_report(archive.db, prices, by="day")
    march = next(row for row in report.rows if row.key == "2026-03-09")
    assert march.cost is None and march.unpriced_models == {"mystery-model"}
    assert report.total.cost is None and report.total.cost_usd > 0  # the known part, apart


def test_projects_sessions_and_filters(archive: Home, zone: Callable[[str], None]) -> None:
    zone("UTC")
    prices = load_prices()
    projects = usage_report(archive.db, prices, by="project")
    # Costliest first: Opus 4.6's 1,000 output tokens outweigh the rest.
    assert [row.key for row in projects.rows] == ["/home/u/other", "/home/u/proj"]
    sessions = usage_report(archive.db, prices, by="session")
    first = sessions.rows[0]
    assert (first.key, first.title, first.project) == (OTHER, "Fix the build", "/home/u/other")
    assert first.to_json("session")["session_id"] == OTHER
    only = usage_report(archive.db, prices, by="session", project="u/pro")
    assert [row.key for row in only.rows] == [SID]
    opus = usage_report(archive.db, prices, by="day", model="claude-opus-4-6")
    assert [row.key for row in opus.rows] == ["2026-04-15"]
    share = usage_report(archive.db, prices, by="model", model="claude-opus-4-6").rows[0]
    assert share.cache_read_share == 0.0
    limited = usage_report(archive.db, prices, by="session", limit=1)
    assert len(limited.rows) == 1 and limited.total.responses == 4


def test_json_rows_carry_the_fields_the_issue_names(
    archive: Home, zone: Callable[[str], None]
) -> None:
    zone("UTC")
    prices = load_prices()
    needed = {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
              "cost_usd"}  # fmt: skip
    for by, key in (("day", "period"), ("week", "period"), ("month", "period"),
                    ("project", "project"), ("session", "session_id"), ("model", "model")):  # fmt: skip
        rows = [row.to_json(by) for row in usage_report(archive.db, prices, by=by).rows]
        assert rows and all(needed | {key} <= set(row) for row in rows), by
