"""What a newcomer meets in the app (issue 37 item 5), at 80x24 and 160x45."""

from __future__ import annotations

import sqlite3

import pytest
from clawback.core.home import Home
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.format import local_time
from clawback.tui.panes.search import SearchPane
from clawback.tui.panes.transcript import TranscriptPane
from textual.widget import Widget
from textual.widgets import OptionList

from .pilot import settle

Size = tuple[int, int]
SMALL: Size = (80, 24)
WIDE: Size = (160, 45)


async def test_quitting_while_the_chat_dock_mounts_raises_nothing(tui: ClawbackApp) -> None:
    """Ctrl+Q as the first screen appears prunes the dock before its children mount; its
    start-up must not look for them (it printed a ``NoMatches: '#chat-header'`` traceback)."""
    async with tui.run_test(size=SMALL) as pilot:
        await settle(pilot)
        pane = tui.query_one(TranscriptPane)
        if pane.dock.is_mounted:
            await pane.dock.remove()
        pane.mount(pane.dock)  # registered and started, its compose not yet run ...
        pane.dock.remove()  # ... when the app prunes it, as quitting prunes every screen
        await settle(pilot)
    assert tui.return_code in (None, 0)


LONG_TITLE = (
    "Choosing the search index for every transcript we keep, and whether FTS5's tokenizer "
    "handles Japanese and Chinese text without an extension"
)


def label_session(home: Home, title_prefix: str, label: str) -> None:
    """A long title, as real first prompts are: the demo's are short."""
    with sqlite3.connect(home.paths.database) as conn:
        conn.execute(
            "UPDATE sessions SET label = ? WHERE title LIKE ?", (label, f"{title_prefix}%")
        )


def screen_lines(widget: Widget) -> list[str]:
    """What ``widget`` shows, line by line, as a person reads it on the screen."""
    return [widget.render_line(y).text for y in range(widget.content_region.height)]


@pytest.mark.parametrize("size", [SMALL, WIDE])
async def test_a_results_source_and_date_are_never_cut(demo_home: Home, size: Size) -> None:
    label_session(demo_home, "Choosing the search index", LONG_TITLE)
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"tantivy")
        await settle(pilot)
        results = app.query_one("#search-results", OptionList)
        hits = [h for h in app.query_one(SearchPane)._hits if h.session_title == LONG_TITLE]
        assert hits
        shown = screen_lines(results)
        for hit in hits:
            when = local_time(hit.timestamp)
            rows = [line for line in shown if when in line]  # the date whole ...
            assert rows, f"{when} is cut: {shown}"
            assert rows[0].split()[0] == hit.strength  # how strong it is leads the row
            assert "Claude Code" in rows[0]  # ... and the source
            assert "Choosing the search" in rows[0]  # and the title, as much as fits
