"""One chat turn in flight: the steps after the session is chosen, and how a turn ends.

:class:`ChatTurn` is what :meth:`ChatEngine.turn <clawback.core.chat.engine.ChatEngine.turn>`
returns: iterate it for events, call :meth:`ChatTurn.cancel` to stop it. It persists the user's
message before anything can fail, runs the lifecycle hooks, relays the ``claude`` stream from a
task of its own (so a cancel stops just ``claude``), stores the reply, and on every other way out
keeps what streamed as a ``partial`` reply plus a ``system`` note saying what failed.

This module must never lose what the user typed and never store a recalled block.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from clawback.core.chat.events import (
    ApiRetrying,
    ChatEvent,
    Notice,
    PromptAssembled,
    ReplyDelta,
    SessionChanged,
    ThresholdHooks,
    ToolCalled,
    TurnFinished,
    TurnOutcome,
)
from clawback.core.chat.live import LiveConversation, LiveConversations, LiveTurn, ProcessSpec
from clawback.core.chat.prompt import AssembledPrompt, History
from clawback.core.chat.sessions import ChatSession, SessionStore
from clawback.core.chat.spend import usage_json
from clawback.core.chat.transcript import Transcript, TranscriptMessage
from clawback.core.claude.errors import ClaudeCancelled, ClaudeError
from clawback.core.claude.events import (
    ApiRetry,
    AssistantMessage,
    Result,
    SystemInit,
    TextDelta,
    Usage,
)
from clawback.core.claude.mcp import McpTools
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.errors import ClawbackError, UsageError
from clawback.core.formats.native import (
    message_event,
    tool_call_event,
    tool_call_summary,
)
from clawback.core.recall import strip_recalled
from clawback.core.timeutil import format_ts

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


def _retried(messages: list[TranscriptMessage], text: str) -> tuple[str, list[str]] | None:
    """A retry of a turn that got no reply: the stored message's id, and the partial reply
    (if any) that came after it.

    When a turn fails, its message goes back into the input; sending it again must neither
    store it twice nor show claude both copies. So if the last message is the user's, with
    this text, and nothing but system notes and a cut-short reply came after it, the turn
    reuses it and leaves that partial reply out of the history it sends.
    """
    after: list[str] = []
    for message in reversed(messages):
        if message.role == "system":
            continue
        if message.role == "assistant" and message.partial:
            after.append(message.id)
            continue
        if message.role == "user" and message.content == text:
            return message.id, after
        return None
    return None


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
        self._pump: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cancel_requested = False
        self._streamed: list[str] = []
        self._settled = False
        self._transcript: Transcript | None = None
        self._started = False
        # the live process this turn went through, and the message ids it held before it
        self._live = LiveTurn()  # where it went, in a host with live conversations

    def cancel(self) -> None:
        """Stop ``claude`` and keep the partial reply; safe from any thread, and before start."""
        self._cancel_requested = True
        pump, loop = self._pump, self._loop
        if pump is not None and loop is not None and not pump.done():
            loop.call_soon_threadsafe(pump.cancel)

    def __aiter__(self) -> AsyncIterator[ChatEvent]:
        if self._started:
            raise RuntimeError("a ChatTurn can be iterated only once")
        self._started = True
        return self._events()

    # -- the pipeline ---------------------------------------------------------------------------

    async def _events(self) -> AsyncIterator[ChatEvent]:
        engine = self.engine
        engine.running.add(self)
        self._loop = asyncio.get_running_loop()
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
        engine, store, hooks = self.engine, self.engine.store, self.engine.hooks
        transcript = self._transcript = store.ensure_transcript(session)
        user_text = strip_recalled(plan.message)
        retried = _retried(transcript.read().messages, user_text)
        skip: list[str]
        if retried is None:
            user_id, skip = str(uuid.uuid4()), []
            transcript.append(
                [message_event(user_id, "user", user_text, format_ts(engine.clock()))], sync=True
            )
            store.record_messages(session.id, 1)
            engine.index(transcript.path)  # searchable while the reply is still coming
        else:  # the same message again after a failed turn: it is on disk already
            user_id, skip = retried
        session = self.session = store.require(session.id)
        outcome = TurnOutcome(
            session, new_session=plan.new_session, user_message_id=user_id, model=plan.model
        )
        self.outcome = outcome
        try:
            note = await _hook("memory flush", hooks.maybe_flush(session))
            if note:
                session = self.session = store.require(session.id)
                yield Notice(note)
            skipped = [user_id, *skip]
            prompt, conversation = self._assemble(session, skipped, user_text, plan.model)
            note = await _hook("compaction", hooks.maybe_compact(session, _needed(prompt, session)))
            if note:
                session = self.session = store.require(session.id)
                yield Notice(note)
                prompt, conversation = self._assemble(session, skipped, user_text, plan.model)
            outcome.prompt = prompt
            yield PromptAssembled(session, prompt, plan.model)
            if self._cancel_requested:
                raise ClaudeCancelled()
            result = None

            def fresh() -> AssembledPrompt:
                return self._assemble(session, skipped, user_text, plan.model, live=False)[0]

            events = self._run_claude(prompt, plan.model, session, conversation, fresh)
            async for event in events:
                if isinstance(event, Result):
                    result = event
                elif isinstance(event, ToolCalled):
                    line = tool_call_event(
                        str(uuid.uuid4()), event.name, event.input, format_ts(engine.clock())
                    )
                    transcript.append([line])  # shown in the transcript, never replayed
                    yield event
                elif isinstance(event, ReplyDelta | Notice):
                    yield event
            assert result is not None
            if self._live.sent is not None:  # a fresh process took it whole: that was sent
                outcome.prompt = self._live.sent
            reply = strip_recalled(result.reply or "".join(self._streamed))
            outcome.reply_message_id = self._append_reply(
                reply, model=result.model, usage=result.usage, cost=result.total_cost_usd
            )
            self._live.settle(user_id, outcome.reply_message_id)
            session = self.session = store.record_usage(
                session.id, result.usage, model=result.model, context_window=result.context_window
            )
            outcome.session = session
            outcome.reply = reply
            outcome.usage = result.usage
            outcome.model = result.model
            outcome.context_window = result.context_window
            outcome.cost = result.total_cost_usd
        except ClaudeCancelled as exc:
            self._keep_partial(exc.partial_text, outcome, cancelled=True)
            self._live.settle(user_id, outcome.reply_message_id)  # if the interrupt landed
            if not self._cancel_requested:  # the iterating task itself was cancelled
                raise
        except ClaudeError as exc:
            self._keep_partial(exc.partial_text, outcome, error=exc)
            raise
        except BaseException as exc:
            if not self._settled:
                reason = exc if isinstance(exc, Exception) else None
                streamed = "".join(self._streamed)
                self._keep_partial(streamed, outcome, cancelled=reason is None, error=reason)
            raise
        finally:
            await self._stop_pump()
            if self._live.conversation is not None and engine.live is not None:
                engine.live.touch(self._live.conversation)
            transcript.sync()
            engine.index(transcript.path)
            outcome.session = store.get(session.id) or outcome.session
        note = await _hook("after-turn check", hooks.after_turn(outcome.session, outcome))
        if note:
            yield Notice(note)
        yield TurnFinished(outcome)

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

    async def _run_claude(
        self,
        prompt: AssembledPrompt,
        model: str | None,
        session: ChatSession,
        conversation: LiveConversation | None,
        fresh: Callable[[], AssembledPrompt],
    ) -> AsyncIterator[Any]:
        """Run claude in a task of its own (so :meth:`cancel` can stop just it) and relay: the
        live process that holds the conversation, else a fresh one (a host with live
        conversations), else a one-shot ``claude -p``. ``fresh`` is the whole prompt, for when
        the live process turns out to have ended before it read the turn."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()
        engine = self.engine
        live = engine.live

        def stream() -> AsyncGenerator[Any, None]:
            return engine.runner.stream(
                prompt.prompt,
                system_prompt=prompt.system_prompt,
                model=model,
                tools=engine.memory_tools(),
            )

        def through_live(live: LiveConversations) -> AsyncGenerator[Any, None]:
            return self._live.events(
                live, conversation, prompt, fresh, session_id=session.id, key=session.key,
                spec=engine.process_spec(model),
            )  # fmt: skip

        async def pump() -> None:
            try:
                events = through_live(live) if live is not None else stream()
                async with contextlib.aclosing(events):
                    async for event in events:
                        queue.put_nowait(event)
                queue.put_nowait(done)
            except asyncio.CancelledError as exc:
                # also while claude was starting, before its reader makes it a ClaudeCancelled
                queue.put_nowait(exc if isinstance(exc, ClaudeCancelled) else ClaudeCancelled())
            except BaseException as exc:  # hand it to the reader
                queue.put_nowait(exc)

        def unstarted(task: asyncio.Task[None]) -> None:
            # cancelled before its first step, its body never ran to hand anything over
            if task.cancelled():
                queue.put_nowait(ClaudeCancelled())

        self._pump = asyncio.create_task(pump())
        self._pump.add_done_callback(unstarted)
        if self._cancel_requested:  # from another thread, since the check before the prompt
            self._pump.cancel()
        saw_delta = False
        while True:
            item = await queue.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, TextDelta):
                saw_delta = True
                self._streamed.append(item.text)
                yield ReplyDelta(item.text)
            elif isinstance(item, AssistantMessage):
                if not item.is_api_error and not saw_delta and item.text:
                    self._streamed.append(item.text)
                    yield ReplyDelta(item.text)
                for call in item.tool_calls:
                    summary = tool_call_summary(call.name, call.input)
                    yield ToolCalled(call.name, dict(call.input), summary)
            elif isinstance(item, SystemInit):
                if item.model and self.outcome is not None:
                    self.outcome.model = item.model
            elif isinstance(item, ApiRetry):
                status = f" ({item.error_status})" if item.error_status else ""
                yield ApiRetrying(
                    f"claude is retrying the API{status}: attempt {item.attempt}"
                    f" of {item.max_retries}",
                    item.attempt,
                    item.max_retries,
                    item.error_status,
                )
            elif isinstance(item, Result):
                yield item

    async def _stop_pump(self) -> None:
        pump = self._pump
        if pump is None or pump.done():
            return
        pump.cancel()
        try:
            await asyncio.shield(pump)
        except asyncio.CancelledError:
            # cancelled again while the process was being stopped: wait for it regardless
            with contextlib.suppress(BaseException):
                await pump
            raise

    # -- persistence ----------------------------------------------------------------------------

    def _append_reply(
        self,
        text: str,
        *,
        model: str | None,
        usage: Usage | None = None,
        cost: float | None = None,
        partial: bool = False,
    ) -> str:
        assert self._transcript is not None and self.session is not None
        reply_id = str(uuid.uuid4())
        counted = usage_json(usage, cost) if usage is not None else None
        line = message_event(
            reply_id, "assistant", text, format_ts(self.engine.clock()), model=model,
            usage=counted, partial=partial,
        )  # fmt: skip
        self._transcript.append([line], sync=True)
        self.engine.store.record_messages(self.session.id, 1)
        self._settled = True
        return reply_id

    def _keep_partial(
        self,
        partial_text: str,
        outcome: TurnOutcome,
        *,
        cancelled: bool = False,
        error: BaseException | None = None,
    ) -> None:
        """Record how a turn that did not complete ended: partial reply, then a system note."""
        if self._settled or self._transcript is None or self.session is None:
            return
        self._settled = True
        text = strip_recalled(partial_text or "".join(self._streamed))
        if text.strip():
            outcome.reply_message_id = self._append_reply(text, model=outcome.model, partial=True)
        outcome.reply = text
        outcome.partial = bool(text)
        outcome.cancelled = cancelled
        if error is not None:
            outcome.is_error = True
            outcome.error = " ".join(str(error).split())
            note = f"The claude call failed: {outcome.error}"
            line = message_event(str(uuid.uuid4()), "system", note, format_ts(self.engine.clock()))
            self._transcript.append([line], sync=True)
