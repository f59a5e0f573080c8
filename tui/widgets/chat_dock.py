"""The chat input docked under a transcript: what the next message continues, the input, slash
commands, a spinner while Claude replies, the context meter, and what the last turn and the
session cost (tokens in, read from and written to the prompt cache, out; Claude Code's price).

Turns run on the chat engine's own thread (:mod:`..engine`); their events come back onto the
app's loop in order and go up as messages, so the transcript above shows the turn as it streams.
What the user typed is never lost: it is on disk before ``claude`` runs, and when a turn fails it
goes back into the input. Chatting from a Claude Code or OpenClaw session forks a native session
from it on the first message.

This widget never writes to the database itself: everything goes through the engine.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from clawback.core.archive import SessionSummary
from clawback.core.chat.events import (
    ApiRetrying,
    ChatEvent,
    Notice,
    ReplyDelta,
    SessionChanged,
    TurnFinished,
    TurnOutcome,
)
from clawback.core.chat.sessions import ChatSession
from clawback.core.chat.spend import SessionSpend, describe_session, describe_turn
from clawback.core.errors import ClawbackError
from clawback.core.records import Source
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static, TextArea

from ..format import source_label
from .chat_input import COMMANDS, ChatInput, completions
from .context_meter import ContextMeter, Usage
from .pane import stylesheet

if TYPE_CHECKING:
    from clawback.core.chat.engine import ChatEngine
    from clawback.core.chat.host import EngineHost
    from clawback.core.config import ChatConfig

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
KEYS = "Enter sends · Ctrl+J new line · Tab completes (again: the next) · Escape cancels a reply"
HELP = "\n".join([*COMMANDS.values(), KEYS])


class ChatDock(Vertical):
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_turn", "Cancel reply"),
        Binding("ctrl+j", "noop", "New line"),  # handled by the input; listed for the footer
    ]

    @dataclass
    class TurnStarted(Message):
        """``text`` was sent; the reply streams in as :class:`ReplyStreamed`."""

        text: str

    @dataclass
    class ReplyStreamed(Message):
        delta: str

    @dataclass
    class TurnEnded(Message):
        """A turn begun from ``origin`` (a session id, or None for a new chat) is over.

        ``session_id`` is the native session it wrote to, indexed already (None when the turn
        failed before one existed). ``failure`` is why there was no reply.
        """

        origin: str | None
        session_id: str | None
        outcome: TurnOutcome | None
        failure: str | None = None

    @dataclass
    class LifecycleRequested(Message):
        """``/flush`` or ``/compact``: the compaction pane does it, for ``session_id``."""

        action: str
        session_id: str

    def __init__(self, host: EngineHost, chat: ChatConfig, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.host, self.chat = host, chat
        self.session_id: str | None = None  # the native session the next turn continues
        self.fork_from: SessionSummary | None = None  # an archived session to fork first
        self.start_new = False
        self.model: str | None = None
        self.busy = False
        self._epoch = 0  # bumped whenever another session is attached
        self._started = 0.0
        self._streamed = False
        self._spinner: Timer | None = None
        self._retrying = ""  # claude is retrying a failing API call: how far it has got
        self._help_shown = False
        self._spent = ""  # what the session cost so far, for the header line

    def compose(self) -> ComposeResult:
        # The header and the meter start filled, with no on_mount looking them up: quitting as
        # the dock mounts prunes it before its children exist, and a lookup then raised.
        yield Static("", id="chat-hint")
        yield Static("", id="chat-status")
        yield ChatInput(id="chat-input")
        yield Static(self._header_text(), id="chat-header")
        meter = ContextMeter(id="chat-meter")
        meter.usage = Usage.of(None, self.chat)
        yield meter
        yield Static("", id="chat-spend")

    def focus_input(self) -> None:
        self.query_one(ChatInput).focus()

    # -- what the next message continues --------------------------------------------------------

    def new_session(self) -> None:
        """The next message starts a fresh native session."""
        self._point_at(None, None, start_new=True)
        self._show_usage(None)
        self._show_spend(None)

    def attach(self, summary: SessionSummary) -> None:
        """Chat in ``summary``: continue it if native, else fork it on the first message."""
        native = summary.source == Source.NATIVE.value
        self._point_at(summary.id if native else None, None if native else summary)
        if native:
            self._load_usage(summary.id)
        else:
            self._show_usage(None)
            self._show_spend(None)

    def _point_at(self, session_id: str | None, fork_from: SessionSummary | None, *,
                start_new: bool = False, follow: bool = False) -> None:  # fmt: skip
        """Point the next turn somewhere; ``follow``: where the running turn itself went."""
        self.session_id, self.fork_from, self.start_new = session_id, fork_from, start_new
        if not follow:
            self._epoch += 1  # a running turn's session changes no longer move the dock
        self._show_header()

    def _show_header(self) -> None:
        self.query_one("#chat-header", Static).update(self._header_text())

    def _header_text(self) -> Content:
        if self.fork_from is not None:
            origin = f"“{self.fork_from.title[:50]}” ({source_label(self.fork_from.source)})"
            text = f"Your first message starts a native session forked from {origin}"
        elif self.session_id is None:
            text = "New chat session · /help lists the commands"
        else:
            text = "Replying in this session · /help lists the commands"
        if self.model:
            text += f" · model {self.model}"
        if self._spent and self.session_id is not None:
            text += f" · {self._spent}"
        return Content(text)  # a title is not markup

    @work(exclusive=True, group="chat-usage", exit_on_error=False)
    async def _load_usage(self, session_id: str, turn: TurnOutcome | None = None) -> None:
        """The session's meter and what it cost so far (its transcript adds it up), then
        ``turn``'s own figures when one just ended."""

        def read(engine: ChatEngine) -> tuple[ChatSession | None, SessionSpend | None]:
            session = engine.store.get(session_id)
            spend = SessionSpend.of_transcript(session.transcript_path) if session else None
            return session, spend

        session, spend = await self.host.call(read)
        if session_id == self.session_id:
            self._show_usage(session)
            self._show_spend(spend, turn)

    def _show_usage(self, session: ChatSession | None) -> None:
        self.query_one(ContextMeter).usage = Usage.of(session, self.chat)

    def _show_spend(self, spend: SessionSpend | None, turn: TurnOutcome | None = None) -> None:
        """The session's figures go on the header line, the last turn's on a line of its own
        (shown once there is one)."""
        self._spent = describe_session(spend) if spend is not None and spend.turns else ""
        self._show_header()
        text = ""
        if turn is not None and turn.usage is not None:
            text = "last " + describe_turn(turn.usage, turn.cost, short=True)
        self.query_one("#chat-spend", Static).update(Content(text))
        self.set_class(bool(text), "-spent")

    # -- typing ---------------------------------------------------------------------------------

    @on(TextArea.Changed, "#chat-input")
    def _typed(self, event: TextArea.Changed) -> None:
        """Under a half-typed command, the commands it may become, one a line (Tab picks)."""
        text = event.text_area.text
        if not text and self._help_shown:
            return  # the input was cleared after /help: the list stays until one types
        found = completions(text) or completions(text.rstrip())  # Tab leaves a space after
        self._show_hint("\n".join(COMMANDS[name] for name in found) if found else "")

    def _show_hint(self, text: str, *, help_list: bool = False) -> None:
        self._help_shown = help_list
        hint = self.query_one("#chat-hint", Static)
        hint.update(Content(text))  # as written: "/new [model]" is not markup
        hint.display = bool(text)

    @on(ChatInput.Submitted)
    def _submitted(self, event: ChatInput.Submitted) -> None:
        if self.busy:
            self.notify(
                "Wait for the reply, or press Escape to cancel it.",
                severity="warning",
                markup=False,
            )
            return
        text = event.text.strip()
        word, _, rest = text.partition(" ")
        if word.startswith("/") and word[1:].isalpha() and word.lower() not in COMMANDS:
            self.notify(
                f"Unknown command {word}. /help lists them.", severity="warning", markup=False
            )
            return
        command = word.lower() if word.lower() in COMMANDS else None
        if command == "/help":
            event.input.clear()
            self._show_hint(HELP, help_list=True)  # stays until one types, unlike a toast
        elif command == "/model":
            event.input.clear()
            self.model = rest.strip() or None
            self._show_header()
            self.notify(f"Model for the next turns: {self.model or 'the default'}.", markup=False)
        elif command in ("/flush", "/compact"):
            if self.session_id is None:
                self.notify("Send a message first: there is no chat session yet.", markup=False)
                return
            event.input.clear()
            self.post_message(self.LifecycleRequested(command[1:], self.session_id))
        else:  # a message, or /new, /reset, /label: the engine handles those
            event.input.clear()
            self._send(text)

    # -- a turn ---------------------------------------------------------------------------------

    @work(exclusive=True, group="chat-turn", exit_on_error=False)
    async def _send(self, text: str) -> None:
        loop = asyncio.get_running_loop()
        session_id, fork_from, new, model = (
            self.session_id, self.fork_from, self.start_new, self.model
        )  # fmt: skip
        origin = session_id or (fork_from.id if fork_from else None)
        epoch, written = self._epoch, [session_id]

        def deliver(event: ChatEvent) -> None:  # on the engine's thread
            loop.call_soon_threadsafe(self._on_event, event, epoch, written)

        async def run(engine: ChatEngine) -> TurnOutcome:
            sid = origin
            if origin is not None:  # the engine decides: this chat, a live fork, or a new fork
                sid = engine.target(origin).session_id
                if sid is not None and sid != origin:
                    deliver(SessionChanged(engine.store.require(sid), "fork", origin))
            turn = engine.turn(text, session_id=sid, model=model, new=new and sid is None)
            async for event in turn:
                deliver(event)
            assert turn.outcome is not None
            return turn.outcome

        self._begin(text)
        outcome: TurnOutcome | None = None
        failure: str | None = None
        try:
            outcome = await self.host.submit(run)
        except ClawbackError as exc:  # claude missing, not logged in, rate limited, timed out
            failure = str(exc)
            self.notify(f"{failure}\nYour message is back in the input.", title="Chat failed",
                        severity="error", timeout=10, markup=False)  # fmt: skip
        except BaseException as exc:  # a bug: the app's worker-failure handler reports it
            failure = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self._end(text, failure)
            self.post_message(self.TurnEnded(origin, written[-1], outcome, failure))

    def _begin(self, text: str) -> None:
        self.busy, self._streamed, self._started = True, False, time.monotonic()
        self._retrying = ""
        self.add_class("-busy")
        self.post_message(self.TurnStarted(text))
        self._spinner = self.set_interval(0.1, self._tick)
        self._tick()

    def _tick(self) -> None:
        elapsed = time.monotonic() - self._started
        frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
        what = "Claude is replying" if self._streamed else "Waiting for Claude"
        if self._retrying and not self._streamed:
            what = self._retrying
        self.query_one("#chat-status", Static).update(
            f"{frame} {what} · {elapsed:.1f} s · Escape cancels"
        )

    def _end(self, text: str, failure: str | None) -> None:
        if not self.is_mounted:
            return  # the app is closing: the message is on disk already
        self.busy = False
        self.remove_class("-busy", "-retrying")
        if self._spinner is not None:
            self._spinner.stop()
        if failure is None:
            return
        chat_input = self.query_one(ChatInput)
        typed = chat_input.text
        chat_input.text = text if not typed.strip() else f"{text}\n{typed}"  # never lost
        chat_input.move_cursor(chat_input.document.end)

    def _on_event(self, event: ChatEvent, epoch: int, written: list[str | None]) -> None:
        if not self.is_mounted:
            return
        if isinstance(event, SessionChanged):
            written.append(event.session.id)
            if epoch == self._epoch:  # still showing where the turn began: follow it there
                self._point_at(event.session.id, None, follow=True)
                self._show_usage(event.session)
        elif isinstance(event, ApiRetrying):  # a 429 or 529: claude waits minutes on its own
            self._retrying = event.text
            self.add_class("-retrying")
            self._tick()
        elif isinstance(event, Notice):
            self.notify(event.text, title="Chat", markup=False)
        elif isinstance(event, ReplyDelta):
            self._streamed = True
            self.post_message(self.ReplyStreamed(event.text))
        elif isinstance(event, TurnFinished):
            written.append(event.outcome.session.id)
            if epoch == self._epoch:
                self._show_usage(event.outcome.session)
                self._load_usage(event.outcome.session.id, event.outcome)
            if event.outcome.command is not None and not event.outcome.reply:
                label = event.outcome.command == "label"
                self.notify(
                    "Session labelled." if label else "New session started.",
                    title="Chat",
                    markup=False,
                )

    # -- keys -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.busy  # otherwise Escape means what it means elsewhere
        return True

    def action_cancel_turn(self) -> None:
        self.host.cancel()

    def action_noop(self) -> None:
        """Ctrl+J reaches the input first; this binding only documents it."""
