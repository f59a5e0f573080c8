"""The transcript pane: one session's messages, and the chat input under them.

The messages are fetched once, in a thread worker, and mounted a window at a time
(:mod:`..widgets.message_window`); a live session's new messages are appended in place, so a
Claude Code session running in another terminal can be followed here.

Under a native session sits the chat input (:mod:`..widgets.chat_dock`): a reply streams into
the transcript above it. From a Claude Code or OpenClaw session, ``r`` shows the input too, and
the first message forks a native session from the one on screen, which the pane then opens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from clawback.core.archive import Message, SessionSummary
from clawback.core.config import atomic_write_bytes
from clawback.core.records import Source
from clawback.core.search import SearchHit
from clawback.core.usage import UsageTotals
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static
from textual.worker import get_current_worker

from ..format import local_time, origin_label, plural, source_label, usage_label
from ..screens.dialogs import PromptScreen
from ..store import Store
from ..widgets.chat_dock import ChatDock
from ..widgets.chat_input import ChatInput
from ..widgets.message_view import MessageView, in_reading_order
from ..widgets.message_window import CONTEXT_BEFORE, MessageWindow, failure_note
from ..widgets.pane import Pane, stylesheet

if TYPE_CHECKING:
    from clawback.core.chat.host import EngineHost


@dataclass
class Target:
    """Where to land when opening a session: the hit's entry, and a highlighted excerpt."""

    entry_id: int
    file: str
    line: int
    snippet: str | None = None  # matched words between MARK_START and MARK_END

    @classmethod
    def of(cls, hit: SearchHit) -> Target:
        return cls(hit.entry_id, hit.file, hit.line, hit.snippet)


class TranscriptPane(Pane):
    TITLE = "Transcript"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        # k is listed with j: "Move" in the footer, the whole of it in help (the tooltip)
        Binding("j", "next_message", "Move", key_display="j/k", tooltip="Next or previous message"),
        Binding("k", "previous_message", "Previous message", show=False),
        Binding("a", "toggle_sidechains", "Sub-agents"),  # s is Source in the sessions list
        Binding("e", "export", "Export"),
        Binding("r", "chat", "Reply"),
        Binding("g,home", "top", "Top", show=False),
        Binding("G,end", "bottom", "Bottom", show=False),
        Binding("escape", "leave_input", "Messages", show=False),
    ]

    show_sidechains: var[bool] = var(False)

    def __init__(self, store: Store, host: EngineHost, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        self.session: SessionSummary | None = None
        self._opening: str | None = None  # a session being loaded
        self._messages: list[Message] = []  # every message of the session, sidechains too
        self._usage: UsageTotals | None = None  # what the session cost
        self._failure: tuple[str, str] | None = None  # a note for a session about to be opened
        self.dock = ChatDock(host, store.config.chat, id="chat-dock")  # mounted when first needed
        self.set_reactive(TranscriptPane.show_sidechains, store.config.ui.show_sidechains)

    def compose(self) -> ComposeResult:
        yield Static("", id="transcript-header")
        yield MessageWindow(id="messages")
        yield Static(
            "Pick a session on the left, press / to search every session, or Ctrl+N to chat.",
            id="transcript-empty",
        )

    def on_mount(self) -> None:
        self.border_title = self.TITLE
        self.add_class("-empty")

    @property
    def window(self) -> MessageWindow:
        return self.query_one(MessageWindow)

    @property
    def chat_session_id(self) -> str | None:
        """The native session the chat input continues, if any."""
        return self.dock.session_id

    def not_compactable(self) -> str | None:
        """Why the session on screen has no compaction pane (compaction is for clawback's own
        chats), or None when it has one or nothing is on screen."""
        session = self.session
        if session is None or session.source == Source.NATIVE.value:
            return None
        title, tool = " ".join(session.title.split())[:60], source_label(session.source)
        return (
            f"Compaction works on clawback's own chats; “{title}” is a {tool} session, which "
            f"{tool} compacts itself. Press r to reply in a clawback chat forked from it, or "
            "Ctrl+N to start a new one."
        )

    def focus_default(self) -> None:
        views = self.query(MessageView)
        (views.first() if views else self.window).focus()

    # -- opening ------------------------------------------------------------------------------

    def open(self, session_id: str, target: Target | None = None, *, focus: bool = False) -> None:
        """Show ``session_id``; reopening the shown session without a target does nothing."""
        shown = self._opening or (self.session.id if self.session else None)
        if session_id == shown and target is None:
            if focus:
                self.focus_default()
            return
        self._opening = session_id
        self._load(session_id, target, focus)

    @work(thread=True, exclusive=True, group="transcript", exit_on_error=False)
    def _load(self, session_id: str, target: Target | None, focus: bool) -> None:
        try:
            session = self.store.session(session_id)
            messages = [m for m in self.store.messages(session_id) if m.kind != "summary"]
            usage = self.store.session_usage([session_id]).get(session_id)
        except Exception:
            self.app.call_from_thread(setattr, self, "_opening", None)  # let a retry through
            raise
        if not get_current_worker().is_cancelled:  # a newer session was picked meanwhile
            self.app.call_from_thread(self._show_session, session, messages, target, focus, usage)  # type: ignore[arg-type]

    async def _show_session(
        self,
        session: SessionSummary,
        messages: list[Message],
        target: Target | None,
        focus: bool,
        usage: UsageTotals | None = None,
    ) -> None:
        self.session, self._opening = session, None
        self._messages, self._usage = messages, usage
        self.remove_class("-empty")
        native = session.source == Source.NATIVE.value
        self.set_class(native, "-chat")
        if native or self.dock.is_mounted:
            (await self._chat_dock()).attach(session)
        if target is not None and any(m.sidechain and _hits(m, target) for m in messages):
            self.set_reactive(TranscriptPane.show_sidechains, True)
        visible = self._filter(messages)
        index = next((i for i, m in enumerate(visible) if _hits(m, target)), None)
        match = {}
        if index is not None and target is not None and target.snippet is not None:
            match[visible[index].entry_id] = target.snippet
        start = 0 if index is None else max(0, index - CONTEXT_BEFORE)
        window = self.window
        await window.show(visible, start, match)
        self._show_header()
        if self._failure is not None and self._failure[0] == session.id:
            await window.add_failure_note(self._failure[1])
        self._failure = None
        if index is None:
            window.scroll_home(animate=False)
            if focus:
                self.focus_default()
            return
        view = next(v for v in self.query(MessageView) if _hits(v.message, target))
        view.focus(scroll_visible=False)
        self.call_after_refresh(window.scroll_to_widget, view, animate=False, top=True)

    def _filter(self, messages: list[Message]) -> list[Message]:
        if self.show_sidechains:
            return in_reading_order(messages)
        return in_reading_order([m for m in messages if not m.sidechain])

    def _show_header(self) -> None:
        session = self.session
        header = self.query_one("#transcript-header", Static)
        if session is None:
            self.border_title = "New chat"
            header.update("A new native session starts with your first message.")
            return
        self.border_title = Content(" ".join(session.title.split())[:80])  # never markup
        hidden = len(self._messages) - len(self.window.messages)
        facts = [
            origin_label(session.source, session.key),
            local_time(session.started_at),
            plural(session.message_count, "message"),
            usage_label(self._usage),
            session.cwd or "",
            f"{plural(hidden, 'sub-agent entry', 'sub-agent entries')} hidden (a)"
            if hidden
            else "",
            "source deleted: archived copy" if session.source_missing else "",
        ]
        header.update(Content(" · ".join(f for f in facts if f)))

    async def show_nothing(self) -> None:
        """The list shows no session, so neither does the transcript (a reply streaming into
        the one on screen keeps it)."""
        if self.dock.busy or self.session is None:
            return
        self.workers.cancel_group(self, "transcript")
        self.session, self._opening, self._messages, self._usage = None, None, [], None
        self.remove_class("-chat")
        self.add_class("-empty")
        self.border_title = self.TITLE
        await self.window.show([])

    # -- chatting -------------------------------------------------------------------------------

    async def new_chat(self) -> None:
        """An empty transcript whose input starts a fresh native session."""
        self.workers.cancel_group(self, "transcript")
        self.session, self._opening, self._messages, self._usage = None, None, [], None
        self.remove_class("-empty")
        self.add_class("-chat")
        await self.window.show([])
        self._show_header()
        dock = await self._chat_dock()
        dock.new_session()
        dock.focus_input()

    async def action_chat(self) -> None:
        """Type a message for the session on screen (a new one when there is none)."""
        if self.session is None and self.has_class("-empty"):
            await self.new_chat()
            return
        if not self.dock.is_mounted and self.session is not None:
            (await self._chat_dock()).attach(self.session)
        self.add_class("-chat")
        self.dock.focus_input()

    async def _chat_dock(self) -> ChatDock:
        """The chat input, mounted the first time it is needed (start-up stays light)."""
        if not self.dock.is_mounted:
            await self.mount(self.dock)
        return self.dock

    def action_leave_input(self) -> None:
        if self.dock.is_mounted and self.dock.query_one(ChatInput).has_focus:
            self.focus_default()

    def _showing(self) -> str | None:
        return self.session.id if self.session is not None else None

    @on(ChatDock.TurnStarted)
    async def _turn_started(self, event: ChatDock.TurnStarted) -> None:
        await self.window.begin_turn(event.text)

    @on(ChatDock.ReplyStreamed)
    def _reply_streamed(self, event: ChatDock.ReplyStreamed) -> None:
        self.window.stream(event.delta)

    @on(ChatDock.TurnEnded)
    async def _turn_ended(self, event: ChatDock.TurnEnded) -> None:
        """Let the stored messages replace the turn's bubbles, in a new session if it made one.

        The message goes on to the app, which refreshes the rest of the screen.
        """
        outcome = event.outcome
        self.window.end_turn(
            reply=outcome.reply if outcome else None,
            cancelled=bool(outcome and (outcome.cancelled or outcome.partial)),
            failure=event.failure,
        )
        if self._showing() != event.origin or self._opening is not None:
            return  # another session was opened meanwhile
        if event.session_id is not None and event.session_id != event.origin:
            if event.failure is not None:  # the session was made, its first turn failed
                self._failure = (
                    event.session_id,
                    failure_note(self.window.reply_text, event.failure),
                )
            self.open(event.session_id)  # a new session, or a fork of the one on screen
        elif self.session is not None:
            self._append_new(self.session.id, self._last_entry(), turn_over=True)
        else:
            await self.window.append([], turn_over=True)

    # -- live updates -------------------------------------------------------------------------

    def archive_changed(self) -> None:
        if self.session is not None:
            self._append_new(self.session.id, self._last_entry(), turn_over=not self.dock.busy)

    def _last_entry(self) -> int:
        return max((m.entry_id for m in self._messages), default=0)

    @work(thread=True, exclusive=True, group="transcript-live", exit_on_error=False)
    def _append_new(self, session_id: str, after_entry: int, turn_over: bool) -> None:
        new = self.store.messages(session_id, after_entry=after_entry)
        if new or turn_over:
            session = self.store.session(session_id)
            usage = self.store.session_usage([session_id]).get(session_id)
            self.app.call_from_thread(self._append, session, new, turn_over, usage)  # type: ignore[arg-type]

    async def _append(
        self,
        session: SessionSummary,
        new: list[Message],
        turn_over: bool,
        usage: UsageTotals | None = None,
    ) -> None:
        if self.session is None or session.id != self.session.id:
            return
        self._usage = usage
        known = {m.entry_id for m in self._messages}
        new = [m for m in new if m.entry_id not in known and m.kind != "summary"]
        self.session = session
        self._messages += new
        await self.window.append(self._filter(new), turn_over=turn_over)
        self._show_header()

    # -- actions ------------------------------------------------------------------------------

    def _focused_index(self) -> int | None:
        views = list(self.query(MessageView))
        focused = self.screen.focused
        return views.index(focused) if focused in views else None

    def action_next_message(self) -> None:
        views = list(self.query(MessageView))
        index = self._focused_index()
        nxt = 0 if index is None else index + 1
        if nxt < len(views):
            views[nxt].focus()

    async def action_previous_message(self) -> None:
        views = list(self.query(MessageView))
        index = self._focused_index()
        if index == 0 and self.window.start > 0:
            await self.window.extend_start()
        elif index is not None and index > 0:
            views[index - 1].focus()

    async def watch_show_sidechains(self, show: bool) -> None:
        if self.session is None:
            return
        await self.window.show(self._filter(self._messages))
        self._show_header()
        self.notify(f"Sub-agent messages {'shown' if show else 'hidden'}.", markup=False)

    def action_toggle_sidechains(self) -> None:
        self.show_sidechains = not self.show_sidechains

    async def action_top(self) -> None:
        await self.window.top()

    async def action_bottom(self) -> None:
        await self.window.bottom()

    def action_export(self) -> None:
        if self.session is None:
            self.notify("Open a session first.", severity="warning", markup=False)
            return
        session = self.session
        slug = re.sub(r"[^a-z0-9]+", "-", session.title.lower()).strip("-")[:40] or "session"
        # One documented place (exports/ in the clawback home), not whatever folder the app
        # happened to start in; the dialog lets one type any other path.
        default = str(self.store.paths.home / "exports" / f"{slug}-{session.id[:8]}.md")

        def export(path: str | None) -> None:
            if path:
                self._export(session.id, Path(path).expanduser())

        self.app.push_screen(PromptScreen("Export this session as markdown to:", default), export)

    @work(thread=True, group="export", exit_on_error=False)
    def _export(self, session_id: str, path: Path) -> None:
        text = self.store.export_markdown(session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, text.encode("utf-8"))
        self.app.call_from_thread(self.notify, f"Exported to {path}", title="Export", markup=False)


def _hits(message: Message, target: Target | None) -> bool:
    if target is None:
        return False
    return message.entry_id == target.entry_id or (
        message.file == target.file and message.line == target.line
    )
