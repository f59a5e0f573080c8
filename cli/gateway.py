"""``clawback gateway telegram``: talk to your memory from Telegram (registered on the main CLI).

``clawback gateway telegram`` runs the gateway in the foreground until Ctrl+C or SIGTERM;
``clawback gateway telegram allow [CODE]`` admits the person a pairing code was printed for (no
CODE: lists the open codes). The bot token comes from ``$TELEGRAM_BOT_TOKEN`` or
``telegram.token`` and is never printed: a missing or rejected one is one line and exit 2.
This module only reads options, prints and wires the gateway; the rules live in
:mod:`clawback.core.gateway`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from pathlib import Path

import click
from clawback.cli.home import open_home
from clawback.cli.output import fail, note
from clawback.core.config import TelegramConfig, load_config, update_setting
from clawback.core.errors import ClawbackError
from clawback.core.gateway.api import BotApi
from clawback.core.home import Home
from clawback.core.locking import held
from clawback.core.paths import ensure_private_dir

TOKEN_ENV = "TELEGRAM_BOT_TOKEN"
INSTALL_HINT = "pip install 'clawback[telegram]'"


def bot_token(settings: TelegramConfig) -> str:
    """``$TELEGRAM_BOT_TOKEN``, else ``telegram.token``; one line and exit 2 when neither."""
    token = (os.environ.get(TOKEN_ENV) or settings.token).strip()
    if not token:
        fail(
            f"no Telegram bot token: set {TOKEN_ENV} (or telegram.token in the config) to the "
            "token @BotFather gave you",
            2,
        )
    return token


class _MaskToken(logging.Filter):
    """Every log record with the token replaced: library messages can quote request URLs."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self.token in message:
            record.msg, record.args = message.replace(self.token, "<token>"), None
        return True


def _quiet_logging(token: str) -> None:
    """Warnings and worse on stderr, the token masked; no per-request lines (httpx logs the
    URL, which holds the token, at INFO)."""
    handler = logging.StreamHandler()
    handler.addFilter(_MaskToken(token))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    for name in ("httpx", "httpcore", "telegram"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _say(line: str) -> None:
    click.echo(f"{time.strftime('%H:%M:%S')} {line}")


@click.group()
def gateway() -> None:
    """Reach your memory from a chat network: `clawback gateway telegram`."""


@gateway.group(invoke_without_command=True)
@click.pass_context
def telegram(ctx: click.Context) -> None:
    """Run the Telegram gateway in the foreground (Ctrl+C stops it)."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        from clawback.core.gateway.bot import TelegramBot
    except ImportError:
        fail(f"the Telegram gateway needs python-telegram-bot: {INSTALL_HINT}", 2)
    home = open_home(ctx)
    settings = home.config.telegram
    token = bot_token(settings)
    _quiet_logging(token)
    folder = ensure_private_dir(home.paths.gateway / "telegram")
    bot = TelegramBot(token, settings.api_base, poll_timeout_s=settings.poll_timeout_s)
    with held(folder / "gateway.lock") as alone:
        if not alone:
            fail(f"a Telegram gateway already runs for this home ({home.paths.home})", 1)
        try:
            asyncio.run(_serve(home, folder, bot))
        except ClawbackError as exc:
            fail(str(exc), exc.exit_code)
    note("The gateway stopped; unanswered messages are answered when it starts again.")


def _settings_now(home: Home) -> TelegramConfig:
    """``[telegram]`` as the config file holds it now (``allow`` admits people while running)."""
    return load_config(home.paths.config).telegram


async def _serve(home: Home, folder: Path, bot: BotApi) -> None:
    from clawback.core.gateway import TelegramGateway
    from clawback.core.home import engine_host

    settings = home.config.telegram
    # The engine on a thread of its own (its own connection to the home), with one live claude
    # process per session between turns (chat.live_idle_minutes, 0: one per turn).
    host = engine_host(home.paths.home)
    try:
        await host.call(lambda engine: None)  # started now: a home it cannot open fails here
        gateway = TelegramGateway(
            host, settings, folder, bot, say=_say, reload=lambda: _settings_now(home)
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop.set)
        identity = await gateway.start()
        _say(
            f"Telegram gateway running as @{identity.username} for {home.paths.home}; "
            "Ctrl+C stops it."
        )
        if not settings.allow:
            _say(
                "Nobody may talk to it yet: message the bot from Telegram, then run the "
                "`clawback gateway telegram allow CODE` it prints here."
            )
        await gateway.run(stop)
    finally:
        # the live claude processes end with the gateway; background memory work drains first
        await asyncio.to_thread(host.close)


@telegram.command("allow")
@click.argument("code", required=False)
@click.pass_context
def allow(ctx: click.Context, code: str | None) -> None:
    """Admit the person the pairing CODE was printed for (no CODE: list open codes)."""
    from clawback.core.gateway.access import PairingCodes

    home = open_home(ctx)
    codes = PairingCodes(home.paths.gateway / "telegram" / "pairing.json")
    if code is None:
        pending = codes.pending()
        if not pending:
            click.echo("No open pairing codes: a stranger's message to the bot makes one.")
        for request in pending:
            handle = f" @{request.username}" if request.username else ""
            click.echo(f"{request.code}  {request.name}{handle} (id {request.user_id})")
        return
    request = codes.take(code)
    allowed = list(home.config.telegram.allow)
    if str(request.user_id) not in allowed:
        allowed.append(str(request.user_id))
        update_setting(home.paths, "telegram.allow", allowed)
    handle = f" (@{request.username})" if request.username else ""
    click.echo(
        f"Allowed {request.name}{handle}, id {request.user_id}: the gateway answers their next "
        "message."
    )
