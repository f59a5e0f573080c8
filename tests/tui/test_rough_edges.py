"""Issue 22's rough edges in the app: what a person met at 80x24 and in the panes' keys."""

from __future__ import annotations

from typing import Any

from clawback.tui.app import ClawbackApp
from clawback.tui.panes.memory import MemoryPane
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.widgets.footer import PaneFooter
from clawback.tui.widgets.message_view import MessageView
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import Static, TextArea
from textual.widgets._footer import FooterKey

from .pilot import settle, until
from .test_browse import titles

SMALL = (80, 24)


def footer_keys(app: ClawbackApp) -> dict[str, str]:
    """The keys the footer shows, and each one's description; every one inside the screen."""
    shown = {}
    for key in app.query_one(PaneFooter).query(FooterKey):
        if key.display:
            assert key.region.right <= SMALL[0], f"{key.key_display} is cut off"
            shown[key.key_display] = key.description
    return shown


def pane_keys(app: ClawbackApp) -> set[str]:
    """What the footer must show: the shown bindings of the focused widget and its panes."""
    wanted = set()
    for node in app.focused.ancestors_with_self if app.focused else []:
        for binding in getattr(node, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.show and node is not app:
                if node.check_action(binding.action, ()) is False:
                    continue
                first = Binding(binding.key.split(",")[0], binding.action)
                wanted.add(binding.key_display or app.get_key_display(first))
    return wanted


async def check_footer(app: ClawbackApp, pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.pause()
    shown = footer_keys(app)
    missing = pane_keys(app) - set(shown)
    assert not missing, f"{missing} not in the footer: {shown}"
    assert shown.get("f1") == "Help" and shown.get("^q") == "Quit"


async def test_every_key_a_pane_needs_is_in_the_footer_at_80_columns(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SMALL) as pilot:
        await check_footer(tui, pilot)  # the sessions list
        await pilot.press("enter")
        await settle(pilot)
        transcript = tui.query_one(TranscriptPane)
        folded = [view for view in transcript.query(MessageView) if view.folded]
        assert folded
        folded[0].focus()
        await check_footer(tui, pilot)
        assert footer_keys(tui)["⏎"] == "Unfold" and footer_keys(tui)["j/k"] == "Move"
        plain = next(view for view in transcript.query(MessageView) if not view.folded)
        plain.focus()
        await check_footer(tui, pilot)
        assert "⏎" not in footer_keys(tui)  # nothing to unfold there
        for key in ("f5", "f6", "ctrl+f"):
            await pilot.press(key)
            await check_footer(tui, pilot)


async def test_enter_in_the_sessions_filter_opens_the_session(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f", *"website", "enter")  # at once: before the list has caught up
        await settle(pilot)
        assert titles(tui) == ["Deploy pipeline for the website"]
        transcript = tui.query_one(TranscriptPane)
        assert transcript.session is not None
        assert transcript.session.title == "Deploy pipeline for the website"
        assert transcript.has_focus_within  # opened, not only previewed


async def test_memory_editor_ctrl_end_and_broken_links(tui: ClawbackApp) -> None:
    workspace = tui.store.workspace.root
    text = "# Memory\n\n" + "".join(f"- fact {i}\n" for i in range(200)) + "the last line"
    (workspace / "MEMORY.md").write_text(text + "\nsee [the plan](memory/nowhere.md)\n")
    async with tui.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        pane = tui.query_one(MemoryPane)
        editor = pane.query_one(TextArea)
        editor.focus()
        await pilot.press("ctrl+end")
        assert editor.cursor_location == editor.document.end
        await pilot.press("ctrl+home")
        assert editor.cursor_location == (0, 0)
        links = pane.query_one("#memory-links", Static)
        await until(pilot, lambda: links.display)
        assert "a broken link" in str(links.render())
        assert "memory/nowhere.md" in str(links.tooltip)
        await pilot.press("ctrl+end", "backspace", *"x")  # still there while typing
        editor.text = editor.text.replace("memory/nowhere.md", "MEMORY.md")
        await until(pilot, lambda: not links.display)  # fixed: the flag goes


async def test_the_search_filters_and_a_hits_score_fit_in_80_columns(tui: ClawbackApp) -> None:
    """Issue 22: the filter row ended in "▐X▌ This" and a hit's score was cut off."""
    from clawback.core.search.strength import TIERS
    from clawback.tui.panes.search import SearchPane
    from textual.widgets import Checkbox, OptionList

    async with tui.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"sidebar")
        await settle(pilot)
        pane = tui.query_one(SearchPane)
        checkbox = pane.query_one("#search-this-session", Checkbox)
        assert checkbox.region.right <= pane.content_region.right
        assert checkbox.region.width >= len("▐X▌ This session")
        results = pane.query_one("#search-results", OptionList)
        await until(pilot, lambda: results.option_count > 0)
        first = str(results.get_option_at_index(0).prompt).split("\n")[0]
        assert first.split()[0] in TIERS  # how strong it is leads the line
