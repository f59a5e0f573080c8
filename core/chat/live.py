"""Live conversations: one long-lived ``claude`` process per chat session a host is chatting in.

A long-running host (the app, the ``clawback chat`` REPL, a gateway) keeps, per session, a
:class:`~clawback.core.claude.live.LiveClaude` that has seen the conversation so far, so a turn
sends only its new message (and that message's recalled block) and the API's prompt cache
serves the rest. The transcript stays the source of truth and the process a cache of it: a
turn uses the process only when it holds exactly what the transcript says the model should see
(the same compaction summary and the same messages, by id), with the same system prompt, model
and tools; anything else (another client wrote to the session, a compaction, a failed turn,
``/new``, a model switch) starts a fresh process from the transcript. What the process holds
beyond the transcript is only what clawback chose not to store: tool results, and a memory
flush's silent turn.

Processes end when idle (``chat.live_idle_minutes``), when the host has more than
``chat.live_sessions`` of them (the least recently used first), when their key moves on to
another session, and all of them at :meth:`LiveConversations.aclose`; a watchdog stops them if
the host dies without closing (:mod:`clawback.core.claude.watchdog`). Why and what it saves:
``docs/chat.md``.

This module must never let two turns share a process at once, never reuse a process after a
failed turn, and never decide what goes into a prompt (the engine does).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field

from clawback.core.chat.prompt import AssembledPrompt, History
from clawback.core.claude import ClaudeGone, ClaudeRunner, Event, LiveClaude, McpTools, Watchdog
from clawback.core.recall import RecallBlock

__all__ = ["LiveConversation", "LiveConversations", "LiveTurn", "ProcessSpec"]


@dataclass(frozen=True)
class ProcessSpec:
    """What a live process is fixed to for its whole life."""

    system_prompt: str
    model: str | None
    tools: McpTools | None


@dataclass(eq=False)
class LiveConversation:
    """A session's live process and what it holds: ``summary`` and the ids of the transcript
    messages it has seen, in order."""

    session_id: str
    key: str
    spec: ProcessSpec
    process: LiveClaude
    summary: str | None = None
    seen: list[str] = field(default_factory=list)
    # what earlier turns' recalled blocks brought: never recalled again in this process
    recalled_ids: set[str] = field(default_factory=set)
    recalled_texts: list[str] = field(default_factory=list)

    def remember(self, block: RecallBlock | None) -> None:
        """A turn's recalled block is in the process's context now."""
        if block:
            self.recalled_ids.update(hit.uuid for hit in block.details if hit.uuid)
            self.recalled_texts.append(block.text)

    def holds(self, history: History) -> bool:
        """It has seen exactly ``history``: the same summary and the same messages."""
        return self.summary == history.summary and self.seen == [m.id for m in history.messages]

    def holds_the_start_of(self, history: History) -> bool:
        """It has seen ``history`` up to some message, and nothing that differs from it."""
        ids = [m.id for m in history.messages]
        return self.summary == history.summary and self.seen == ids[: len(self.seen)]

    def record(self, ids: Sequence[str]) -> None:
        """A turn's messages, now in the transcript, that the process has seen too."""
        self.seen.extend(ids)

    @property
    def usable(self) -> bool:
        return self.process.alive and not self.process.busy


class LiveConversations:
    """The live processes of one host, by session id.

    ``runner`` starts them (command, containment, per-turn time limit); ``idle_seconds`` is how
    long one may wait for its next turn (``None``: until closed); ``most`` how many may run.
    """

    def __init__(
        self, runner: ClaudeRunner, *, idle_seconds: float | None = 600.0, most: int = 3
    ) -> None:
        self.runner = runner
        self.idle_seconds = idle_seconds
        self.most = max(1, most)
        self.watchdog = Watchdog()
        self._open: dict[str, LiveConversation] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.started = 0  # processes started, over the host's life

    def __len__(self) -> int:
        return len(self._open)

    def get(self, session_id: str) -> LiveConversation | None:
        return self._open.get(session_id)

    def find(self, session_id: str, spec: ProcessSpec, history: History) -> LiveConversation | None:
        """The session's process, if it can take the next turn after ``history`` as it is."""
        conversation = self._open.get(session_id)
        if conversation is None or not conversation.usable or conversation.spec != spec:
            return None
        return conversation if conversation.holds(history) else None

    async def start(
        self, session_id: str, key: str, spec: ProcessSpec, history: History
    ) -> LiveConversation:
        """A fresh process for ``session_id``, whose first turn will carry ``history`` (the
        caller records its ids once that turn is answered). Whatever ran for the session, or
        for another session of its key, is closed first; so is the least recently used
        process when the host runs its most."""
        stale = [c for c in self._open.values() if c.session_id == session_id or c.key == key]
        for conversation in stale:
            await self.discard(conversation.session_id)
        while len(self._open) >= self.most:
            idle = [c for c in self._open.values() if not c.process.busy]
            if not idle:
                break
            oldest = min(idle, key=lambda c: c.process.last_used)
            await self.discard(oldest.session_id)
        process = LiveClaude(
            self.runner,
            system_prompt=spec.system_prompt,
            model=spec.model,
            tools=spec.tools,
            watchdog=self.watchdog,
        )
        try:
            await process.start()
        except BaseException:
            await self._watchdog_if_idle()
            raise
        self.started += 1
        conversation = LiveConversation(session_id, key, spec, process, history.summary)
        self._open[session_id] = conversation
        return conversation

    def touch(self, conversation: LiveConversation) -> None:
        """A turn ended: the idle clock starts again (a dead process is dropped at once)."""
        session_id = conversation.session_id
        if self._open.get(session_id) is not conversation:
            return
        if not conversation.process.alive:
            self._close_later(session_id)
            return
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()
        if self.idle_seconds is not None:
            loop = asyncio.get_running_loop()
            self._timers[session_id] = loop.call_later(
                self.idle_seconds, self._expire, conversation
            )

    def _expire(self, conversation: LiveConversation) -> None:
        if self._open.get(conversation.session_id) is not conversation:
            return
        if conversation.process.busy:  # a turn is running: its end starts the clock again
            return
        self._close_later(conversation.session_id)

    def _close_later(self, session_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self.discard(session_id))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def discard(self, session_id: str) -> None:
        """Close the session's process, if any."""
        conversation = self._open.pop(session_id, None)
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()
        if conversation is not None:
            await conversation.process.close()
        await self._watchdog_if_idle()

    async def _watchdog_if_idle(self) -> None:
        if not self._open:
            await self.watchdog.aclose()

    async def aclose(self) -> None:
        """Close every process (and the watchdog): when the host ends."""
        for session_id in list(self._open):
            with contextlib.suppress(Exception):
                await self.discard(session_id)
        if self._closing:
            await asyncio.gather(*list(self._closing), return_exceptions=True)
        await self.watchdog.aclose()

    def pids(self) -> dict[str, int]:
        """The running processes' pids by session id (for status lines and tests)."""
        return {sid: pid for sid, c in self._open.items() if (pid := c.process.pid) is not None}


@dataclass
class LiveTurn:
    """One turn's way through a host's live conversations, and what to record after it.

    :meth:`events` sends the turn to ``found`` (the process that holds the conversation), or
    to a fresh one; :meth:`settle` then says what the process has seen, once the turn is in
    the transcript.
    """

    conversation: LiveConversation | None = None
    fed: list[str] = field(default_factory=list)  # message ids it held before the turn
    sent: AssembledPrompt | None = None  # what went to it (a fresh start: the whole prompt)

    async def events(
        self,
        live: LiveConversations,
        found: LiveConversation | None,
        prompt: AssembledPrompt,
        fresh: Callable[[], AssembledPrompt],
        *,
        session_id: str,
        key: str,
        spec: ProcessSpec,
    ) -> AsyncGenerator[Event, None]:
        """The turn's events. ``fresh`` is the whole prompt, for when ``found`` turns out to
        have ended before it read the turn (nothing was sent: it goes to a fresh process)."""
        sent = prompt
        if found is not None:
            self.fed = list(found.seen)
            try:
                async for event in self._through(found, sent):
                    yield event
                return
            except ClaudeGone:
                sent = fresh()
        held = History(sent.summary, sent.messages)
        started = await live.start(session_id, key, spec, held)
        self.fed = [m.id for m in sent.messages]
        async for event in self._through(started, sent):
            yield event

    async def _through(
        self, found: LiveConversation, sent: AssembledPrompt
    ) -> AsyncGenerator[Event, None]:
        self.conversation, self.sent = found, sent
        async with contextlib.aclosing(found.process.turn(sent.prompt)) as events:
            async for event in events:
                yield event

    def settle(self, user_id: str, reply_id: str | None) -> None:
        """The turn is in the transcript; the process it went through (still running after a
        success, or an interrupt that landed) has seen the same, and its recalled block."""
        conversation = self.conversation
        if conversation is None or not conversation.process.alive:
            return
        conversation.seen = [*self.fed, user_id, *([reply_id] if reply_id else [])]
        conversation.remember(self.sent.recalled if self.sent else None)
