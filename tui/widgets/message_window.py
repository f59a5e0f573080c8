"""A session's messages, mounted a window at a time, with the turn being chatted at the end.

A session can hold thousands of messages and each rendered message is a small tree of widgets,
so only a window of them is mounted: a page to start with (or the page around a search hit), more
as the view nears the end, earlier ones on request.

While a chat turn runs, what was sent and the reply streaming in are shown as two *pending*
bubbles below the window. They stand in for messages that are not in the archive yet: each is
replaced by the stored message once that arrives (the engine, or the watcher, indexes it), so a
reply is never shown twice and never vanishes before its stored copy is on screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from clawback.core.archive import Message
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message as TextualMessage
from textual.widgets import Static

from ..format import plural
from .markdown_text import markdown_content
from .message_view import MessageView
from .pane import stylesheet

PAGE = 30
CONTEXT_BEFORE = 8  # messages shown above a search hit


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


class MessageWindow(VerticalScroll):
    """The mounted slice ``[start, end)`` of ``messages``, which the owner filters and orders.

    ``match`` (a search snippet) marks the message it belongs to; ``hit`` says which one that is.
    """

    DEFAULT_CSS = stylesheet(__file__)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.messages: list[Message] = []
        self.start = self.end = 0
        self._extending = False
        self._sent: Static | None = None  # the pending bubbles of a running chat turn
        self._reply: Static | None = None
        self._reply_text = ""

    # -- the window -----------------------------------------------------------------------------

    async def show(
        self, messages: list[Message], start: int = 0, match: dict[int, str] | None = None
    ) -> None:
        """Show ``messages`` from ``start`` on; ``match`` maps an entry id to its snippet."""
        self.messages = list(messages)
        await self._mount_window(start, min(len(messages), start + PAGE), match or {})

    async def _mount_window(self, start: int, end: int, match: dict[int, str]) -> None:
        await self.remove_children()
        self._sent = self._reply = None  # a turn's bubbles go with the window they were in
        self.start, self.end = start, end
        views: list[Static | MessageView] = []
        if start:
            views.append(LoadEarlier(f"▲ {plural(start, 'earlier message')}", id="load-earlier"))
        views += [MessageView(m, match=match.get(m.entry_id)) for m in self.messages[start:end]]
        await self.mount_all(views)

    @property
    def at_end(self) -> bool:
        return self.end >= len(self.messages)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.max_scroll_y and new >= self.max_scroll_y - self.size.height:
            self.call_later(self.extend_end)

    async def extend_end(self) -> None:
        if self._extending or self.at_end:
            return
        self._extending = True
        try:
            end = min(len(self.messages), self.end + PAGE)
            views = [MessageView(m) for m in self.messages[self.end : end]]
            self.end = end
            await self.mount_all(views, before=self._first_pending())
        finally:
            self._extending = False

    async def extend_start(self) -> None:
        if self._extending or self.start == 0:
            return
        self._extending = True
        try:
            anchor = self.query(MessageView).first()
            start = max(0, self.start - PAGE)
            views = [MessageView(m) for m in self.messages[start : self.start]]
            self.start = start
            await self.mount_all(views, before=anchor)
            marker = self.query_one(LoadEarlier)
            if start == 0:
                await marker.remove()
            else:
                marker.update(f"▲ {plural(start, 'earlier message')}")
            views[-1].focus(scroll_visible=False)
            self.call_after_refresh(self.scroll_to_widget, anchor, animate=False, top=True)
        finally:
            self._extending = False

    def on_load_earlier_pressed(self) -> None:
        self.call_later(self.extend_start)

    async def top(self) -> None:
        if self.start:
            await self._mount_window(0, min(len(self.messages), PAGE), {})
        self.scroll_home(animate=False)

    async def bottom(self) -> None:
        if not self.at_end:
            total = len(self.messages)
            await self._mount_window(max(0, total - PAGE), total, {})
        self.call_after_refresh(self.scroll_end, animate=False)

    # -- messages arriving ----------------------------------------------------------------------

    async def append(self, new: list[Message], *, turn_over: bool = False) -> None:
        """Add stored messages at the end; they replace the pending bubbles they stand for.

        ``turn_over``: the chat turn has ended, so bubbles still pending have no stored copy
        coming (a cancelled ``/label``, say) and go, except a failure's note, which stays.
        """
        following = self.scroll_y >= self.max_scroll_y - 1
        was_at_end = self.at_end
        self.messages += new
        if was_at_end and new:
            self.end = len(self.messages)
            await self.mount_all([MessageView(m) for m in new], before=self._first_pending())
        roles = {m.role for m in new}
        if self._sent is not None and ("user" in roles or turn_over):
            await self._sent.remove()
            self._sent = None
        if self._reply is not None and ("assistant" in roles or turn_over):
            if not self._reply.has_class("-failed"):
                await self._reply.remove()
            self._reply = None
        if following:
            self.call_after_refresh(self.scroll_end, animate=False)

    def _first_pending(self) -> Static | None:
        return self._sent or self._reply

    # -- a chat turn ----------------------------------------------------------------------------

    async def begin_turn(self, text: str) -> None:
        """Show what was sent and an empty reply, below the latest messages."""
        await self.bottom()
        # A failed turn's note has served its purpose (the stored, folded system line stays).
        await self.query(".turn-reply.-failed").remove()
        self._reply_text, self._sent = "", None
        self._reply = Static("", classes="turn-reply -streaming")
        last = next((m for m in reversed(self.messages) if m.role != "system"), None)
        if last is not None and last.role == "user" and last.text == text.strip():
            await self.mount(self._reply)  # a retry: the engine reuses the stored message
        else:
            self._sent = Static(text, classes="turn-sent", markup=False)
            await self.mount_all([self._sent, self._reply])
        self.call_after_refresh(self.scroll_end, animate=False)

    def stream(self, delta: str) -> None:
        if self._reply is None:
            return  # another session was opened meanwhile: the reply is stored all the same
        following = self.scroll_y >= self.max_scroll_y - 1
        self._reply_text += delta
        self._reply.update(Content(self._reply_text))  # streamed text is not markup
        if following:
            self.scroll_end(animate=False)

    def end_turn(self, *, reply: str | None = None, cancelled: bool = False,
                 failure: str | None = None) -> None:  # fmt: skip
        """Render the finished reply until its stored copy replaces it."""
        if self._reply is None:
            return
        self._reply.remove_class("-streaming")
        text = reply or self._reply_text
        if failure is not None:
            self._reply.add_class("-failed")
            text = failure_note(text, failure)
        elif cancelled:
            self._reply.add_class("-partial")
            text += "\n\n*(partial: the reply was cancelled)*"
        self._reply.update(markdown_content(text))

    async def add_failure_note(self, text: str) -> None:
        """A failed turn's note, for a session opened after the turn (a new one) failed."""
        await self.mount(Static(markdown_content(text), classes="turn-reply -failed"))
        self.call_after_refresh(self.scroll_end, animate=False)

    @property
    def reply_text(self) -> str:
        """What has streamed in so far of the running turn's reply."""
        return self._reply_text


def failure_note(partial: str, failure: str) -> str:
    """What stays on screen of a turn that failed: any partial reply, and why."""
    return (partial + "\n\n" if partial else "") + f"*(no reply: {failure})*"
