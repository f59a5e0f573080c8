"""One chat turn in flight: the steps after the session is chosen, and how a turn ends.

:class:`ChatTurn` is what :meth:`ChatEngine.turn <clawback.core.chat.engine.ChatEngine.turn>`
returns: iterate it for events, call :meth:`ChatTurn.cancel` to stop it. It persists the user's
message before anything can fail, runs the lifecycle hooks, relays the ``claude`` stream from a
task of its own (so a cancel stops just ``claude``), stores the reply, and on every other way out
keeps what streamed as a ``partial`` reply plus a ``system`` note saying what failed.
What it writes is :mod:`~clawback.core.chat.turn_writer`; the ``claude`` task is
:mod:`~clawback.core.chat.relay`.

This module must never lose what the user typed and never store a recalled block.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from clawback.core.chat.events import (
    ChatEvent,
    Notice,
    PromptAssembled,
    SessionChanged,
    ThresholdHooks,
    ToolCalled,
    TurnFinished,
    TurnOutcome,
)
from clawback.core.chat.live import LiveConversation, LiveConversations, LiveTurn, ProcessSpec
from clawback.core.chat.prompt import AssembledPrompt, History
from clawback.core.chat.relay import ReplyRelay
from clawback.core.chat.sessions import ChatSession, SessionStore
from clawback.core.chat.turn_writer import TurnWriter
from clawback.core.claude import ClaudeCancelled, ClaudeError, ClaudeRunner, McpTools, Result
from clawback.core.errors import ClawbackError, UsageError
from clawback.core.recall import strip_recalled

__all__ = ["ChatTurn", "TurnHost", "TurnPlan"]


@dataclass
class TurnPlan:
    """Step 1-2 of a turn: which session, which command, which message and model."""

    key: str
    session: ChatSession | None
    new_session: bool
    reason: str | None
    message: str
    model: str | None
    model_override: str | None
    command: str | None
    label: str | None


class TurnHost(Protocol):
    """What a turn needs from the engine that made it (the chat engine).

    A narrow interface, so this module does not depend on the engine that depends on it.
    """

    store: SessionStore
    hooks: ThresholdHooks
    runner: ClaudeRunner
    clock: Callable[[], datetime]
    running: set[ChatTurn]
    live: LiveConversations | None

    def plan(
        self,
        text: str,
        *,
        key: str | None,
        session_id: str | None,
        model: str | None,
        new: bool,
        dry: bool,
    ) -> TurnPlan: ...

    def history(self, session: ChatSession, *, skip_ids: Sequence[str] = ()) -> History: ...

    def assemble(
        self,
        session: ChatSession | None,
        history: History,
        message: str,
        *,
        message_id: str | None = None,
        held: LiveConversation | None = None,
    ) -> AssembledPrompt: ...

    def index(self, path: Path) -> None: ...

    def memory_tools(self, *, write: bool = True) -> McpTools | None: ...

    def process_spec(self, model: str | None) -> ProcessSpec: ...

    def conversation(
        self, session: ChatSession, history: History, model: str | None
    ) -> LiveConversation | None: ...


async def _hook(what: str, call: Awaitable[str | None]) -> str | None:
    """Run a lifecycle hook; its failure is a note for the user, never a lost turn."""
    try:
        return await call
    except asyncio.CancelledError:
        raise
    except ClawbackError as exc:
        return f"The {what} did not run: {' '.join(str(exc).split())}"


def _needed(prompt: AssembledPrompt, session: ChatSession) -> int:
    """What the request will weigh, for the compaction check: the whole conversation before
    smart trim; for a live turn at least the last request's real size (it holds what the
    transcript does not: tool results, a flush's turn) plus its reply and the new turn."""
    if not prompt.continues:
        return prompt.untrimmed_tokens
    held = session.total_tokens + session.output_tokens + prompt.new_tokens
    return max(prompt.untrimmed_tokens, held)


class ChatTurn:
    """One turn in flight: iterate it for :data:`ChatEvent`\\ s; :meth:`cancel` stops it.

    After iteration, :attr:`outcome` holds the :class:`TurnOutcome` (also the last event).
    """

    def __init__(
        self,
        engine: TurnHost,
        text: str,
        *,
        key: str | None,
        session_id: str | None,
        model: str | None,
        new: bool,
    ) -> None:
        self.engine = engine
        self.text = text
        self.key = key
        self.session_id = session_id
        self.model = model
        self.new = new
        self.outcome: TurnOutcome | None = None
        self.session: ChatSession | None = None
        self._relay = ReplyRelay()  # claude's task: what a cancel stops
        self._started = False
        # the live process this turn went through, and the message ids it held before it
        self._live = LiveTurn()  # where it went, in a host with live conversations

    def cancel(self) -> None:
        """Stop ``claude`` and keep the partial reply; safe from any thread, and before start."""
        self._relay.cancel()

    def __aiter__(self) -> AsyncIterator[ChatEvent]:
        if self._started:
            raise RuntimeError("a ChatTurn can be iterated only once")
        self._started = True
        return self._events()

    # -- the pipeline ---------------------------------------------------------------------------

    async def _events(self) -> AsyncIterator[ChatEvent]:
        engine = self.engine
        engine.running.add(self)
        try:
            if not self.text.strip() and not self.new:
                raise UsageError("Nothing to send: the message is empty.")
            plan = engine.plan(
                self.text, key=self.key, session_id=self.session_id, model=self.model,
                new=self.new, dry=False,
            )  # fmt: skip
            assert plan.session is not None
            session = self.session = plan.session
            if plan.new_session:
                yield SessionChanged(session, plan.reason or "new")
            if plan.command == "label":
                yield self._label(session, plan.label or "")
                return
            if plan.command == "new" or not plan.message.strip():
                note = f"Started a new session {session.id[:8]}"
                if plan.model_override:
                    note += f" with model {plan.model_override}"
                yield Notice(note + ".")
                self.outcome = TurnOutcome(session, new_session=plan.new_session, command="new")
                yield TurnFinished(self.outcome)
                return
            async for event in self._chat(plan, session):
                yield event
        finally:
            self.engine.running.discard(self)

    def _label(self, session: ChatSession, text: str) -> ChatEvent:
        store = self.engine.store
        if not text:
            note = f"Label: {session.label}" if session.label else "This session has no label."
            self.outcome = TurnOutcome(session, command="label")
            return Notice(note)
        label = store.set_label(session.id, text)
        self.session = store.require(session.id)
        self.outcome = TurnOutcome(self.session, command="label")
        return Notice(f"Labelled this session {label!r}.")

    async def _chat(self, plan: TurnPlan, session: ChatSession) -> AsyncIterator[ChatEvent]:
        """Store the message, converse, and however that ends keep what came and say how."""
        engine, store = self.engine, self.engine.store
        writer = TurnWriter(
            store.ensure_transcript(session), store, session.id, engine.clock, engine.index
        )
        text = strip_recalled(plan.message)
        user_id, skip = writer.user_message(text)
        session = self.session = store.require(session.id)
        outcome = self.outcome = TurnOutcome(
            session, new_session=plan.new_session, user_message_id=user_id, model=plan.model
        )
        try:
            async for event in self._converse(writer, outcome, [user_id, *skip], text, plan.model):
                yield event
        except ClaudeCancelled as exc:
            writer.keep_partial(exc.partial_text or self._streamed(), outcome, cancelled=True)
            self._live.settle(user_id, outcome.reply_message_id)  # if the interrupt landed
            if not self._relay.cancel_requested:  # the iterating task itself was cancelled
                raise
        except ClaudeError as exc:
            writer.keep_partial(exc.partial_text or self._streamed(), outcome, error=exc)
            raise
        except BaseException as exc:
            reason = exc if isinstance(exc, Exception) else None
            writer.keep_partial(self._streamed(), outcome, cancelled=reason is None, error=reason)
            raise
        finally:
            await self._relay.stop()
            if self._live.conversation is not None and engine.live is not None:
                engine.live.touch(self._live.conversation)
            writer.close()
            outcome.session = store.get(session.id) or outcome.session
        note = await _hook("after-turn check", engine.hooks.after_turn(outcome.session, outcome))
        if note:
            yield Notice(note)
        yield TurnFinished(outcome)

    async def _converse(
        self,
        writer: TurnWriter,
        outcome: TurnOutcome,
        skipped: list[str],
        text: str,
        model: str | None,
    ) -> AsyncIterator[ChatEvent]:
        """The memory hooks, the prompt, claude's reply relayed and then stored.

        ``skipped``: the user's message id (sent as the new turn, not as history), then any
        partial reply of a failed try at it."""
        store, hooks = self.engine.store, self.engine.hooks
        session = outcome.session
        note = await _hook("memory flush", hooks.maybe_flush(session))
        if note:
            session = self.session = store.require(session.id)
            yield Notice(note)
        prompt, conversation = self._assemble(session, skipped, text, model)
        note = await _hook("compaction", hooks.maybe_compact(session, _needed(prompt, session)))
        if note:
            session = self.session = store.require(session.id)
            yield Notice(note)
            prompt, conversation = self._assemble(session, skipped, text, model)
        outcome.prompt = prompt
        yield PromptAssembled(session, prompt, model)
        if self._relay.cancel_requested:
            raise ClaudeCancelled()

        def fresh() -> AssembledPrompt:
            return self._assemble(session, skipped, text, model, live=False)[0]

        result = None
        async for event in self._run_claude(prompt, model, session, conversation, fresh):
            if isinstance(event, Result):
                result = event
                continue
            if isinstance(event, ToolCalled):
                writer.tool_call(event)
            yield event
        assert result is not None
        self._store_reply(writer, outcome, result, skipped[0])

    def _store_reply(
        self, writer: TurnWriter, outcome: TurnOutcome, result: Result, user_id: str
    ) -> None:
        """Store claude's reply and what it cost, and say so in ``outcome``."""
        if self._live.sent is not None:  # a fresh process took it whole: that was sent
            outcome.prompt = self._live.sent
        reply = strip_recalled(result.reply or self._streamed())
        outcome.reply_message_id = writer.reply(
            reply, model=result.model, usage=result.usage, cost=result.total_cost_usd
        )
        self._live.settle(user_id, outcome.reply_message_id)
        session = self.session = self.engine.store.record_usage(
            outcome.session.id,
            result.usage,
            model=result.model,
            context_window=result.context_window,
        )
        outcome.session = session
        outcome.reply = reply
        outcome.usage = result.usage
        outcome.model = result.model
        outcome.context_window = result.context_window
        outcome.cost = result.total_cost_usd

    def _streamed(self) -> str:
        return "".join(self._relay.streamed)

    def _assemble(
        self,
        session: ChatSession,
        skipped: list[str],
        text: str,
        model: str | None,
        *,
        live: bool = True,
    ) -> tuple[AssembledPrompt, LiveConversation | None]:
        """The prompt, and the live process that holds the conversation before it (if any,
        and ``live``: then only the new turn is sent)."""
        engine = self.engine
        history = engine.history(session, skip_ids=skipped)
        conversation = engine.conversation(session, history, model) if live else None
        prompt = engine.assemble(session, history, text, message_id=skipped[0], held=conversation)
        return prompt, conversation

    def _run_claude(
        self,
        prompt: AssembledPrompt,
        model: str | None,
        session: ChatSession,
        conversation: LiveConversation | None,
        fresh: Callable[[], AssembledPrompt],
    ) -> AsyncIterator[ChatEvent | Result]:
        """claude's reply, relayed from a task of its own: through the live process that holds
        the conversation, else a fresh one (a host with live conversations), else a one-shot
        ``claude -p``. ``fresh`` is the whole prompt, for when the live process turns out to
        have ended before it read the turn."""
        engine = self.engine
        live = engine.live

        def source() -> AsyncGenerator[Any, None]:
            if live is None:
                return engine.runner.stream(
                    prompt.prompt,
                    system_prompt=prompt.system_prompt,
                    model=model,
                    tools=engine.memory_tools(),
                )
            return self._live.events(
                live, conversation, prompt, fresh, session_id=session.id, key=session.key,
                spec=engine.process_spec(model),
            )  # fmt: skip

        def heard(model: str) -> None:
            if self.outcome is not None:
                self.outcome.model = model

        return self._relay.relay(source, heard)
