"""The issue's "done means", end to end with keys: on the demo archive, find a phrase with live
search and open it, chat in that session (the fake ``claude``), flush and compact by hand, edit a
memory file, switch theme, and quit, with no error shown anywhere along the way."""

from __future__ import annotations

import tomllib
from datetime import date
from typing import Any

from clawback.core.memory.compaction import list_compactions
from clawback.tui.app import ClawbackApp
from clawback.tui.panes.memory import MemoryPane
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.screens.dialogs import ChoiceScreen
from clawback.tui.widgets.chat_input import ChatInput
from clawback.tui.widgets.message_view import MessageView
from textual.pilot import Pilot
from textual.widgets import TextArea

from ..fake_claude.fixtures import FakeClaude, fake_claude_fixture  # noqa: F401  (fixture)
from .conftest import SIZE
from .pilot import settle, until

NOTE = "- Alice keeps bees in the quince orchard."


async def confirm(tui: ClawbackApp, pilot: Pilot[Any]) -> str:
    """Accept the dialog that comes up (the flush's notes, the compaction's summary)."""
    await until(pilot, lambda: isinstance(tui.screen, ChoiceScreen))
    assert isinstance(tui.screen, ChoiceScreen)
    detail = tui.screen.detail
    await pilot.press("enter")
    await settle(pilot)
    return str(detail)


async def say(pilot: Pilot[Any], text: str) -> None:
    await pilot.press(*text, "enter")
    await settle(pilot)


async def test_a_new_users_first_session(tui: ClawbackApp, fake_claude: FakeClaude) -> None:
    fake_claude.reply(NOTE)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)

        # find a phrase with live search and open it at the message
        await pilot.press("ctrl+f", *"soft threshold")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        transcript = tui.query_one(TranscriptPane)
        assert transcript.session is not None and transcript.session.source == "native"
        session_id = transcript.session.id
        (hit,) = [v for v in transcript.query(MessageView) if v.has_class("-target")]
        assert tui.focused is hit

        # chat in it: three turns continue the session on screen
        await pilot.press("f7")
        assert isinstance(tui.focused, ChatInput)
        before = len(tui.store.messages(session_id))
        for text in ("who keeps bees?", "where?", "since when?"):
            await say(pilot, text)
        assert transcript.session.id == session_id
        assert len(tui.store.messages(session_id)) == before + 6

        # flush by hand: the notes reach today's memory file
        await pilot.press(*"/flush", "enter")  # the dialog waits for an answer: no settling
        assert NOTE in await confirm(tui, pilot)
        daily = tui.store.workspace.root / "memory" / f"{date.today().isoformat()}.md"
        assert NOTE in daily.read_text()

        # compact by hand: back in the transcript, the summary is shown before it is committed
        compactions = len(list_compactions(tui.store.home.db, session_id))
        await pilot.press("f3", "f7")
        await pilot.press(*"/compact", "enter")
        assert NOTE in await confirm(tui, pilot)
        assert len(list_compactions(tui.store.home.db, session_id)) == compactions + 1

        # edit a memory file and save it
        await pilot.press("f5")
        await settle(pilot)
        memory = tui.query_one(MemoryPane)
        editor = memory.query_one(TextArea)
        editor.move_cursor(editor.document.end)
        await pilot.press(*"\nQuince orchard: north field.")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert memory.current is not None
        saved = memory.current.path.read_text()
        assert saved.endswith("Quince orchard: north field.")

        # switch theme from the palette
        await pilot.press("ctrl+p", *"theme")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press(*"clawback-light", "enter")
        await settle(pilot)
        assert tui.theme == "clawback-light"

        errors = [n.message for n in tui._notifications if n.severity == "error"]
        assert errors == []
        await pilot.press("ctrl+q")
    assert tui.return_code == 0
    config = tomllib.loads(tui.store.paths.config.read_text())
    assert config["ui"]["theme"] == "clawback-light"
