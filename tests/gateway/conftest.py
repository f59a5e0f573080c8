"""A running gateway for a test: the real python-telegram-bot against the loopback stand-in,
turns through the chat engine of a temporary home with the fake ``claude``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from clawback.core.chat.engine import ChatEngine
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.config import TelegramConfig
from clawback.core.gateway import TelegramGateway
from clawback.core.gateway.bot import TelegramBot
from clawback.core.home import Home, engine_host

from tests.fake_claude.fixtures import FakeClaude, fake_claude_fixture  # noqa: F401

from .telegram_standin import TOKEN, TelegramStandin, running_standin

ALICE = 42  # allowed, in DMs and in the group
BOB = 77  # a group member who is not on the allow list
GROUP = -100500


@pytest.fixture
def standin() -> Iterator[TelegramStandin]:
    with running_standin() as running:
        yield running


@dataclass
class Running:
    """A gateway polling the stand-in until :meth:`stop`."""

    gateway: TelegramGateway
    standin: TelegramStandin
    home: Home
    said: list[str] = field(default_factory=list)
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    async def settle(
        self, count: int, *, chat_id: int | None = None, timeout: float = 20
    ) -> list[str]:
        """Wait until ``count`` messages were sent (to ``chat_id``) and nothing is running."""
        loop = asyncio.get_running_loop()
        texts = await loop.run_in_executor(None, self.standin.wait_for, count, timeout, chat_id)
        await asyncio.wait_for(self.gateway.idle(), timeout)
        return texts

    async def stop(self) -> None:
        self.stop_event.set()
        if self.task is not None:
            await asyncio.wait_for(self.task, 20)


def settings(**changes: Any) -> TelegramConfig:
    base = TelegramConfig(allow=[str(ALICE)], groups=[str(GROUP)], debounce_ms=0)
    base.poll_timeout_s = 1
    for name, value in changes.items():
        setattr(base, name, value)
    return base


@contextlib.asynccontextmanager
async def run_gateway(
    home: Home,
    standin: TelegramStandin,
    config: TelegramConfig | None = None,
    *,
    live: bool = False,
    runner: ClaudeRunner | None = None,
) -> AsyncIterator[Running]:
    """A gateway on ``home`` polling ``standin``, its engine on a thread of its own with its
    own connection to ``home`` (as ``clawback gateway telegram`` runs it), built with ``home``'s
    settings as the test changed them; stopped (cleanly) when the block ends."""
    config = config or settings()
    home.config.telegram = config
    folder = home.paths.gateway / "telegram"
    bot = TelegramBot(
        TOKEN, standin.url, poll_timeout_s=config.poll_timeout_s, backoff_start_s=0.05
    )
    said: list[str] = []

    def make_engine(own: Home) -> ChatEngine:
        own.config = home.config
        return own.chat_engine(runner=runner, live=live)

    host = engine_host(home.paths.home, make_engine=make_engine)
    gateway = TelegramGateway(host, config, folder, bot, say=said.append)
    running = Running(gateway, standin, home, said)
    try:
        await gateway.start()
        running.task = asyncio.create_task(gateway.run(running.stop_event))
        yield running
    finally:
        try:
            await running.stop()
        finally:
            await asyncio.to_thread(host.close)


def folder_of(home: Home) -> Path:
    return home.paths.gateway / "telegram"
