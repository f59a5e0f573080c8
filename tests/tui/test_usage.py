"""The usage pane (issue 36 item 4) at 160x45 and 80x24, the sessions list's cost column and
the transcript header's, and the pane following new usage as the watcher indexes it."""

from __future__ import annotations

import json
from datetime import date

import pytest
from clawback.core.config import update_setting
from clawback.core.home import Home
from clawback.tui.app import make_app
from clawback.tui.panes.sessions import SessionList
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.panes.usage import UsagePane
from clawback.tui.widgets.usage_chart import UsageChart
from textual.widgets import OptionList, Select, Static

from .pilot import settle, wait_until

SIZES = [(160, 45), (80, 24)]
DEMO_DAYS = ["2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21"]


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    """Periods end on a fixed day: the demo's sessions are from 18-21 November 2026."""
    monkeypatch.setattr("clawback.tui.panes.usage.today", lambda: date(2026, 11, 24))


def text(app: object, selector: str) -> str:
    return str(app.query_one(selector, Static).render())  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", SIZES, ids=["160x45", "80x24"])
async def test_the_pane_shows_the_periods_days_and_costliest_sessions(
    demo_home: Home, size: tuple[int, int]
) -> None:
    update_setting(demo_home.paths, "ui.usage_period", "7d")
    app = make_app(Home.open(demo_home.paths.home), watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        pane = app.query_one(UsagePane)
        assert pane.display and pane.region.width > 0
        chart = pane.query_one(UsageChart)
        assert chart.has_focus and chart.size.height >= 3
        assert chart.unit == "day"
        assert [c.period for c in chart.columns] == [f"2026-11-{d}" for d in range(18, 25)]
        costs = [round(c.usage.cost_usd, 2) for c in chart.columns]
        assert costs == [0.13, 0.1, 0.08, 0.01, 0.0, 0.0, 0.0]
        assert "Last 7 days: $0.33" in text(pane, "#usage-summary")
        assert "86% read from the cache" in text(pane, "#usage-summary")
        assert text(pane, "#usage-day").startswith("2026-11-21")  # the newest day with usage
        sessions = pane.query_one("#usage-sessions", OptionList)
        assert sessions.option_count == 4
        first = str(sessions.get_option_at_index(0).prompt)
        assert "$0.13" in first and "Choosing the search index" in first
        rendered = chart.render().plain
        assert "▇" in rendered or "█" in rendered  # bars drawn, at this size too

        await pilot.press("left", "left", "left")
        assert text(pane, "#usage-day").startswith("2026-11-18")
        assert "$0.13" in text(pane, "#usage-day")
        await pilot.press("t")
        assert chart.tokens and "Tokens by day" in text(pane, "#usage-chart-title")
        assert "cache read" in text(pane, "#usage-chart-title")


async def test_enter_on_a_session_opens_it_with_its_cost(demo_home: Home) -> None:
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZES[0]) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        await pilot.press("o", "down", "enter")  # the second costliest session
        await settle(pilot)
        transcript = app.query_one(TranscriptPane)
        assert transcript.session is not None
        assert transcript.session.title == "Textual layout bug in the sidebar"
        header = text(transcript, "#transcript-header")
        assert "$0.10 · 87% cached" in header


async def test_filters_by_project_and_model_and_the_period_is_kept(demo_home: Home) -> None:
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZES[0]) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        pane = app.query_one(UsagePane)
        project = pane.query_one("#usage-project", Select)
        assert "/home/demo/projects/website" in [value for _, value in project._options]
        project.value = "/home/demo/projects/website"
        await settle(pilot)
        sessions = pane.query_one("#usage-sessions", OptionList)
        assert sessions.option_count == 1
        assert "Deploy pipeline" in str(sessions.get_option_at_index(0).prompt)
        project.value = ""
        model = pane.query_one("#usage-model", Select)
        model.value = "claude-haiku-4-5"  # the sub-agent's only reply
        await settle(pilot)
        assert sessions.option_count == 1  # in its parent session
        assert "Choosing the search index" in str(sessions.get_option_at_index(0).prompt)
        assert text(pane, "#usage-summary").startswith("Last 30 days: <$0.01 · 10,627 tokens")
        await pilot.press("d")  # the next period: 90 days
        await settle(pilot)
    assert Home.open(demo_home.paths.home).config.ui.usage_period == "90d"


async def test_an_empty_period_says_where_usage_begins(
    demo_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("clawback.tui.panes.usage.today", lambda: date(2027, 6, 1))
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZES[1]) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        pane = app.query_one(UsagePane)
        assert pane.has_class("-empty")
        assert "begins in November 2026" in text(pane, "#usage-empty")


async def test_the_sessions_list_shows_each_sessions_cost(demo_home: Home) -> None:
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZES[0]) as pilot:
        await settle(pilot)
        listing = app.query_one(SessionList)
        rows = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        choosing = next(row for row in rows if "Choosing the search index" in row)
        assert choosing.split("\n")[1].startswith("Claude Code · 2026-11-18 · ")
        assert " msgs · $0.13 · 88% cached · " in choosing


async def test_the_pane_follows_new_usage_as_it_is_indexed(demo_home: Home) -> None:
    source = next(demo_home.paths.sessions.glob("*.jsonl"))  # the demo's native chat
    app = make_app(demo_home)  # with the watcher
    async with app.run_test(size=SIZES[0]) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        pane = app.query_one(UsagePane)
        assert "$0.33" in text(pane, "#usage-summary")
        await wait_until(pilot, app.watching.is_set)
        reply = {
            "type": "message",
            "id": "live-usage",
            "role": "assistant",
            "content": "A costly reply.",
            "timestamp": "2026-11-23T09:00:00.000Z",
            "model": "claude-opus-4-1",
            "usage": {"input_tokens": 10_000, "output_tokens": 2_000},
        }
        with source.open("a") as handle:
            handle.write(json.dumps(reply) + "\n")
        # Opus 4.1: 10,000 in at $15 and 2,000 out at $75 per million: $0.30 more.
        await wait_until(pilot, lambda: "$0.63" in text(pane, "#usage-summary"))
        chart = pane.query_one(UsageChart)
        assert round(chart.columns[-2].usage.cost_usd, 2) == 0.3  # 23 November
