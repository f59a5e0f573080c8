"""The chat and compaction panes against the fake ``claude``: a reply streams in and is stored,
Escape keeps the partial reply, an error keeps what was typed, flush and compaction are
confirmed before anything is written."""

from __future__ import annotations

import time

from clawback.core.compaction import list_compactions
from clawback.core.context import Clawback
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.panes.chat import ChatPane
from clawback.tui.panes.compaction import CompactionPane, LedgerRow
from clawback.tui.screens.dialogs import ChoiceScreen
from clawback.tui.widgets.chat_input import ChatInput
from textual.pilot import Pilot

from ..fake_claude.fixtures import FakeClaude, fake_claude_fixture  # noqa: F401  (fixture)
from ..test_flush import seed
from .conftest import SIZE
from .pilot import settle

REPLY = "Zebracorns graze on **sidebar** meadows at dawn."


async def chat(tui: ClawbackApp, pilot: Pilot[object], text: str) -> ChatPane:
    await settle(pilot)
    await pilot.press("ctrl+n")
    await settle(pilot)
    pane = tui.query_one(ChatPane)
    assert tui.focused is pane.query_one(ChatInput)
    await pilot.press(*text, "enter")
    return pane


async def until(pilot: Pilot[object], condition, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    """Poll while a worker is still running (``settle`` would wait for it to end)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await pilot.pause(0.02)


async def test_a_turn_streams_and_is_stored(tui: ClawbackApp, fake_claude: FakeClaude) -> None:
    fake_claude.reply(REPLY)
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "hello there")
        await settle(pilot)
        assert pane.session_id is not None and not pane.busy
        assert "Zebracorns graze" in str(pane.query_one(".chat-reply").render())
        assert pane.query_one(ChatInput).text == ""
        stored = [m.text for m in tui.store.messages(pane.session_id)]
        assert "hello there" in stored[0] and REPLY in stored[-1]
        assert tui.store.session(pane.session_id).source == "native"  # listed at once
        assert pane.query_one("#chat-meter").usage.tokens > 0  # type: ignore[attr-defined]


async def test_escape_cancels_and_keeps_the_partial_reply(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("slow").reply("one two three four five six seven eight nine ten " * 4)
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "tell me slowly")
        await until(pilot, lambda: pane._reply_text.strip())
        assert pane.has_class("-busy")
        await pilot.press("escape")
        await settle(pilot)
        reply = pane.query_one(".chat-reply")
        assert reply.has_class("-partial") and not pane.busy
        assert "partial" in str(reply.render())
        assert pane.session_id is not None
        messages = tui.store.messages(pane.session_id)
        assert messages[-1].text.startswith("one two")
        assert len(messages[-1].text) < len("one two three four five six seven eight nine ten " * 4)


async def test_an_engine_error_notifies_and_keeps_the_text(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("err429")
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "do not lose me")
        await settle(pilot)
        assert pane.query_one(ChatInput).text == "do not lose me"
        errors = [n for n in tui._notifications if n.severity == "error"]
        assert errors and "rate" in errors[-1].message.lower()


async def test_slash_completion_and_help(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        pane = tui.query_one(ChatPane)
        await pilot.press("/", "h", "e")
        assert pane.query_one("#chat-hint").display
        await pilot.press("tab")
        assert pane.query_one(ChatInput).text == "/help "
        await pilot.press("enter")
        assert any("/compact" in n.message for n in tui._notifications)
        await pilot.press(*"/model haiku", "enter")
        assert pane.model == "haiku"


async def wait_for_dialog(tui: ClawbackApp, pilot: Pilot[object]) -> ChoiceScreen:
    await until(pilot, lambda: isinstance(tui.screen, ChoiceScreen))
    assert isinstance(tui.screen, ChoiceScreen)
    return tui.screen


async def test_flush_accept_writes_the_memory_file(demo_app: Clawback, fake_claude) -> None:  # type: ignore[no-untyped-def]
    session = seed(demo_app.chat_engine(), 4)
    fake_claude.reply("- Alice keeps bees in the xylophonic greenhouse.")
    tui = make_app(demo_app, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await tui.action_show_compaction(session.id)
        await settle(pilot)
        await pilot.press("f")
        dialog = await wait_for_dialog(tui, pilot)
        assert "xylophonic" in dialog.detail and "+" in dialog.detail  # notes and the diff
        await pilot.press("enter")
        await settle(pilot)
        files = list((tui.store.workspace.root / "memory").glob("*.md"))
        assert any("xylophonic greenhouse" in f.read_text() for f in files)


async def test_compact_confirm_adds_a_ledger_row(demo_app: Clawback, fake_claude) -> None:  # type: ignore[no-untyped-def]
    session = seed(demo_app.chat_engine(), 10)
    fake_claude.reply("Alice plans a greenhouse; decided: three beds.")
    tui = make_app(demo_app, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await tui.action_show_compaction(session.id)
        await settle(pilot)
        pane = tui.query_one(CompactionPane)
        await pilot.press("c")
        dialog = await wait_for_dialog(tui, pilot)
        assert "three beds" in dialog.detail
        await pilot.press("enter")
        await settle(pilot)
        (row,) = list_compactions(demo_app.db, session.id)
        assert row.messages_removed == 4
        (shown,) = pane.query(LedgerRow)
        assert shown.record.id == row.id
        shown.collapsed = False
        await settle(pilot)
        assert "message 0 about the garden" in str(shown.query_one(".ledger-messages").render())
