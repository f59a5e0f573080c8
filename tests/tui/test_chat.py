"""Chatting under the transcript, and the compaction pane, against the fake ``claude``: a reply
streams in and is stored, Escape keeps the partial reply, an error keeps what was typed, and a
Claude Code session is forked on its first message."""

from __future__ import annotations

import time
from typing import Any

from clawback.core.archive.sessions import list_sessions
from clawback.core.home import Home
from clawback.tui.app import ClawbackApp
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.widgets.chat_dock import ChatDock
from clawback.tui.widgets.chat_input import ChatInput
from clawback.tui.widgets.context_meter import ContextMeter
from clawback.tui.widgets.message_view import MessageView
from textual.pilot import Pilot
from textual.widgets import Static

from ..fake_claude.fixtures import FakeClaude, fake_claude_fixture  # noqa: F401  (fixture)
from .conftest import SIZE
from .pilot import settle, until

REPLY = "Zebracorns graze on **sidebar** meadows at dawn."


async def chat(tui: ClawbackApp, pilot: Pilot[Any], text: str) -> TranscriptPane:
    await settle(pilot)
    await pilot.press("ctrl+n")
    await settle(pilot)
    pane = tui.query_one(TranscriptPane)
    assert tui.focused is pane.query_one(ChatInput)
    await pilot.press(*text, "enter")
    return pane


def shown(pane: TranscriptPane) -> list[tuple[str, str]]:
    """(role, text) of every stored message on screen."""
    return [(v.message.role, v.message.text) for v in pane.query(MessageView)]


def bubbles(pane: TranscriptPane) -> list[str]:
    """The pending bubbles of a turn (what was sent, the reply streaming in)."""
    return [str(w.render()) for w in pane.query(".turn-sent, .turn-reply")]


async def test_a_turn_streams_into_the_transcript_and_is_stored(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("slow").reply(REPLY)
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "hello there")
        await until(pilot, lambda: "Zebracorns" in "".join(bubbles(pane)))  # streaming
        assert tui.query_one(ChatDock).busy and "hello there" in bubbles(pane)[0]
        await settle(pilot)
        dock = tui.query_one(ChatDock)
        assert dock.session_id is not None and not dock.busy
        assert pane.session is not None and pane.session.id == dock.session_id
        assert shown(pane) == [("user", "hello there"), ("assistant", REPLY)]
        assert bubbles(pane) == []  # the stored messages replaced them
        assert dock.query_one(ChatInput).text == ""
        stored = [m.text for m in tui.store.messages(dock.session_id)]
        assert stored == ["hello there", REPLY]
        assert tui.store.session(dock.session_id).source == "native"  # listed at once
        usage = dock.query_one("#chat-meter", ContextMeter).usage
        assert usage is not None and usage.tokens > 0

        await pilot.press(*"and again", "enter")  # the next turn continues the same session
        await settle(pilot)
        assert pane.session.id == dock.session_id
        assert [role for role, _ in shown(pane)] == ["user", "assistant"] * 2


async def test_escape_cancels_and_keeps_the_partial_reply(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("slow").reply("one two three four five six seven eight nine ten " * 4)
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "tell me slowly")
        dock = tui.query_one(ChatDock)
        await until(pilot, lambda: pane.window.reply_text.strip())
        assert dock.has_class("-busy")
        await pilot.press("escape")
        await settle(pilot)
        assert not dock.busy and dock.session_id is not None
        messages = tui.store.messages(dock.session_id)
        assert messages[-1].text.startswith("one two") and messages[-1].partial
        assert len(messages[-1].text) < len("one two three four five six seven eight nine ten " * 4)
        (reply,) = [v for v in pane.query(MessageView) if v.message.role == "assistant"]
        assert reply.message.partial and "cut short" in str(reply.query_one(".header").render())


async def test_an_engine_error_notifies_and_keeps_the_text(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("err429")
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "do not lose me")
        await settle(pilot)
        assert tui.query_one(ChatInput).text == "do not lose me"
        errors = [n for n in tui._notifications if n.severity == "error"]
        assert errors and "rate" in errors[-1].message.lower()
        (note,) = pane.query(".turn-reply")
        assert note.has_class("-failed") and "no reply" in str(note.render())


async def test_a_retry_after_a_failure_shows_and_stores_the_message_once(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("err429")
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "do not lose me")
        await settle(pilot)
        assert tui.query_one(ChatInput).text == "do not lose me"
        fake_claude.mode("success").reply("Kept.")
        await pilot.press("enter")  # the message is back in the input: send it again
        await settle(pilot)
        dock = tui.query_one(ChatDock)
        assert dock.session_id is not None
        stored = [m for m in tui.store.messages(dock.session_id) if m.role == "user"]
        assert [m.text for m in stored] == ["do not lose me"]
        assert [t for r, t in shown(pane) if r == "user"] == ["do not lose me"]
        assert not pane.query(".turn-reply.-failed")  # the failure's note went with the retry
        assert ("assistant", "Kept.") in shown(pane)
        assert fake_claude.last_call()["stdin"].count("do not lose me") == 1


async def test_quitting_while_a_reply_streams_keeps_the_partial_reply(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("slow").reply("one two three four five six seven eight nine ten " * 4)
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "tell me slowly")
        dock = tui.query_one(ChatDock)
        await until(pilot, lambda: pane.window.reply_text.strip())
        session_id = dock.session_id
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not tui.is_running or not dock.busy)
    assert tui.return_code == 0 and session_id is not None
    reopened = Home.open(tui.store.paths.home)
    try:
        from clawback.core.archive.sessions import session_messages

        messages = session_messages(reopened.db, session_id)
        assert messages[-1].role == "assistant" and messages[-1].partial
        assert messages[-1].text.startswith("one two")
    finally:
        reopened.close()


async def test_a_rate_limited_turn_says_it_is_retrying_and_escape_stops_it(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("err429").delay(5).set_env("FAKE_CLAUDE_RETRIES", "10")
    async with tui.run_test(size=SIZE) as pilot:
        await chat(tui, pilot, "are you there?")
        dock = tui.query_one(ChatDock)
        status = dock.query_one("#chat-status", Static)
        await until(pilot, lambda: "retrying" in str(status.render()))
        assert dock.has_class("-retrying") and "429" in str(status.render())
        started = time.monotonic()
        await pilot.press("escape")
        await until(pilot, lambda: not dock.busy)
        assert time.monotonic() - started < 3  # at once, not after claude's own retries
        assert tui.query_one(ChatInput).text == ""


async def test_chatting_from_a_claude_code_session_forks_it(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.reply("Forked and answering.")
    (parent,) = list_sessions(tui.store.home.db, source="claude-code", limit=1)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await tui.open_session(parent.id)
        await settle(pilot)
        pane = tui.query_one(TranscriptPane)
        assert not tui.query_one(ChatDock).display  # no input under an archived session...
        await pilot.press("r")  # ...until asked for
        dock = tui.query_one(ChatDock)
        assert dock.display and tui.focused is dock.query_one(ChatInput)
        assert dock.fork_from is not None and dock.fork_from.id == parent.id
        await pilot.press(*"what did we decide?", "enter")
        await settle(pilot)
        assert pane.session is not None and pane.session.source == "native"
        assert pane.session.id == dock.session_id != parent.id
        assert shown(pane) == [
            ("user", "what did we decide?"),
            ("assistant", "Forked and answering."),
        ]
        engine = tui.store.home.chat_engine()
        forked = engine.store.get(pane.session.id)
        assert forked is not None and forked.parent_id == parent.id
        sent = fake_claude.last_call()["stdin"]
        said = [
            m for m in tui.store.messages(parent.id) if m.conversational and m.role == "assistant"
        ]
        assert " ".join(said[-1].text.split()[:4]) in sent  # its context came from the parent


async def test_slash_completion_and_help(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        dock = tui.query_one(ChatDock)
        await pilot.press("/", "h", "e")
        assert dock.query_one("#chat-hint").display
        await pilot.press("tab")
        assert dock.query_one(ChatInput).text == "/help "
        await pilot.press("enter")
        hint = dock.query_one("#chat-hint", Static)
        listed = str(hint.render()).split("\n")  # a list that stays, not a passing toast
        assert hint.display and listed[0].startswith("/new") and len(listed) >= 7
        assert any(line.startswith("/compact") for line in listed)
        assert listed[0] == "/new [model] [text]: start a new session"  # not eaten as markup
        await pilot.press("/")
        assert len(str(hint.render()).split("\n")) == 7  # every command, one a line
        await pilot.press("tab")
        assert dock.query_one(ChatInput).text == "/new "
        await pilot.press("tab")  # again: the next command
        assert dock.query_one(ChatInput).text == "/reset "
        dock.query_one(ChatInput).clear()
        await pilot.press(*"/model haiku", "enter")
        assert dock.model == "haiku"


async def test_a_reply_with_brackets_streams_as_written(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    reply = "Close it with [/] and keep [WIP] and [bold]x[/bold] as typed."
    fake_claude.mode("slow").reply(reply)
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "[WIP] brackets [/] please")
        await until(pilot, lambda: "[WIP]" in "".join(bubbles(pane)[1:]))  # mid-stream
        await settle(pilot)
        assert ("assistant", reply) in shown(pane)
        assert ("user", "[WIP] brackets [/] please") in shown(pane)
        assert pane.border_title is not None and "[WIP]" in str(pane.border_title)
