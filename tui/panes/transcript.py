"""The transcript pane: one session's messages, rendered a window at a time.

A session can hold thousands of messages and each rendered message is a small tree of widgets,
so only a window of them is mounted: the first page on open (or the page around a search hit),
more as the view nears the end, earlier ones on request. The messages themselves are fetched
once, in a thread worker; a live session's new messages are appended in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from clawback.core.archive import Message, SessionSummary
from clawback.core.config import atomic_write_bytes
from clawback.core.search import SearchHit
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message as TextualMessage
from textual.reactive import var
from textual.widgets import Static
from textual.worker import get_current_worker

from ..format import local_time, plural, source_label
from ..screens.dialogs import PromptScreen
from ..store import Store
from ..widgets.message_view import MessageView
from ..widgets.pane import Pane, stylesheet

PAGE = 30
CONTEXT_BEFORE = 8  # messages shown above a search hit


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


class MessageScroll(VerticalScroll):
    @dataclass
    class NearedEnd(TextualMessage):
        pass

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.max_scroll_y and new >= self.max_scroll_y - self.size.height:
            self.post_message(self.NearedEnd())


class LoadEarlier(Static, can_focus=True):
    """Stands in for the messages above the window; Enter or a click mounts them."""

    @dataclass
    class Pressed(TextualMessage):
        pass

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter,space", "press", "Load earlier")]

    def action_press(self) -> None:
        self.post_message(self.Pressed())

    def on_click(self) -> None:
        self.action_press()


class TranscriptPane(Pane):
    TITLE = "Transcript"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "next_message", "Next message", show=False),
        Binding("k", "previous_message", "Previous message", show=False),
        Binding("s", "toggle_sidechains", "Sub-agents"),
        Binding("e", "export", "Export"),
        Binding("r", "chat", "Reply here"),
        Binding("g,home", "top", "Top", show=False),
        Binding("G,end", "bottom", "Bottom", show=False),
    ]

    show_sidechains: var[bool] = var(False)

    @dataclass
    class ChatRequested(TextualMessage):
        """Chat in ``session`` (a native one continues, any other is forked)."""

        session: SessionSummary

    def __init__(self, store: Store, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.session: SessionSummary | None = None
        self._opening: str | None = None  # a session being loaded
        self._messages: list[Message] = []  # every message of the session, sidechains too
        self._visible: list[Message] = []
        self._start = self._end = 0
        self._extending = False
        self.set_reactive(TranscriptPane.show_sidechains, store.config.ui.show_sidechains)

    def compose(self) -> ComposeResult:
        yield Static("", id="transcript-header")
        yield MessageScroll(id="messages")
        yield Static(
            "Pick a session on the left, or press / to search every session.",
            id="transcript-empty",
        )

    def on_mount(self) -> None:
        self.border_title = self.TITLE
        self.add_class("-empty")

    def focus_default(self) -> None:
        views = self.query(MessageView)
        (views.first() if views else self.query_one(MessageScroll)).focus()

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
        except Exception:
            self.app.call_from_thread(setattr, self, "_opening", None)  # let a retry through
            raise
        if not get_current_worker().is_cancelled:  # a newer session was picked meanwhile
            self.app.call_from_thread(self._show_session, session, messages, target, focus)  # type: ignore[arg-type]

    async def _show_session(
        self,
        session: SessionSummary,
        messages: list[Message],
        target: Target | None,
        focus: bool,
    ) -> None:
        self.session, self._opening = session, None
        self._messages = messages
        self.remove_class("-empty")
        if target is not None and any(m.sidechain and _hits(m, target) for m in messages):
            self.set_reactive(TranscriptPane.show_sidechains, True)
        self._visible = self._filter(messages)
        self._show_header()
        index = next((i for i, m in enumerate(self._visible) if _hits(m, target)), None)
        start = 0 if index is None else max(0, index - CONTEXT_BEFORE)
        await self._render_window(start, min(len(self._visible), start + PAGE), target)
        scroll = self.query_one(MessageScroll)
        if index is None:
            scroll.scroll_home(animate=False)
            if focus:
                self.focus_default()
            return
        view = next(v for v in self.query(MessageView) if _hits(v.message, target))
        view.focus(scroll_visible=False)
        self.call_after_refresh(scroll.scroll_to_widget, view, animate=False, top=True)

    def _filter(self, messages: list[Message]) -> list[Message]:
        if self.show_sidechains:
            return messages
        return [m for m in messages if not m.sidechain]

    def _show_header(self) -> None:
        session = self.session
        if session is None:
            return
        self.border_title = session.title[:80]
        hidden = len(self._messages) - len(self._visible)
        facts = [
            source_label(session.source),
            local_time(session.started_at),
            plural(session.message_count, "message"),
            session.cwd or "",
            f"{plural(hidden, 'sub-agent entry')} hidden (s)" if hidden else "",
            "source deleted: archived copy" if session.source_missing else "",
        ]
        header = self.query_one("#transcript-header", Static)
        header.update(" · ".join(f for f in facts if f))

    async def _render_window(self, start: int, end: int, target: Target | None = None) -> None:
        scroll = self.query_one(MessageScroll)
        await scroll.remove_children()
        self._start, self._end = start, end
        views: list[Static | MessageView] = []
        if start:
            views.append(LoadEarlier(f"▲ {plural(start, 'earlier message')}", id="load-earlier"))
        views += [self._view(m, target) for m in self._visible[start:end]]
        await scroll.mount_all(views)

    def _view(self, message: Message, target: Target | None = None) -> MessageView:
        hit = target is not None and _hits(message, target)
        return MessageView(message, match=target.snippet if hit and target else None)

    # -- extending the window -----------------------------------------------------------------

    @on(MessageScroll.NearedEnd)
    async def _extend_end(self) -> None:
        if self._extending or self._end >= len(self._visible):
            return
        self._extending = True
        try:
            end = min(len(self._visible), self._end + PAGE)
            views = [self._view(m) for m in self._visible[self._end : end]]
            self._end = end
            await self.query_one(MessageScroll).mount_all(views)
        finally:
            self._extending = False

    @on(LoadEarlier.Pressed)
    async def _extend_start(self) -> None:
        if self._extending or self._start == 0:
            return
        self._extending = True
        try:
            scroll = self.query_one(MessageScroll)
            anchor = self.query(MessageView).first()
            start = max(0, self._start - PAGE)
            views = [self._view(m) for m in self._visible[start : self._start]]
            self._start = start
            await scroll.mount_all(views, before=anchor)
            marker = self.query_one(LoadEarlier)
            if start == 0:
                await marker.remove()
            else:
                marker.update(f"▲ {plural(start, 'earlier message')}")
            views[-1].focus(scroll_visible=False)
            self.call_after_refresh(scroll.scroll_to_widget, anchor, animate=False, top=True)
        finally:
            self._extending = False

    # -- live updates -------------------------------------------------------------------------

    def archive_changed(self) -> None:
        if self.session is not None:
            last = max((m.entry_id for m in self._messages), default=0)
            self._append_new(self.session.id, last)

    @work(thread=True, exclusive=True, group="transcript-live", exit_on_error=False)
    def _append_new(self, session_id: str, after_entry: int) -> None:
        new = [m for m in self.store.messages(session_id, after_entry=after_entry)]
        if new:
            session = self.store.session(session_id)
            self.app.call_from_thread(self._append, session, new)  # type: ignore[arg-type]

    async def _append(self, session: SessionSummary, new: list[Message]) -> None:
        if self.session is None or session.id != self.session.id:
            return
        known = {m.entry_id for m in self._messages}
        new = [m for m in new if m.entry_id not in known and m.kind != "summary"]
        scroll = self.query_one(MessageScroll)
        following = scroll.scroll_y >= scroll.max_scroll_y - 1
        window_at_end = self._end >= len(self._visible)
        self.session = session
        self._messages += new
        added = self._filter(new)
        self._visible += added
        self._show_header()
        if window_at_end and added:
            self._end = len(self._visible)
            await scroll.mount_all([self._view(m) for m in added])
            if following:
                self.call_after_refresh(scroll.scroll_end, animate=False)

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
        if index == 0 and self._start > 0:
            await self._extend_start()
        elif index is not None and index > 0:
            views[index - 1].focus()

    async def watch_show_sidechains(self, show: bool) -> None:
        if self.session is None:
            return
        self._visible = self._filter(self._messages)
        self._show_header()
        await self._render_window(0, min(len(self._visible), PAGE))
        self.notify(f"Sub-agent messages {'shown' if show else 'hidden'}.")

    def action_toggle_sidechains(self) -> None:
        self.show_sidechains = not self.show_sidechains

    async def action_top(self) -> None:
        if self._start:
            await self._render_window(0, min(len(self._visible), PAGE))
        self.query_one(MessageScroll).scroll_home(animate=False)

    async def action_bottom(self) -> None:
        if self._end < len(self._visible):
            total = len(self._visible)
            await self._render_window(max(0, total - PAGE), total)
        self.call_after_refresh(self.query_one(MessageScroll).scroll_end, animate=False)

    def action_chat(self) -> None:
        if self.session is None:
            self.notify("Open a session first, or press Ctrl+N for a new chat.")
            return
        self.post_message(self.ChatRequested(self.session))

    def action_export(self) -> None:
        if self.session is None:
            self.notify("Open a session first.", severity="warning")
            return
        session = self.session
        slug = re.sub(r"[^a-z0-9]+", "-", session.title.lower()).strip("-")[:40] or "session"
        default = str(Path.cwd() / f"{slug}-{session.id[:8]}.md")

        def export(path: str | None) -> None:
            if path:
                self._export(session.id, Path(path).expanduser())

        self.app.push_screen(PromptScreen("Export this session as markdown to:", default), export)

    @work(thread=True, group="export", exit_on_error=False)
    def _export(self, session_id: str, path: Path) -> None:
        text = self.store.export_markdown(session_id)
        atomic_write_bytes(path, text.encode("utf-8"))
        self.app.call_from_thread(self.notify, f"Exported to {path}", title="Export")


def _hits(message: Message, target: Target | None) -> bool:
    if target is None:
        return False
    return message.entry_id == target.entry_id or (
        message.file == target.file and message.line == target.line
    )
