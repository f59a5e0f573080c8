"""What the gateway needs from a chat network's bot, so the gateway itself imports no client.

:class:`~clawback.core.gateway.bot.TelegramBot` is the one implementation; the gateway and its
tests see only this protocol.
"""

from __future__ import annotations

from typing import Any, Protocol

from clawback.core.gateway.inbound import BotIdentity

__all__ = ["BotApi", "Undeliverable"]


class Undeliverable(Exception):
    """The network will not take this message for this chat (blocked, gone, kicked)."""


class BotApi(Protocol):
    async def start(self) -> BotIdentity:
        """Who the bot is; a rejected token raises ConfigError."""
        ...

    async def stop(self) -> None: ...

    async def updates(self, offset: int | None) -> list[dict[str, Any]]:
        """The next updates from ``offset`` on, as the Bot API's JSON objects (long polling)."""
        ...

    async def send(self, chat_id: int, markdown: str, *, reply_to: int = 0) -> None:
        """Send one part, retrying until it goes through; Undeliverable if it never can."""
        ...

    async def typing(self, chat_id: int) -> None: ...

    def explain(self, exc: BaseException) -> tuple[str, bool]:
        """A polling failure in words without secrets, and whether waiting cannot cure it."""
        ...
