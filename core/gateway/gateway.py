"""The Telegram gateway: updates in, chat turns through the engine, replies out, exactly once.

For every update, in order: skip it if seen (Telegram re-delivers); read it; decide who may talk
(:mod:`.access`); keep a group's unaddressed messages (:mod:`.history`); store an accepted message
in the inbox (fsynced) and only then let the polling offset move past it (:mod:`.store`); hand it
to its chat's lane (:mod:`.lanes`), which runs one turn at a time per chat through the chat
engine and sends the reply in parts that fit (:mod:`.split`). The engine runs on a thread of its
own (:mod:`.turns`): its SQLite writes, fsyncs and recall never
hold up this loop, which only polls, stores, splits and sends. On start, whatever the inbox
holds unanswered is answered, or marked unanswered when older than
``telegram.answer_pending_minutes``. The design and its guarantees: ``docs/telegram.md``.

It must never lose a message it acknowledged, never run a turn for someone not allowed, and
never let one chat's failure stop another.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from clawback.core.chat.host import EngineHost
from clawback.core.chat.policy import CHAT_COMMANDS
from clawback.core.claude import (
    ClaudeError,
    ClaudeNotFound,
    ClaudeNotLoggedIn,
    ClaudeOverloaded,
    ClaudeRateLimited,
    ClaudeTimeout,
)
from clawback.core.config import TelegramConfig
from clawback.core.errors import ClawbackError, ConfigError
from clawback.core.formats.session_keys import dm_key, group_key, main_key
from clawback.core.gateway.access import Access, PairingCodes
from clawback.core.gateway.api import BotApi, Undeliverable
from clawback.core.gateway.history import GroupHistory, compose_turn, from_line
from clawback.core.gateway.inbound import BotIdentity, Inbound, read_update
from clawback.core.gateway.lanes import Lanes
from clawback.core.gateway.split import split_reply
from clawback.core.gateway.status import StatusFile
from clawback.core.gateway.store import Inbox, InboxEntry, PollState
from clawback.core.gateway.turns import TurnHandle, run_turn

__all__ = ["TelegramGateway"]

log = logging.getLogger(__name__)

CHANNEL = "telegram"
REFUSE_EVERY_S = 3600.0
TYPING_EVERY_S = 4.0
POLL_BACKOFF_MAX_S = 60.0
MAX_TRIES = 3  # an update that fails this often is skipped (said on the terminal)
# Commands the engine acts on (they never join other messages), and the gateway's own.
ENGINE_COMMANDS = ("/new", "/reset", "/label")
GROUP_COMMANDS = (*ENGINE_COMMANDS, "/stop", "/help")
HELP = (
    "I answer from your clawback memory through Claude.\n"
    "/new or /reset: start a new session\n"
    "/label TEXT: name this session\n"
    "/stop: stop the reply being written\n"
    "/help: this list"
)
REFUSAL = "This bot is private. If it is yours, the pairing code is on the gateway's terminal."
GROUP_REFUSAL = "I answer only the members I was told to in this group."


def failure_line(exc: BaseException) -> str:
    """What a chat is told when its turn failed: one short line."""
    if isinstance(exc, ClaudeNotLoggedIn):
        return "⚠ Claude is not logged in on the computer running the gateway."
    if isinstance(exc, ClaudeRateLimited):
        return "⚠ Claude is rate limited right now; try again in a while."
    if isinstance(exc, ClaudeOverloaded):
        return "⚠ Claude is overloaded right now; try again shortly."
    if isinstance(exc, ClaudeTimeout):
        return "⚠ Claude took too long and was stopped; try again."
    if isinstance(exc, ClaudeNotFound):
        return "⚠ The claude command is not installed where the gateway runs."
    if isinstance(exc, ClaudeError):
        return "⚠ The claude call failed: " + " ".join(str(exc).split())[:200]
    return f"⚠ The turn failed ({type(exc).__name__}); your message is kept."


def _command(text: str) -> str:
    word = text.strip().partition(" ")[0].lower()
    return word if word.startswith("/") else ""


class TelegramGateway:
    """One bot for one home. :meth:`run` polls until ``stop`` is set."""

    def __init__(
        self,
        host: EngineHost,
        settings: TelegramConfig,
        folder: Path,
        bot: BotApi,
        *,
        say: Callable[[str], None] = lambda line: None,
        clock: Callable[[], float] = time.time,
        reload: Callable[[], TelegramConfig] | None = None,
    ) -> None:
        """``host`` runs the engine (the caller closes it after :meth:`run`); ``say`` prints a
        line on the gateway's terminal; ``reload`` reads the settings again (a stranger's
        message re-reads the allow list: ``allow CODE`` admits while running)."""
        self.host = host
        self.settings = settings
        self.folder = folder
        self.bot = bot
        self.say = say
        self.clock = clock
        self.reload = reload
        self.access = Access(settings)
        self.pairing = PairingCodes(folder / "pairing.json", clock=clock)
        self.state = PollState.load(folder / "state.json")
        self.inbox = Inbox(folder / "inbox.jsonl")
        self.history = GroupHistory(folder / "history", settings.group_history)
        self.status = StatusFile(folder, CHANNEL)
        self.lanes = Lanes(
            self._run_batch,
            debounce_s=settings.debounce_ms / 1000,
            limit=settings.max_concurrent_turns,
            clock=clock,
        )
        self.identity = BotIdentity(0, "")
        self.turns: dict[int, TurnHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._noted_groups: set[int] = set()
        self._failures: dict[int, int] = {}
        self._last_line: dict[int, asyncio.Task[None]] = {}
        #: per answered batch: (update ids, accepted at, turn started, turn ended, sent) for bench
        self.timings: list[tuple[list[int], float, float, float, float]] = []

    # -- the loop -------------------------------------------------------------------------------

    async def start(self) -> BotIdentity:
        """Ask who the bot is and answer what the last run left unanswered."""
        self.identity = await self.bot.start()
        self.status.status.bot = self.identity.username
        self.status.save()
        pending = self.inbox.pending()
        if pending:
            self.say(f"Answering {len(pending)} message(s) left unanswered by the last run.")
        for entry in pending:
            self.lanes.submit(entry)
        return self.identity

    async def run(self, stop: asyncio.Event) -> None:
        """Poll and dispatch until ``stop`` is set; then cancel the turns in flight (their
        messages stay in the inbox and are answered on the next start)."""
        backoff = 1.0
        try:
            while not stop.is_set():
                poll = asyncio.ensure_future(self.bot.updates(self.state.offset))
                stopped = asyncio.ensure_future(stop.wait())
                done, _ = await asyncio.wait({poll, stopped}, return_when=asyncio.FIRST_COMPLETED)
                stopped.cancel()
                if poll not in done:
                    poll.cancel()
                    with contextlib.suppress(BaseException):
                        await poll
                    break
                try:
                    updates = poll.result()
                except Exception as exc:
                    what, fatal = self.bot.explain(exc)
                    self.status.error(what)
                    self.say(f"Polling failed: {what}")
                    if fatal:  # a revoked token: waiting will not help; one line, exit 2
                        raise ConfigError(f"the gateway stopped: {what}") from None
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), backoff)
                    backoff = min(backoff * 2, POLL_BACKOFF_MAX_S)
                    continue
                backoff = 1.0
                if self.handle_all(updates):
                    # off the event loop: the turns and sends in flight go on meanwhile
                    await asyncio.to_thread(self.persist)
        finally:
            await self.close()

    def handle_all(self, updates: list[dict[str, Any]]) -> bool:
        """Every update of one getUpdates answer, in order (True if there were any); then
        :meth:`persist` must run before the next poll."""
        if not updates:
            return False
        for update in updates:
            try:
                self.handle(update)
            except Exception as exc:  # a bug on one update must not stop the gateway
                log.exception("update failed")
                self.status.error(f"an update could not be handled ({type(exc).__name__})")
                if not self._give_up(update):
                    break  # asked for again from here on the next poll: nothing skipped
        self.status.status.last_update_at = self.clock()
        self.status.status.waiting = self.lanes.waiting()
        return True

    def persist(self) -> None:
        """The accepted messages made durable, then the offset moved past them (files only:
        safe in a thread while the loop runs turns, as nothing else touches these)."""
        self.inbox.sync()
        self.state.save()
        self.status.save()

    def _give_up(self, update: dict[str, Any]) -> bool:
        """After :data:`MAX_TRIES` failures on one update, acknowledge it and go on (else it
        would come back forever and hold up every later one); True when it was given up."""
        update_id = update.get("update_id") if isinstance(update, dict) else None
        if not isinstance(update_id, int):
            return True
        self._failures[update_id] = self._failures.get(update_id, 0) + 1
        if self._failures[update_id] < MAX_TRIES:
            return False
        del self._failures[update_id]
        self.say(f"Update {update_id} failed {MAX_TRIES} times and was skipped.")
        self.state.advance(update_id)
        return True

    async def close(self) -> None:
        for turn in list(self.turns.values()):
            turn.cancel()
        await self.lanes.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        self.status.status.running = False
        self.status.save()
        await self.bot.stop()

    async def idle(self) -> None:
        """Wait until every lane and every send has finished (tests and the bench)."""
        await self.lanes.idle()
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # -- one update -----------------------------------------------------------------------------

    def handle(self, update: dict[str, Any]) -> None:
        message = read_update(update, self.identity)
        if self.state.has_seen(message.update_id) or message.update_id in self.inbox.open:
            self.status.status.duplicates += 1
            return
        self._route(message)
        self.state.advance(message.update_id)

    def _route(self, message: Inbound) -> None:
        if message.kind in ("ignored", "channel") or message.sender_id is None:
            return
        if message.is_private:
            if not self.access.user_allowed(message) and not self._admitted(message):
                self._stranger(message)
            elif message.kind != "text":
                self._unsupported(message)
            else:
                self._accept(message)
            return
        if not message.is_group:
            return
        if not self.access.group_listed(message):
            if message.chat_id not in self._noted_groups:
                self._noted_groups.add(message.chat_id)
                self.say(
                    f"A message in the group {message.chat_title!r} ({message.chat_id}), which"
                    " telegram.groups does not list: ignored."
                )
            return
        if message.kind != "text":
            if message.kind != "edited" and message.addressed:
                self._unsupported(message)
            return
        # A bare /new, /stop... in a group is meant for the bot as much as /new@bot is.
        if not message.addressed and _command(message.text) not in GROUP_COMMANDS:
            self.history.add(message.chat_id, message.sender_name, message.text, message.date)
            return
        if not self.access.may_address(message):
            self.history.add(message.chat_id, message.sender_name, message.text, message.date)
            self._refuse(message, GROUP_REFUSAL)
            return
        self._accept(message)

    def _accept(self, message: Inbound) -> None:
        command = _command(message.text)
        chat = message.chat_id
        if command == "/stop":
            turn = self.turns.get(chat)
            if turn is not None:
                turn.cancel()
            else:
                self._send_later(chat, "Nothing is running.")
            return
        if command in ("/help", "/start"):
            self._send_later(chat, HELP)
            return
        if command and command not in ENGINE_COMMANDS and command[1:].isalpha():
            known = [c for c in CHAT_COMMANDS if c in ENGINE_COMMANDS]
            self._send_later(chat, f"Unknown command {command}: try {', '.join(known)}, /stop.")
            return
        context = ""
        text = message.text
        if message.forwarded_from and not command:
            text = f"(forwarded from {message.forwarded_from}) {text}"
        if message.is_group and not command:
            context = self.history.context(chat)
            text = from_line(message.sender_name, text)
        entry = InboxEntry(
            id=message.update_id,
            chat_id=chat,
            chat_type=message.chat_type,
            key=self._key(message),
            sender_id=message.sender_id,
            sender_name=message.sender_name,
            text=text,
            context=context,
            at=self.clock(),
            message_id=message.message_id,
            command=command if command in ENGINE_COMMANDS else "",
        )
        self.inbox.accept(entry)  # from here on a kill cannot lose it; persist() makes it durable
        if context:
            self.history.clear(chat)
        self.lanes.submit(entry)

    def _key(self, message: Inbound) -> str:
        agent = self.settings.agent
        if message.is_group:
            return str(group_key(agent, CHANNEL, str(message.chat_id)))
        if self.settings.dm_scope == "per-peer":
            return str(dm_key(agent, str(message.sender_id), channel=CHANNEL))
        return str(main_key(agent))

    def _admitted(self, message: Inbound) -> bool:
        """Whether the allow list, read again, admits ``message``'s sender (paired since)."""
        if self.reload is None:
            return False
        try:
            self.access = Access(self.reload())
        except ClawbackError as exc:
            self.status.error(f"the settings could not be read again: {exc}")
            return False
        return self.access.user_allowed(message)

    def _stranger(self, message: Inbound) -> None:
        if message.kind == "text":
            asked = self.pairing.request(message)
            if asked is not None and asked[1]:
                request = asked[0]
                who = f"{request.name} (@{request.username}, id {request.user_id})"
                if not request.username:
                    who = f"{request.name} (id {request.user_id})"
                self.say(
                    f"Pairing: {who} asks to talk to this memory. To allow them: "
                    f"clawback gateway telegram allow {request.code}  (valid for an hour)"
                )
        self._refuse(message, REFUSAL)

    def _refuse(self, message: Inbound, text: str) -> None:
        self.status.status.refused += 1
        if self.state.may_refuse(str(message.sender_id), self.clock(), REFUSE_EVERY_S):
            self._send_later(message.chat_id, text)

    def _unsupported(self, message: Inbound) -> None:
        if self.settings.unsupported != "reply":
            return
        if message.kind == "edited":
            line = "I don't see edits: send the new text as a new message."
        else:
            line = f"I can only read text; this {message.media or 'message'} was not passed on."
        self._send_later(message.chat_id, line)

    # -- turns and replies ------------------------------------------------------------------------

    async def _run_batch(self, batch: list[InboxEntry]) -> None:
        first, ids = batch[0], [entry.id for entry in batch]
        chat = first.chat_id
        started = self.clock()
        if first.reply is not None:  # stored by the last run, never sent
            parts = first.reply
        elif started - first.at > self.settings.answer_pending_minutes * 60:
            when = datetime.fromtimestamp(first.at).astimezone().strftime("%Y-%m-%d %H:%M")
            parts = [
                f"The gateway stopped before answering your message of {when}; "
                "send it again if it still matters."
            ]
        else:
            parts = await self._turn(first, batch)
            self.inbox.replied(ids, parts)
        ended = self.clock()
        await self._send_parts(chat, parts, reply_to=first.message_id if first.context else 0)
        self.inbox.done(ids)
        self.status.status.answered += len(batch)
        self.timings.append((ids, first.at, started, ended, self.clock()))

    async def _turn(self, first: InboxEntry, batch: list[InboxEntry]) -> list[str]:
        chat = first.chat_id
        if first.command:
            text = first.text
        else:
            text = compose_turn([e.context for e in batch], [e.text for e in batch])
        typing = asyncio.create_task(self._keep_typing(chat))
        handle = self.turns[chat] = TurnHandle()
        key = first.key
        try:
            notes, outcome = await self.host.submit(
                lambda engine: run_turn(engine, text, key, handle)
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not isinstance(exc, ClaudeError):
                log.exception("a turn failed")
                self.status.error(f"a turn failed ({type(exc).__name__})")
            return [failure_line(exc)]
        finally:
            typing.cancel()
            self.turns.pop(chat, None)
        if outcome is None or outcome.command:
            return ["\n".join(notes) or "Done."]
        if outcome.cancelled:
            return split_reply(outcome.reply + "\n\n(stopped)") if outcome.reply else ["Stopped."]
        return split_reply(outcome.reply) or ["(Claude sent an empty reply.)"]

    async def _keep_typing(self, chat: int) -> None:
        while True:
            await self.bot.typing(chat)
            await asyncio.sleep(TYPING_EVERY_S)

    async def _send_parts(self, chat: int, parts: list[str], *, reply_to: int = 0) -> None:
        for index, part in enumerate(parts):
            try:
                await self.bot.send(chat, part, reply_to=reply_to if index == 0 else 0)
            except Undeliverable as exc:
                self.status.error(f"chat {chat}: {exc}")
                self.say(f"Cannot deliver to chat {chat}: {exc}")
                return

    def _send_later(self, chat: int, text: str) -> None:
        """A short line outside any turn (a refusal, help), sent without holding up polling;
        lines to one chat go out in the order they were asked for."""
        previous = self._last_line.get(chat)

        async def send() -> None:
            if previous is not None:
                with contextlib.suppress(Exception):
                    await previous
            await self._send_parts(chat, [text])

        task = asyncio.create_task(send())
        self._tasks.add(task)
        self._last_line[chat] = task

        def finished(done: asyncio.Task[None]) -> None:
            self._tasks.discard(done)
            if self._last_line.get(chat) is done:
                del self._last_line[chat]

        task.add_done_callback(finished)
