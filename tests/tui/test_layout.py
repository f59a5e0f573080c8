"""Small terminals: below ``NARROW`` columns the sessions list and the pane beside it take turns
at full width (as lazygit and k9s do), and every pane stays usable at 80x24."""

from __future__ import annotations

import tomllib

from clawback.tui.app import NARROW, ClawbackApp
from clawback.tui.panes.sessions import SessionList, SessionsPane
from clawback.tui.widgets.message_view import MessageView
from textual.widgets import Input, OptionList, Static, TextArea

from .pilot import settle

SMALL = (80, 24)


def showing(app: ClawbackApp) -> tuple[bool, bool]:
    """(sessions list shown, main pane shown)."""
    return app.query_one(SessionsPane).display, app.query_one("#main").display


async def test_on_a_small_terminal_the_list_and_the_transcript_take_turns(
    tui: ClawbackApp,
) -> None:
    async with tui.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert tui.narrow and showing(tui) == (True, False)
        assert tui.query_one(SessionsPane).region.width == 80  # the whole width, not 35 columns
        await pilot.press("down", "enter")  # open a session: the transcript takes the screen
        await settle(pilot)
        assert showing(tui) == (False, True)
        assert isinstance(tui.focused, MessageView)
        assert tui.query_one("#main").region.width == 80
        await pilot.press("f2")  # back to the list
        assert showing(tui) == (True, False)
        assert isinstance(tui.focused, SessionList)
        await pilot.press("ctrl+b")  # swaps back, and is not saved as a preference
        await settle(pilot)
        assert showing(tui) == (False, True)
        config = tui.store.paths.config
        saved = tomllib.loads(config.read_text()) if config.exists() else {}
        assert saved.get("ui", {}).get("show_sessions", True) is True
        await pilot.press("f2", "ctrl+f", *"sidebar")  # from the list, straight into search
        await settle(pilot)
        assert showing(tui) == (False, True)
        assert tui.query_one("#search-input", Input).value == "sidebar"
        assert tui.focused is tui.query_one("#search-input")
        await pilot.press("f2", "ctrl+n")  # a new chat from the list: straight to its input
        await settle(pilot)
        assert showing(tui) == (False, True)
        assert tui.focused is tui.query_one("#chat-input")


async def test_growing_the_terminal_brings_the_list_back_beside(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert showing(tui) == (False, True)
        await pilot.resize_terminal(NARROW + 40, 40)
        await settle(pilot)
        assert not tui.narrow and showing(tui) == (True, True)
        await pilot.resize_terminal(*SMALL)
        await settle(pilot)
        assert tui.narrow and showing(tui) == (False, True)  # focus was in the transcript


async def test_memory_editor_and_search_are_usable_at_80x24(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        editor = tui.query_one("#memory-editor", TextArea)
        assert editor.region.width >= 45
        name, meter = tui.query_one("#memory-name", Static), tui.query_one("#memory-meter")
        assert name.region.right <= meter.region.x  # the size meter never covers the name
        await pilot.press("ctrl+f", *"sidebar")
        await settle(pilot)
        results = tui.query_one("#search-results", OptionList)
        assert results.region.width >= 76
        first = str(results.get_option_at_index(0).prompt).split("\n")[0]
        # How strong, then source and date, then the title, which is what a narrow row cuts.
        strength, facts, title = first.split("  ", 2)
        assert strength.strip() in ("strong", "fair", "weak")
        assert "Claude Code" in facts and title.startswith("Textual layout bug")
