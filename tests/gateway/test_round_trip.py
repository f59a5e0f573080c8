"""The gateway end to end: the real python-telegram-bot polling the stand-in, turns through the
chat engine with the fake ``claude``: DMs, strangers and pairing, duplicates, commands."""

from __future__ import annotations

import asyncio
import json

import pytest
from clawback.core.archive.sessions import list_sessions, session_messages
from clawback.core.errors import ConfigError
from clawback.core.gateway.access import PairingCodes
from clawback.core.home import Home
from clawback.core.search.engine import search

from tests.fake_claude.fixtures import FakeClaude

from .conftest import ALICE, folder_of, run_gateway, settings
from .telegram_standin import TelegramStandin


async def test_a_dm_is_answered_and_stored_as_an_ordinary_session(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    fake_claude.reply("Your **tomatoes** were Black Krim.")
    async with run_gateway(home, standin) as running:
        standin.push("which tomatoes did I plant?", chat_id=ALICE, user_id=ALICE)
        texts = await running.settle(1)
    assert texts == ["Your <b>tomatoes</b> were Black Krim."]
    assert standin.sent[0].parse_mode == "HTML"
    assert (ALICE, "typing") in standin.actions
    # an ordinary clawback chat session: in the list, its messages indexed and searchable
    sessions = [s for s in list_sessions(home.db) if s.key == "agent:main:main"]
    assert len(sessions) == 1
    roles = [(m.role, m.text) for m in session_messages(home.db, sessions[0].id)]
    assert ("user", "which tomatoes did I plant?") in roles
    assert ("assistant", "Your **tomatoes** were Black Krim.") in roles
    assert search(home.db, "tomatoes plant").hits
    # the offset moved past the update and the inbox holds nothing open
    state = json.loads((folder_of(home) / "state.json").read_text())
    assert state["offset"] == standin._next_id + 1
    assert running.gateway.inbox.pending() == []


async def test_per_peer_dms_get_a_session_each(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    config = settings(dm_scope="per-peer", allow=["42", "@bob"])
    async with run_gateway(home, standin, config) as running:
        standin.push("hello from alice", chat_id=42, user_id=42)
        standin.push("hello from bob", chat_id=77, user_id=77, username="Bob")
        await running.settle(2)
    keys = {s.key for s in list_sessions(home.db)}
    assert {"agent:main:telegram:dm:42", "agent:main:telegram:dm:77"} <= keys


async def test_a_stranger_is_refused_once_an_hour_and_never_runs_a_turn(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    async with run_gateway(home, standin) as running:
        for n in range(3):
            standin.push(f"let me in {n}", chat_id=99, user_id=99, username="mallory")
        await running.settle(1)
        await asyncio.sleep(0.3)
    assert len(standin.texts(99)) == 1
    assert "private" in standin.texts(99)[0]
    assert fake_claude.calls() == []
    assert list_sessions(home.db) == []
    # one pairing code, printed on the gateway's terminal, never sent to the stranger
    pending = PairingCodes(folder_of(home) / "pairing.json").pending()
    assert len(pending) == 1 and pending[0].user_id == 99
    assert any(pending[0].code in line for line in running.said)
    assert not any(pending[0].code in text for text in standin.texts())


async def test_a_duplicate_update_is_answered_once(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    async with run_gateway(home, standin) as running:
        standin.push("only once please", chat_id=ALICE, user_id=ALICE)
        await running.settle(1)
        standin.repeat_next = 1  # Telegram delivers the same update again
        standin.push("and a second one", chat_id=ALICE, user_id=ALICE)
        await running.settle(2)
        await asyncio.sleep(0.3)
        assert running.gateway.status.status.duplicates == 1
    assert len(standin.texts(ALICE)) == 2
    assert len(fake_claude.calls()) == 2


async def test_new_starts_a_new_session_and_help_and_unknown_commands_answer(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    async with run_gateway(home, standin) as running:
        standin.push("first message", chat_id=ALICE, user_id=ALICE)
        await running.settle(1)
        standin.push("/new", chat_id=ALICE, user_id=ALICE)
        await running.settle(2)
        standin.push("second message", chat_id=ALICE, user_id=ALICE)
        await running.settle(3)
        standin.push("/help", chat_id=ALICE, user_id=ALICE)
        standin.push("/frobnicate", chat_id=ALICE, user_id=ALICE)
        texts = await running.settle(5)
    assert texts[1].startswith("Started a new session")
    assert "/stop" in texts[3]
    assert "Unknown command /frobnicate" in texts[4]
    sessions = [s for s in list_sessions(home.db) if s.key == "agent:main:main"]
    assert len(sessions) == 2


async def test_a_claude_failure_is_one_short_line_and_the_next_message_works(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("nokey")
    async with run_gateway(home, standin) as running:
        standin.push("are you there?", chat_id=ALICE, user_id=ALICE)
        texts = await running.settle(1)
        assert texts[0] == "⚠ Claude is not logged in on the computer running the gateway."
        fake_claude.mode("err429")
        standin.push("and now?", chat_id=ALICE, user_id=ALICE)
        texts = await running.settle(2)
        assert "rate limited" in texts[1]
        fake_claude.mode("success").reply("All good.")
        standin.push("third time", chat_id=ALICE, user_id=ALICE)
        texts = await running.settle(3)
    assert texts[2] == "All good."
    session = next(s for s in list_sessions(home.db) if s.key == "agent:main:main")
    users = [m.text for m in session_messages(home.db, session.id) if m.role == "user"]
    assert users == ["are you there?", "and now?", "third time"]


async def test_stop_cancels_the_running_turn_of_that_chat(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("hang")
    async with run_gateway(home, standin) as running:
        standin.push("think for a long time", chat_id=ALICE, user_id=ALICE)
        for _ in range(200):
            if running.gateway.turns:
                break
            await asyncio.sleep(0.05)
        standin.push("/stop", chat_id=ALICE, user_id=ALICE)
        texts = await running.settle(1, timeout=30)
    assert texts == ["Stopped."]


async def test_a_bot_token_pasted_into_a_chat_is_masked_in_the_index(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    from .telegram_standin import TOKEN

    fake_claude.reply("Noted.")
    async with run_gateway(home, standin) as running:
        standin.push(f"my bot token is {TOKEN}", chat_id=ALICE, user_id=ALICE)
        await running.settle(1)
    session = next(s for s in list_sessions(home.db) if s.key == "agent:main:main")
    users = [m.text for m in session_messages(home.db, session.id) if m.role == "user"]
    assert users == ["my bot token is 123456789:…[masked]"]


async def test_a_token_revoked_while_running_stops_the_gateway_with_one_line(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    async with run_gateway(home, standin) as running:
        standin.token = "987654321:revoked"  # every call is now a 401
        assert running.task is not None
        with pytest.raises(ConfigError, match="rejected the bot token"):
            await asyncio.wait_for(running.task, 20)
        running.task = None
    assert running.gateway.status.status.running is False


async def test_a_turn_that_times_out_is_one_short_line(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("hang")
    home.config.chat.timeout_seconds = 1
    async with run_gateway(home, standin) as running:
        standin.push("think forever", chat_id=ALICE, user_id=ALICE)
        texts = await running.settle(1, timeout=30)
    assert texts == ["⚠ Claude took too long and was stopped; try again."]


async def test_a_chat_keeps_one_live_claude_process_between_turns(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    fake_claude.reply("Slate.")
    async with run_gateway(home, standin, live=True) as running:
        standin.push("what is the roof made of?", chat_id=ALICE, user_id=ALICE)
        await running.settle(1)
        standin.push("and the gutters?", chat_id=ALICE, user_id=ALICE)
        texts = await running.settle(2)
    assert texts == ["Slate.", "Slate."]
    calls = fake_claude.calls()
    assert len({call["pid"] for call in calls}) == 1  # one process served both turns
    assert "stream-json" in calls[0]["argv"]
