"""Live updates from the file watcher, and the first run on an empty home."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from clawback.core.demo import demo_data
from clawback.core.home import Home
from clawback.core.search.engine import SearchFilters
from clawback.tui.app import make_app
from clawback.tui.panes.sessions import SessionList
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.screens.dialogs import ChoiceScreen
from clawback.tui.widgets.message_view import MessageView

from .conftest import SIZE
from .pilot import settle, wait_until


def native_line(text: str, n: int) -> str:
    return (
        json.dumps(
            {
                "type": "message",
                "id": f"live-{n}",
                "role": "assistant",
                "content": text,
                "timestamp": f"2026-11-21T21:00:{n:02d}.000Z",
                "model": "claude-sonnet-4-5",
            }
        )
        + "\n"
    )


async def test_an_open_transcript_follows_new_entries(demo_home: Home) -> None:
    transcript_file = next(demo_home.paths.sessions.glob("*.jsonl"))
    app = make_app(demo_home)  # with the watcher
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(TranscriptPane)
        assert pane.session is not None and pane.session.title == "memory design"

        await wait_until(pilot, app.watching.is_set)  # watching, and caught up
        with transcript_file.open("a") as handle:
            handle.write(native_line("Live reply", 1))
        await wait_until(
            pilot, lambda: any("Live reply" in v.message.text for v in app.query(MessageView))
        )
        await settle(pilot)
        assert pane.session.message_count > 4  # the header counts the new message too


def empty_home_with_sources(tmp_path: Path) -> tuple[Home, Path]:
    """A new home, nothing indexed, whose Claude Code source holds the demo's transcripts."""
    sources = tmp_path / "claude-projects"
    shutil.copytree(demo_data() / "claude-code", sources)
    home = Home.open(tmp_path / "home")
    home.config.sources.claude_code_path = str(sources)
    home.config.sources.openclaw_path = str(tmp_path / "none")
    return home, sources


async def test_first_run_offers_to_ingest_and_shows_the_sessions(tmp_path: Path) -> None:
    home, sources = empty_home_with_sources(tmp_path)
    app = make_app(home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChoiceScreen)
        assert str(sources) in app.screen.detail
        await pilot.press("enter")  # "Index now" is the default
        await settle(pilot)
        assert app.query_one(SessionList).option_count == 3
        assert any("Indexed" in n.message for n in app._notifications)
    home.close()


async def test_live_updates_leave_the_first_run_question_to_the_user(tmp_path: Path) -> None:
    home, _ = empty_home_with_sources(tmp_path)
    app = make_app(home, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.watching.is_set)
        await settle(pilot)
        assert isinstance(app.screen, ChoiceScreen)
        assert home.db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
        await pilot.press("escape")  # "Not now"
        await settle(pilot)
        assert app.query_one(SessionList).option_count == 0
    home.close()


async def test_an_index_deleted_under_the_app_is_reopened_and_filled(demo_home: Home) -> None:
    """Issue 19 item 7: the app noticed nothing and went on with the deleted file."""
    transcript_file = next(demo_home.paths.sessions.glob("*.jsonl"))
    app = make_app(demo_home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_until(pilot, app.watching.is_set)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{demo_home.paths.database}{suffix}").unlink(missing_ok=True)
        with transcript_file.open("a") as handle:
            handle.write(native_line("After the index went", 2))

        def indexed() -> bool:
            found = app.store.search("went", SearchFilters(), limit=10).hits
            return any("index" in hit.snippet for hit in found)

        await wait_until(pilot, indexed)
        assert demo_home.paths.database.exists()
        sessions = demo_home.db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        assert sessions > 1  # every source read again, not only the new line
