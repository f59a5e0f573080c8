"""The Telegram Bot API through python-telegram-bot: polling, sending, and every retry.

The one module that imports ``telegram`` (the optional extra ``clawback[telegram]``): nothing
else in clawback loads it. Updates come back as the Bot API's JSON objects, so the rest of the
gateway never depends on the library's classes.

Sending never drops a part: a 429 waits ``retry_after`` as Telegram asks, a network failure is
retried with backoff (1 s doubling to a minute) until it goes through or the gateway stops, and
formatting Telegram refuses is sent again as plain text. Only a chat that blocked the bot, or
that Telegram says does not exist, gives up (the caller is told). The token never appears in
anything this module says: errors are reworded without the request's address.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from clawback.core.errors import ConfigError
from clawback.core.gateway.api import Undeliverable
from clawback.core.gateway.inbound import BotIdentity
from clawback.core.gateway.markup import to_telegram_html
from telegram import Bot, ReplyParameters
from telegram.constants import ChatAction, ParseMode
from telegram.error import (
    BadRequest,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.request import HTTPXRequest
from telegram.warnings import PTBDeprecationWarning, PTBUserWarning

# getUpdates is read raw on purpose (see TelegramBot.updates); retry_after's type change is
# handled by retry_after_seconds.
warnings.filterwarnings("ignore", message="Please use 'Bot.getUpdates'", category=PTBUserWarning)
warnings.filterwarnings("ignore", message=".*retry_after.*", category=PTBDeprecationWarning)

__all__ = ["DEFAULT_API_BASE", "TelegramBot"]

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_API_BASE = "https://api.telegram.org"
ALLOWED_UPDATES = ("message", "edited_message", "channel_post")
BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 60.0


def retry_after_seconds(exc: RetryAfter) -> float:
    """``retry_after`` as seconds, whichever type this version of the library hands out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value: Any = exc.retry_after
    if isinstance(value, dt.timedelta):
        return max(0.0, value.total_seconds())
    return max(0.0, float(value))


def describe(exc: BaseException) -> str:
    """A failure in words that never carry the token (the library's messages can quote URLs)."""
    if isinstance(exc, RetryAfter):
        return f"rate limited by Telegram (retry after {retry_after_seconds(exc):.0f} s)"
    if isinstance(exc, TimedOut):
        return "Telegram did not answer in time"
    if isinstance(exc, NetworkError) and not isinstance(exc, BadRequest):
        return "cannot reach Telegram (network error)"
    if isinstance(exc, TelegramError):
        return f"Telegram said: {exc.message[:200]}"
    return type(exc).__name__


class TelegramBot:
    """One bot, talking to ``api_base`` (Telegram's, a local Bot API server, or a stand-in)."""

    def __init__(
        self,
        token: str,
        api_base: str = DEFAULT_API_BASE,
        *,
        poll_timeout_s: int = 30,
        backoff_start_s: float = BACKOFF_START_S,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        base = api_base.rstrip("/")
        self.poll_timeout_s = poll_timeout_s
        self.backoff_start_s = backoff_start_s
        self.sleep = sleep
        self.bot = Bot(
            token,
            base_url=f"{base}/bot",
            base_file_url=f"{base}/file/bot",
            request=HTTPXRequest(connection_pool_size=16, read_timeout=30, connect_timeout=10),
        )

    async def start(self) -> BotIdentity:
        """Ask Telegram who the bot is (``getMe``); a rejected token is a ConfigError."""
        try:
            me = await self._retrying(self.bot.get_me, attempts=4)
        except InvalidToken:
            raise ConfigError(
                "Telegram rejected the bot token (check TELEGRAM_BOT_TOKEN or telegram.token)"
            ) from None
        except TelegramError as exc:
            raise ConfigError(f"cannot start the Telegram bot: {describe(exc)}") from None
        return BotIdentity(me.id, me.username or "", me.first_name or "")

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.bot.shutdown()

    async def updates(self, offset: int | None) -> list[dict[str, Any]]:
        """The next updates from ``offset`` on (long polling), as the Bot API's JSON objects.

        Read raw, not through the library's classes: an update it cannot parse (a field a
        newer Bot API added, a malformed object) would otherwise fail the whole batch, again
        on every poll. Errors are the caller's to wait out (409: another gateway polls)."""
        params: dict[str, Any] = {
            "timeout": self.poll_timeout_s,
            "allowed_updates": list(ALLOWED_UPDATES),
        }
        if offset is not None:
            params["offset"] = offset
        found = await self.bot.do_api_request(
            "getUpdates", api_kwargs=params, read_timeout=self.poll_timeout_s + 15
        )
        return [u for u in found if isinstance(u, dict)] if isinstance(found, list) else []

    async def send(self, chat_id: int, markdown: str, *, reply_to: int = 0) -> None:
        """One part of a reply, as HTML, else as plain text when Telegram refuses the HTML."""
        reply = ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None
        try:
            await self._retrying(
                lambda: self.bot.send_message(
                    chat_id,
                    to_telegram_html(markdown),
                    parse_mode=ParseMode.HTML,
                    reply_parameters=reply,
                )
            )
            return
        except Forbidden as exc:
            raise Undeliverable(describe(exc)) from None
        except BadRequest as exc:
            if "not found" in exc.message.lower() and "chat" in exc.message.lower():
                raise Undeliverable(describe(exc)) from None
            log.info("Telegram refused the formatting (%s); sending plain text", exc.message)
        try:
            await self._retrying(
                lambda: self.bot.send_message(chat_id, markdown, reply_parameters=reply)
            )
        except TelegramError as exc:
            raise Undeliverable(describe(exc)) from None

    def explain(self, exc: BaseException) -> tuple[str, bool]:
        return bot_failure(exc), is_fatal(exc)

    async def typing(self, chat_id: int) -> None:
        """Show "typing…" in ``chat_id`` (for five seconds); a failure is no matter."""
        with contextlib.suppress(TelegramError):
            await self.bot.send_chat_action(chat_id, ChatAction.TYPING)

    async def _retrying(self, call: Callable[[], Awaitable[T]], attempts: int = 0) -> T:
        """``call()``, waiting out 429s and retrying network failures with backoff;
        ``attempts`` bounds the tries (0: until it works or the task is cancelled)."""
        backoff = self.backoff_start_s
        tries = 0
        while True:
            tries += 1
            try:
                return await call()
            except RetryAfter as exc:
                if attempts and tries >= attempts:
                    raise
                await self.sleep(retry_after_seconds(exc) + 0.05)
            except (InvalidToken, Forbidden, BadRequest, Conflict):
                raise
            except NetworkError:  # TimedOut included
                if attempts and tries >= attempts:
                    raise
                await self.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_S)


def bot_failure(exc: BaseException) -> str:
    """How a polling failure reads on the gateway's terminal and in its status."""
    if isinstance(exc, Conflict):
        return "another program is polling this bot (only one gateway per bot can run)"
    if isinstance(exc, InvalidToken):
        return "Telegram rejected the bot token"
    if isinstance(exc, EndPointNotFound):
        return "Telegram rejected the bot token, or telegram.api_base is not a Bot API"
    return describe(exc)


def is_fatal(exc: BaseException) -> bool:
    """A polling failure that waiting will not cure."""
    return isinstance(exc, InvalidToken | EndPointNotFound | Forbidden)
