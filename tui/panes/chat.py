"""The chat pane: a native session's latest messages, the reply streaming in, and the input.

Turns run on the chat engine's own thread (:mod:`..engine`); its events come back onto the
app's loop in order and only update widgets here. What the user typed is never lost: it is on
disk before ``claude`` runs, and when a turn fails it goes back into the input. Chatting from a
Claude Code or OpenClaw session forks a native session from it on the first message.

This pane never writes to the database itself: everything goes through the engine.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from clawback.core.archive import Message, SessionSummary
from clawback.core.chat_events import (
    ChatEvent,
    Notice,
    ReplyDelta,
    SessionChanged,
    TurnFinished,
    TurnOutcome,
)
from clawback.core.chat_sessions import ChatSession
from clawback.core.errors import ClawbackError
from clawback.core.model import Source
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message as TextualMessage
from textual.timer import Timer
from textual.widgets import Static, TextArea
from textual.worker import get_current_worker

from ..format import source_label
from ..store import Store
from ..widgets.chat_input import COMMANDS, ChatInput, completions
from ..widgets.context_meter import ContextMeter, Usage
from ..widgets.markdown_text import markdown_content
from ..widgets.message_view import MessageView
from ..widgets.pane import Pane, stylesheet

if TYPE_CHECKING:
    from clawback.core.chat import ChatEngine

    from ..engine import EngineHost

HISTORY = 20  # earlier messages shown above the input when a session is opened
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
HELP = "\n".join(
    [*COMMANDS.values(), "", "Enter sends · Ctrl+J new line · Tab completes · Escape cancels"]
)


class ChatPane(Pane):
    TITLE = "Chat"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_turn", "Cancel reply"),
        Binding("ctrl+j", "noop", "New line"),  # handled by the input; listed for the footer
    ]

    @dataclass
    class TurnEnded(TextualMessage):
        """A turn wrote to ``session_id``'s transcript (which the engine has indexed)."""

        session_id: str

    @dataclass
    class LifecycleRequested(TextualMessage):
        """``/flush`` or ``/compact``: the compaction pane does it, for ``session_id``."""

        action: str
        session_id: str

    def __init__(self, store: Store, host: EngineHost, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.host = host
        self.session_id: str | None = None  # the native session the next turn continues
        self.fork_from: SessionSummary | None = None  # an archived session to fork first
        self.start_new = False
        self.model: str | None = None
        self.busy = False
        self._reply: Static | None = None
        self._reply_text = ""
        self._started = 0.0
        self._spinner: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="chat-header")
        yield VerticalScroll(id="chat-log")
        yield Static("", id="chat-status")
        yield Static("", id="chat-hint")
        yield ChatInput(id="chat-input")
        yield ContextMeter(id="chat-meter")

    def on_mount(self) -> None:
        self.border_title = self.TITLE
        self._show_header()
        self.query_one(ContextMeter).usage = Usage.of(None, self.store.config.chat)

    def focus_default(self) -> None:
        self.query_one(ChatInput).focus()

    # -- choosing the session -----------------------------------------------------------------

    def new_session(self) -> None:
        """The next message starts a fresh native session."""
        self.session_id, self.fork_from, self.start_new = None, None, True
        self.query_one("#chat-log", VerticalScroll).remove_children()
        self.query_one(ContextMeter).usage = Usage.of(None, self.store.config.chat)
        self._show_header()
        self.focus_default()

    def open_session(self, summary: SessionSummary) -> None:
        """Chat in ``summary``: continue it if native, else fork it on the first message."""
        native = summary.source == Source.NATIVE.value
        self.session_id = summary.id if native else None
        self.fork_from = None if native else summary
        self.start_new = False
        self._show_header(summary.title)
        self._load_history(summary.id)
        if native:
            self._load_usage(summary.id)

    @property
    def chat_session_id(self) -> str | None:
        return self.session_id

    def _show_header(self, title: str | None = None) -> None:
        if self.fork_from is not None:
            text = (
                f"Continuing “{self.fork_from.title[:60]}” ({source_label(self.fork_from.source)}):"
                " your first message starts a native session forked from it"
            )
        elif self.session_id is None:
            text = "New chat session: type a message, /help for commands"
        else:
            text = f"Chat · {title or self.session_id[:8]}"
        if self.model:
            text += f" · model {self.model}"
        self.query_one("#chat-header", Static).update(text)

    @work(thread=True, exclusive=True, group="chat-history", exit_on_error=False)
    def _load_history(self, session_id: str) -> None:
        messages = [m for m in self.store.messages(session_id) if m.kind != "summary"]
        messages = [m for m in messages if not m.sidechain][-HISTORY:]
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_history, messages)  # type: ignore[arg-type]

    async def _show_history(self, messages: list[Message]) -> None:
        log = self.query_one("#chat-log", VerticalScroll)
        await log.remove_children()
        await log.mount_all([MessageView(m) for m in messages])
        log.scroll_end(animate=False)

    @work(exclusive=True, group="chat-usage", exit_on_error=False)
    async def _load_usage(self, session_id: str) -> None:
        session = await self.host.call(lambda engine: engine.store.get(session_id))
        self._show_usage(session)

    def _show_usage(self, session: ChatSession | None) -> None:
        self.query_one(ContextMeter).usage = Usage.of(session, self.store.config.chat)

    # -- typing -------------------------------------------------------------------------------

    @on(TextArea.Changed, "#chat-input")
    def _typed(self, event: TextArea.Changed) -> None:
        found = completions(event.text_area.text)
        hint = self.query_one("#chat-hint", Static)
        hint.update("   ".join(COMMANDS[name] for name in found) + ("  (Tab)" if found else ""))
        hint.display = bool(found)

    @on(ChatInput.Submitted)
    def _submitted(self, event: ChatInput.Submitted) -> None:
        if self.busy:
            self.notify("Wait for the reply, or press Escape to cancel it.", severity="warning")
            return
        text = event.text.strip()
        word, _, rest = text.partition(" ")
        if word.startswith("/") and word[1:].isalpha() and word.lower() not in COMMANDS:
            self.notify(f"Unknown command {word}. /help lists them.", severity="warning")
            return
        command = word.lower() if word.lower() in COMMANDS else None
        if command == "/help":
            event.input.clear()
            self.notify(HELP, title="Chat commands", timeout=12)
        elif command == "/model":
            event.input.clear()
            self.model = rest.strip() or None
            self._show_header()
            self.notify(f"Model for the next turns: {self.model or 'the default'}.")
        elif command in ("/flush", "/compact"):
            if self.session_id is None:
                self.notify("Send a message first: there is no chat session yet.")
                return
            event.input.clear()
            self.post_message(self.LifecycleRequested(command[1:], self.session_id))
        else:  # a message, or /new, /reset, /label: the engine handles those
            event.input.clear()
            self._send(text)

    # -- a turn -------------------------------------------------------------------------------

    @work(exclusive=True, group="chat-turn", exit_on_error=False)
    async def _send(self, text: str) -> None:
        loop = asyncio.get_running_loop()
        session_id, fork_from, new, model = (
            self.session_id, self.fork_from, self.start_new, self.model
        )  # fmt: skip

        def deliver(event: ChatEvent) -> None:  # on the engine's thread
            loop.call_soon_threadsafe(self._on_event, event)

        async def run(engine: ChatEngine) -> TurnOutcome:
            sid = session_id
            parent = fork_from.id if fork_from is not None else None
            if sid is not None and engine.store.get(sid) is None:
                parent, sid = sid, None  # a native transcript clawback's chat never ran (imported)
            if parent is not None:
                fork = engine.fork(parent)
                deliver(SessionChanged(fork, "fork", parent))
                sid = fork.id
            turn = engine.turn(text, session_id=sid, model=model, new=new and sid is None)
            async for event in turn:
                deliver(event)
            assert turn.outcome is not None
            return turn.outcome

        await self._begin(text)
        try:
            await self.host.submit(run)
        except ClawbackError as exc:  # claude missing, not logged in, rate limited, timed out
            self._failed(text, str(exc))
        except Exception as exc:
            self._failed(text, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            self._end()

    async def _begin(self, text: str) -> None:
        self.busy, self._reply_text, self._started = True, "", time.monotonic()
        self.add_class("-busy")
        log = self.query_one("#chat-log", VerticalScroll)
        self._reply = Static("", classes="chat-reply -streaming")
        await log.mount_all([Static(text, classes="chat-user", markup=False), self._reply])
        log.scroll_end(animate=False)
        self._spinner = self.set_interval(0.1, self._tick)
        self._tick()

    def _tick(self) -> None:
        frame = SPINNER[int((time.monotonic() - self._started) * 10) % len(SPINNER)]
        elapsed = time.monotonic() - self._started
        what = "Claude is replying" if self._reply_text else "Waiting for Claude"
        self.query_one("#chat-status", Static).update(
            f"{frame} {what} · {elapsed:.1f} s · Escape cancels"
        )

    def _end(self) -> None:
        self.busy = False
        self.remove_class("-busy")
        if self._spinner is not None:
            self._spinner.stop()
        if self._reply is not None:
            self._reply.remove_class("-streaming")
        if self.session_id is not None:
            self.post_message(self.TurnEnded(self.session_id))

    def _on_event(self, event: ChatEvent) -> None:
        if not self.is_mounted:
            return
        if isinstance(event, SessionChanged):
            self.session_id, self.fork_from, self.start_new = event.session.id, None, False
            self._show_header(event.session.label)
            self._show_usage(event.session)
        elif isinstance(event, Notice):
            self.notify(event.text, title="Chat")
        elif isinstance(event, ReplyDelta):
            self._reply_text += event.text
            if self._reply is not None:
                self._reply.update(self._reply_text)
                self.query_one("#chat-log", VerticalScroll).scroll_end(animate=False)
        elif isinstance(event, TurnFinished):
            self._finished(event.outcome)

    def _finished(self, outcome: TurnOutcome) -> None:
        self._show_usage(outcome.session)
        reply = self._reply
        if reply is None:
            return
        if outcome.command is not None and not outcome.reply:
            reply.remove()  # /label, or /new without a message: nothing was asked
            what = "Session labelled." if outcome.command == "label" else "New session started."
            self.notify(what, title="Chat")
            return
        text = outcome.reply or self._reply_text
        if outcome.cancelled or outcome.partial:
            reply.add_class("-partial")
            reply.update(markdown_content(text + "\n\n*(partial: the reply was cancelled)*"))
        else:
            reply.update(markdown_content(text))

    def _failed(self, text: str, reason: str) -> None:
        self.notify(reason, title="Chat failed", severity="error", timeout=10)
        if self._reply is not None:
            self._reply.add_class("-partial")
            partial = self._reply_text + "\n\n" if self._reply_text else ""
            self._reply.update(markdown_content(f"{partial}*(no reply: {reason})*"))
        chat_input = self.query_one(ChatInput)
        typed = chat_input.text
        chat_input.text = text if not typed.strip() else f"{text}\n{typed}"  # never lost
        chat_input.move_cursor(chat_input.document.end)

    # -- keys ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.busy  # otherwise Escape means what it means elsewhere
        return True

    def action_cancel_turn(self) -> None:
        self.host.cancel()

    def action_noop(self) -> None:
        """Ctrl+J reaches the input first; this binding only documents it."""
