"""Whether a gateway runs, seen from outside it: ``clawback health`` and the app's labels."""

from __future__ import annotations

import asyncio
import json

from clawback.core.gateway.status import read_status
from clawback.core.home import Home
from clawback.core.locking import held
from clawback.tui.format import origin_label

from tests.cli_runner import run_cli
from tests.fake_claude.fixtures import FakeClaude

from .conftest import ALICE, run_gateway
from .telegram_standin import BOT_USERNAME, TelegramStandin


async def test_health_reports_a_running_gateway_its_last_update_and_errors(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    assert read_status(home.paths.gateway).running is False
    async with run_gateway(home, standin) as running:
        standin.push("hi", chat_id=ALICE, user_id=ALICE)
        await running.settle(1)
        running.gateway.status.error("cannot reach Telegram (network error)")
        status = read_status(home.paths.gateway)
        assert status.running is False  # no lock held by this in-process gateway...
        lock = home.paths.gateway / "telegram" / "gateway.lock"
        with held(lock) as mine:  # ...as `clawback gateway telegram` holds it
            assert mine
            status = read_status(home.paths.gateway)
            ran = await asyncio.to_thread(run_cli, "health", "--json", home=home.paths.home)
            text = await asyncio.to_thread(run_cli, "health", home=home.paths.home)
    assert status.running and status.bot == BOT_USERNAME and status.answered == 1
    assert status.last_update_at is not None
    report = json.loads(ran.stdout)["gateways"]["telegram"]
    assert report["running"] is True and report["errors"][0]["what"].startswith("cannot reach")
    assert f"Gateway telegram: running as @{BOT_USERNAME}" in text.stdout
    assert "1 recent error" in text.stdout
    after = await asyncio.to_thread(run_cli, "health", home=home.paths.home)
    assert "Gateway telegram: not running" in after.stdout


def test_the_session_list_names_the_channel_a_chat_came_through() -> None:
    assert origin_label("native", "agent:main:telegram:group:-100500") == "clawback · Telegram"
    assert origin_label("native", "agent:main:telegram:dm:42") == "clawback · Telegram"
    assert origin_label("native", "agent:main:main") == "clawback · gateway"
    assert origin_label("native", "local:alice") == "clawback"
    assert origin_label("openclaw", "agent:main:telegram:dm:42") == "OpenClaw"
    assert origin_label("native", "agent:bad key") == "clawback"


async def test_clawback_sessions_names_the_channel_a_chat_came_through(
    home: Home, standin: TelegramStandin, fake_claude: FakeClaude
) -> None:
    async with run_gateway(home, standin) as running:
        standin.push("hi", chat_id=ALICE, user_id=ALICE)
        await running.settle(1)
    listed = await asyncio.to_thread(run_cli, "sessions", home=home.paths.home)
    as_json = await asyncio.to_thread(run_cli, "sessions", "--json", home=home.paths.home)
    assert "native · gateway" in listed.stdout  # DMs share the main session by default
    [session] = json.loads(as_json.stdout)
    assert session["key"] == "agent:main:main" and session["channel"] == "gateway"
