"""Browsing: the session list, its source and project filters (saved to config.toml),
opening a transcript, folds, sub-agents, export, paging."""

from __future__ import annotations

import sqlite3
import tomllib
from pathlib import Path
from typing import Any

from clawback.core.config import update_setting
from clawback.core.home import Home
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.panes.sessions import PAGE, SessionList, SessionsPane
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.screens.dialogs import PromptScreen
from clawback.tui.widgets.message_view import MessageView
from clawback.tui.widgets.message_window import PAGE as TRANSCRIPT_PAGE
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Select, Static

from .conftest import SIZE
from .pilot import every_notification, settle


def titles(app: ClawbackApp) -> list[str]:
    listing = app.query_one(SessionList)
    return [str(option.prompt).split("\n")[0] for option in listing.options]


async def test_select_a_session_and_see_its_messages(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert titles(tui)[0] == "memory design"  # newest first
        index = titles(tui).index("Textual layout bug in the sidebar")
        for _ in range(index):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        transcript = tui.query_one(TranscriptPane)
        assert transcript.session is not None
        assert transcript.session.title == "Textual layout bug in the sidebar"
        views = list(tui.query(MessageView))
        texts = [v.message.text for v in views]
        assert any("min-width: 0" in t for t in texts)
        assert isinstance(tui.focused, MessageView)  # Enter moves focus into the transcript
        tool_calls = [v for v in views if v.message.kind == "tool_use"]
        assert tool_calls and all(v.folded and not v.expanded for v in tool_calls)

        fold = tool_calls[0]  # folded behind one line; Enter expands it
        fold.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert fold.expanded and fold.query(".body")
        await pilot.press("enter")
        assert not fold.expanded


async def test_filter_box_narrows_the_list(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        assert isinstance(tui.focused, Input)
        await pilot.press(*"deploy")
        await settle(pilot)  # its title, and the weekly review that says "deploy pipeline"
        assert titles(tui) == ["Weekly review", "Deploy pipeline for the website"]
        await pilot.press("escape")
        await settle(pilot)
        assert len(titles(tui)) == 6
        await pilot.press("f", *"zzzqqq")  # nothing listed: nothing in the transcript either
        await settle(pilot)
        transcript = tui.query_one(TranscriptPane)
        assert titles(tui) == [] and transcript.session is None
        assert transcript.has_class("-empty")
        assert str(transcript.border_title) == transcript.TITLE  # not the hidden session's
        await pilot.press("escape")
        await settle(pilot)
        assert transcript.session is not None  # the list's first row again
        await pilot.press("f", *"project:claw search")  # project: narrows by folder
        await settle(pilot)
        assert titles(tui) == ["Choosing the search index"]


CLAWBACK = "/home/demo/projects/clawback"
CLAWBACK_TITLES = ["Textual layout bug in the sidebar", "Choosing the search index"]


def details(app: ClawbackApp) -> list[str]:
    return [str(o.prompt).split("\n")[1] for o in app.query_one(SessionList).options]


async def choose_project(app: ClawbackApp, pilot: Pilot[Any], label: str) -> None:
    """Open the project picker with its key and pick ``label`` with the cursor keys."""
    await pilot.press("p")
    await settle(pilot)
    select = app.query_one("#session-project", Select)
    assert select.expanded
    labels = [str(prompt) for prompt, _ in select._options]
    overlay = select.query_one(OptionList)  # opens on the current choice
    assert overlay.highlighted is not None
    steps = labels.index(label) - overlay.highlighted
    await pilot.press(*["down" if steps > 0 else "up"] * abs(steps), "enter")
    await settle(pilot)


async def test_choosing_a_project_narrows_the_list_and_is_kept(demo_home: Home) -> None:
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(titles(app)) == 6
        assert details(app)[titles(app).index("Deploy pipeline for the website")].endswith(
            "· website"
        )  # every row names its project
        select = app.query_one("#session-project", Select)
        assert [str(prompt) for prompt, _ in select._options] == [
            "All projects",
            "demo (2)",
            "website (1)",
            "clawback (2)",
        ]
        await choose_project(app, pilot, "clawback (2)")
        assert titles(app) == CLAWBACK_TITLES
        assert all(line.endswith("· clawback") for line in details(app))
        assert isinstance(app.focused, SessionList)  # back to browsing the narrowed list
        status = str(app.query_one("#sessions-status", Static).render())
        assert status == "2 sessions · only clawback"  # a filter is never silent
        shown = app.query_one(TranscriptPane).session  # the transcript follows the list
        assert shown is not None and shown.title == CLAWBACK_TITLES[0]
        await pilot.press("s", "s")  # All sources -> clawback -> Claude Code
        await settle(pilot)
        assert titles(app) == CLAWBACK_TITLES
    saved = tomllib.loads(demo_home.paths.config.read_text())["ui"]
    assert saved == {"sessions_project": CLAWBACK, "sessions_source": "claude-code"}

    reopened = Home.open(demo_home.paths.home)
    again = make_app(reopened, watch=False)
    try:
        async with again.run_test(size=SIZE) as pilot:
            await settle(pilot)
            pane = again.query_one(SessionsPane)
            assert (pane.source, pane.project) == ("claude-code", CLAWBACK)
            assert titles(again) == CLAWBACK_TITLES
            assert again.query_one("#session-project", Select).value == CLAWBACK
            assert again.query_one("#session-source", Select).value == "claude-code"
            await choose_project(again, pilot, "All projects")
            assert len(titles(again)) == 3  # every Claude Code session
    finally:
        reopened.close()
    assert "sessions_project" not in tomllib.loads(demo_home.paths.config.read_text())["ui"]


async def test_new_sessions_update_the_project_counts(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        with sqlite3.connect(tui.store.paths.database) as conn:
            conn.execute(
                "INSERT INTO sessions (id, source, title, cwd, updated_at, entry_count)"
                " VALUES ('fresh', 'claude-code', 'A fresh idea', '/srv/lab', '2030-01-01', 1)"
            )
        tui.query_one(SessionsPane).archive_changed()  # as the watcher does after an ingest
        await settle(pilot)
        assert titles(tui)[0] == "A fresh idea"
        labels = [str(prompt) for prompt, _ in tui.query_one("#session-project", Select)._options]
        assert labels[:2] == ["All projects", "lab (1)"]


async def test_a_saved_project_that_is_gone_falls_back_to_all(demo_home: Home) -> None:
    update_setting(demo_home.paths, "ui.sessions_project", "/home/demo/projects/retired")
    reopened = Home.open(demo_home.paths.home)
    app = make_app(reopened, watch=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert len(titles(app)) == 6
            assert app.query_one(SessionsPane).project is None
            assert app.query_one("#session-project", Select).value == ""
            (notice,) = [n.message for n in app._notifications]
            assert "/home/demo/projects/retired" in notice and "all projects" in notice
    finally:
        reopened.close()
    saved = tomllib.loads(demo_home.paths.config.read_text())["ui"]
    assert saved["sessions_project"] == "/home/demo/projects/retired"  # the choice is kept


async def test_a_broken_config_file_is_reported_once(tui: ClawbackApp) -> None:
    notified = every_notification(tui)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tui.store.paths.config.write_text("[ui\n")  # broken by hand while the app runs
        await choose_project(tui, pilot, "website (1)")
        assert titles(tui) == ["Deploy pipeline for the website"]  # the choice still applies
        await choose_project(tui, pilot, "demo (2)")
        errors = [n for n in notified if n.severity == "error"]
        assert len(errors) == 1
        assert "invalid TOML" in errors[0].message and "config.toml" in errors[0].message
    assert tui.store.paths.config.read_text() == "[ui\n"


async def test_sidechains_toggle_and_export(tui: ClawbackApp, tmp_path: Path) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sid = session_id(tui, "Choosing the search index")
        tui.query_one(SessionsPane).post_message(SessionsPane.SessionChosen(sid, True))
        await settle(pilot)
        transcript = tui.query_one(TranscriptPane)
        hidden = [m for m in transcript._messages if m.sidechain]
        assert hidden, "the demo session has a sub-agent"
        assert not any(v.message.sidechain for v in tui.query(MessageView))
        await pilot.press("a")
        await settle(pilot)
        assert any(v.message.sidechain for v in tui.query(MessageView))

        await pilot.press("e")
        await pilot.pause()
        assert isinstance(tui.screen, PromptScreen)
        offered = Path(tui.screen.query_one(Input).value)  # the documented exports folder
        assert offered.parent == tui.store.paths.home / "exports"
        await pilot.press("enter")
        await settle(pilot)
        assert offered.read_text().startswith("# Choosing the search index")
        assert any(str(offered) in n.message for n in tui._notifications)  # says where
        await pilot.press("e")
        await pilot.pause()
        target = tmp_path / "elsewhere" / "export.md"
        tui.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert target.read_text().startswith("# Choosing the search index")


async def test_list_pages_in_lazily(demo_home: Home) -> None:
    many = PAGE * 2 + 50
    with sqlite3.connect(demo_home.paths.database) as conn:
        conn.executemany(
            "INSERT INTO sessions (id, source, title, updated_at, message_count, entry_count)"
            " VALUES (?, 'native', ?, ?, 1, 1)",
            [
                (f"bulk-{i:05d}", f"Bulk session {i}", f"2020-01-01T00:00:{i % 60:02d}.000Z")
                for i in range(many)
            ],
        )
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listing = app.query_one(SessionList)
        assert listing.option_count == PAGE  # only the first page is built
        await pilot.press("end")
        await settle(pilot)
        assert listing.option_count > PAGE
        for _ in range(3):
            await pilot.press("end")
            await settle(pilot)
        assert listing.option_count == many + 6


def session_id(app: ClawbackApp, title_start: str) -> str:
    listing = app.query_one(SessionList)
    for option in listing.options:
        if str(option.prompt).startswith(title_start):
            assert option.id is not None
            return option.id
    raise AssertionError(f"no session titled {title_start!r}")


async def test_a_long_session_renders_a_window_at_a_time(demo_home: Home) -> None:
    total = 200
    with sqlite3.connect(demo_home.paths.database) as conn:
        conn.execute(
            "INSERT INTO files (source, file_key, path, session_id) VALUES"
            " ('native', 'long.jsonl', '/gone/long.jsonl', 'long')"
        )
        file_id = conn.execute("SELECT id FROM files WHERE file_key = 'long.jsonl'").fetchone()[0]
        conn.execute(
            "INSERT INTO sessions (id, source, title, updated_at, message_count, entry_count)"
            " VALUES ('long', 'native', 'A long session', '2030-01-01T00:00:00.000Z', ?, ?)",
            (total, total),
        )
        conn.executemany(
            "INSERT INTO entries (file_id, session_id, line, role, kind, ts, conversational, text)"
            " VALUES (?, 'long', ?, ?, 'text', ?, 1, ?)",
            [
                (
                    file_id,
                    i + 1,
                    ("user", "assistant")[i % 2],
                    f"2029-12-31T{i // 60 % 24:02d}:{i % 60:02d}:00.000Z",
                    f"Message number {i}",
                )
                for i in range(total)
            ],
        )
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # the newest session is the long one
        await settle(pilot)
        transcript = app.query_one(TranscriptPane)
        assert transcript.session is not None and transcript.session.id == "long"
        assert len(app.query(MessageView)) == TRANSCRIPT_PAGE  # a window, not 600 widgets
        await pilot.press("G")  # the end: a window around the last message
        await settle(pilot)
        views = list(app.query(MessageView))
        assert views[-1].message.text == f"Message number {total - 1}"
        assert len(views) == TRANSCRIPT_PAGE and app.query_one("#load-earlier")
        views[0].focus()
        await pilot.press("k")  # above the window: mounts the earlier page
        await settle(pilot)
        assert len(app.query(MessageView)) == 2 * TRANSCRIPT_PAGE
