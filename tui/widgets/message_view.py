"""One message of a transcript: role-styled, markdown rendered, noisy parts folded.

Tool calls, tool output, thinking and meta lines are folded behind a one-line summary because
they drown the conversation; their bodies are only built when expanded, which keeps opening a
long session cheap. Compaction events read as dividers, since they split the session in two.
"""

from __future__ import annotations

from typing import ClassVar

from clawback.core.archive.read import Message
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from ..clipboard import copy_text
from ..format import highlight_terms, local_time, marked_snippet, marked_terms
from .markdown_text import markdown_content
from .pane import stylesheet

ROLES = {"user": "You", "assistant": "Claude", "system": "System", "tool": "Tool"}
FOLDED_KINDS = {"tool_use", "tool_result", "thinking"}
SUMMARY_WIDTH = 100


def is_folded(message: Message) -> bool:
    return message.kind in FOLDED_KINDS or (
        not message.conversational and message.kind != "compaction"
    )


def fold_summary(message: Message) -> str:
    """The one line shown for a folded message."""
    text = " ".join((message.display or message.text).split())
    if len(text) > SUMMARY_WIDTH:
        text = text[: SUMMARY_WIDTH - 1] + "…"
    lines = message.text.count("\n") + 1
    if message.kind == "tool_use":
        return f"⚙ {text}"
    if message.kind == "tool_result":
        return f"↳ output · {lines:,} line{'s' * (lines != 1)} · {text}"
    if message.kind == "thinking":
        return f"✻ thinking · {len(message.text.split()):,} words"
    return f"· {message.role} · {text}"


class MessageView(Vertical, can_focus=True):
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_fold", "Expand", show=False),
        Binding("c", "copy", "Copy"),
    ]

    expanded: reactive[bool] = reactive(False)

    def __init__(self, message: Message, *, match: str | None = None) -> None:
        """``match`` is a search snippet (MARK_START/MARK_END around the matched words)."""
        classes = [f"-{message.role}", f"-{message.kind.replace('_', '-')}"]
        if message.sidechain:
            classes.append("-sidechain")
        if match is not None:
            classes.append("-target")
        self.folded = is_folded(message)
        if self.folded:
            classes.append("-folded")
        super().__init__(classes=" ".join(classes))
        self.message = message
        self.match = match

    def compose(self) -> ComposeResult:
        message = self.message
        if message.kind == "compaction":
            when = local_time(message.timestamp)
            yield Static(f"Compacted{' · ' + when if when else ''}", classes="divider")
            yield Static(message.text, classes="summary", markup=False)
            return
        if self.folded:
            yield Static(self._fold_line(), classes="fold")
        else:
            yield Static(self._header(), classes="header")
        if self.match is not None:
            match = Content.assemble(("▶ match  ", "bold $accent"), marked_snippet(self.match))
            yield Static(match, classes="match")
        if not self.folded:
            yield Static(self._body(markdown_content(message.text)), classes="body")

    def _body(self, content: Content) -> Content:
        """The message body, with the words a search matched highlighted."""
        return content if self.match is None else highlight_terms(content, marked_terms(self.match))

    def _header(self) -> Content:
        message = self.message
        parts = [local_time(message.timestamp)]
        if message.model and message.role == "assistant":
            parts.append(message.model)
        if message.sidechain:
            parts.append("sub-agent")
        if message.partial:
            parts.append("cut short")
        details = " · ".join(p for p in parts if p)
        role = ROLES.get(message.role, message.role.title())
        return Content.assemble((role, "bold"), "  ", (details, "$text-muted"))

    def _fold_line(self) -> Content:
        arrow = "▾" if self.expanded else "▸"
        return Content(f"{arrow} {fold_summary(self.message)}")

    def watch_expanded(self, expanded: bool) -> None:
        if not self.folded or not self.is_mounted:
            return
        self.query_one(".fold", Static).update(self._fold_line())
        bodies = self.query(".body")
        if expanded and not bodies:
            self.mount(Static(self._body(Content(self.message.text)), classes="body"))
        for body in bodies:
            body.display = expanded

    def action_toggle_fold(self) -> None:
        if self.folded:
            self.expanded = not self.expanded

    def on_click(self) -> None:
        self.focus()
        self.action_toggle_fold()

    @work(thread=True, group="clipboard")
    def action_copy(self) -> None:
        try:
            where = copy_text(self.message.text, self._copy_in_terminal)
        except Exception as exc:  # the clipboard is best effort; never crash over it
            self.app.call_from_thread(self.notify, f"Copy failed: {exc}", severity="error")
            return
        self.app.call_from_thread(self.notify, f"Message copied to the {where}.")

    def _copy_in_terminal(self, text: str) -> None:
        self.app.call_from_thread(self.app.copy_to_clipboard, text)
