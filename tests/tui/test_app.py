"""App-wide keys, the help screen, the command palette, themes and failure notifications."""

from __future__ import annotations

import tomllib

from clawback.core.home import Home
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.panes.search import SearchPane
from clawback.tui.panes.sessions import SessionsPane
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.screens.help import HelpScreen
from textual.command import CommandPalette
from textual.widgets import ContentSwitcher, Input

from .conftest import SIZE
from .pilot import settle


async def test_ctrl_f_from_a_focused_input_then_ctrl_q_exits_zero(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session_filter = tui.query_one("#session-filter", Input)
        session_filter.focus()
        await pilot.press("ctrl+f")
        assert tui.focused is tui.query_one(SearchPane).query_one("#search-input")
        assert session_filter.value == ""
        await pilot.press("ctrl+q")  # from inside the search input, too
        await pilot.pause()
    assert tui.return_code == 0


async def test_pane_keys_help_and_new_chat(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        assert tui.query_one("#main", ContentSwitcher).current == "memory"
        await pilot.press("f2")
        assert tui.focused is not None and tui.focused.parent is tui.query_one(SessionsPane)
        await pilot.press("f3")
        assert tui.query_one("#main", ContentSwitcher).current == "transcript"
        await pilot.press("ctrl+n")
        assert tui.query_one("#main", ContentSwitcher).current == "transcript"
        assert tui.focused is tui.query_one("#chat-input")
        assert tui.query_one(TranscriptPane).session is None  # a fresh chat
        await pilot.press("f6")
        assert tui.query_one("#main", ContentSwitcher).current == "compaction"
        await pilot.press("f7")
        assert tui.query_one("#main", ContentSwitcher).current == "transcript"
        assert tui.focused is tui.query_one("#chat-input")
        await pilot.press("f1")
        assert isinstance(tui.screen, HelpScreen)
        listed = {title: {what: keys for keys, what in rows} for title, rows in tui.screen.sections}
        assert listed["Everywhere"]["Search"] == "^f, /, f4"  # was "^f / / / f4"
        assert listed["Everywhere"]["Quit"] == "^q"
        assert listed["Memory"]["Save"] == "^s"
        transcript = [keys for title, rows in tui.screen.sections if title == "Transcript"
                      for keys, _ in rows]  # fmt: skip
        assert sum("⏎" in keys for keys in transcript) == 1  # Enter listed once
        await pilot.press("escape")
        assert not isinstance(tui.screen, HelpScreen)


async def test_every_action_is_in_the_command_palette(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # open the first session, so its commands are offered
        await settle(pilot)
        titles = {command.title for command in tui.get_system_commands(tui.screen)}
        for expected in (
            "Search",
            "Go to sessions",
            "Go to memory",
            "New chat session",
            "Go to chat",
            "Go to compaction",
            "Flush memory now",
            "Compact now",
            "Edit a knowledge fact",
            "Show or hide the sessions list",
            "Sessions of a project",
            "Chat in this session",
            "Help: keys",
            "Ingest sources",
            "Export session to markdown",
            "Toggle sub-agent messages",
            "Copy message",
            "New daily note",
            "Theme",
            "Quit",
        ):
            assert expected in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(tui.screen, CommandPalette)


async def test_theme_switch_from_the_palette_persists(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert tui.theme == "clawback-dark"
        await pilot.press("ctrl+p", *"theme")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press(*"dusk")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert tui.theme == "clawback-dusk"
    config = tomllib.loads(tui.store.paths.config.read_text())
    assert config["ui"]["theme"] == "clawback-dusk"


async def test_a_broken_theme_falls_back_with_a_notification(demo_home: Home) -> None:
    themes = demo_home.paths.home / "themes"
    themes.mkdir()
    (themes / "broken.toml").write_text('name = "broken"\n[colors]\nprimary = "not-a-colour"\n')
    demo_home.config.ui.theme = "broken"
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "clawback-dark"
        messages = " ".join(n.message for n in app._notifications)
        assert "broken.toml" in messages and "not a colour" in messages
        assert "'broken' is unavailable" in messages
    config = tomllib.loads(app.store.paths.config.read_text())
    assert "theme" not in config.get("ui", {})  # falling back never overwrites the choice


async def test_a_failing_worker_becomes_a_notification(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tui.query_one(TranscriptPane).open("no-such-session")
        await settle(pilot)
        errors = [n for n in tui._notifications if n.severity == "error"]
        assert errors and "no session 'no-such-session'" in errors[-1].message
        assert "NotFoundError" not in errors[-1].message  # a user-facing error reads as one


async def test_hiding_the_sessions_list_is_remembered(demo_home: Home) -> None:
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+b")
        await settle(pilot)
        assert not tui.query_one(SessionsPane).display
        assert tui.focused is not None and not tui.query_one(SessionsPane).has_focus_within
    saved = tomllib.loads(demo_home.paths.config.read_text("utf-8"))
    assert saved["ui"]["show_sessions"] is False

    again = make_app(demo_home, watch=False)  # the next start opens without it...
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not again.query_one(SessionsPane).display
        await pilot.press("f2")  # ...until asked for
        assert again.query_one(SessionsPane).display


async def test_pane_keys_wait_while_a_dialog_is_open(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        assert isinstance(tui.screen, HelpScreen)
        main = tui.query_one("#main", ContentSwitcher)
        for key in ("f5", "ctrl+f", "f6", "ctrl+n"):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(tui.screen, HelpScreen)
            assert main.current == "transcript", key  # nothing moved underneath
        await pilot.press("ctrl+q")
    assert tui.return_code == 0
