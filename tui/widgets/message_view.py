"""One message of a transcript: role-styled, shown as written, noisy parts folded.

Only Claude's replies are rendered as Markdown (that is how they were written); what a person
typed, tool input and output and compaction summaries are shown literally, since Markdown would
eat the underscores, stars and angle brackets of code. ``m`` shows any message's raw text.

Tool calls, tool output, thinking, meta lines and compaction summaries are folded behind a
one-line summary because they drown the conversation; their bodies are only built when
expanded, which keeps opening a long session cheap. A compaction still reads as a divider,
since it splits the session in two.
"""

from __future__ import annotations

from typing import ClassVar

from clawback.core.archive import Message
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from ..clipboard import copy_text
from ..format import highlight_terms, local_time, marked_snippet, marked_terms
from .markdown_text import literal_content, markdown_content
from .pane import stylesheet

ROLES = {"user": "You", "assistant": "Claude", "system": "System", "tool": "Tool"}
FOLDED_KINDS = {"tool_use", "tool_result", "thinking", "compaction"}
SUMMARY_WIDTH = 100
OTHER_KINDS = {
    "command_output": "$ command output",
    "hook": "⚑ hook",
    "notification": "ℹ notice",
    "interruption": "⏹ interrupted",
}
# How tools word a failure: for rows indexed before the archive kept is_error (until reindex).
ERROR_PREFIXES = (
    "<tool_use_error>",
    "Error:",
    "error:",
    "Exit code ",
    "ERROR",
    "Traceback (most recent call last)",
    "The user doesn't want to proceed",  # a refused tool call: Claude Code marks it is_error
)


def is_folded(message: Message) -> bool:
    return message.kind in FOLDED_KINDS or not message.conversational


def is_tool_error(message: Message) -> bool:
    """A tool's output that reports a failure (shown in the error colour)."""
    if message.kind != "tool_result":
        return False
    return message.error or message.text.lstrip().startswith(ERROR_PREFIXES)


def speaker(message: Message) -> str:
    """Who said it: a reply from a model that is not Claude is named by its model."""
    if message.role == "assistant" and message.model and not _is_claude(message.model):
        return message.model
    return ROLES.get(message.role, message.role.title())


def _is_claude(model: str) -> bool:
    return model.startswith(("claude", "<synthetic>")) or model in ("opus", "sonnet", "haiku")


def body_content(message: Message, *, raw: bool = False) -> Content:
    """The message's text as it is shown: Markdown for Claude's replies, literal otherwise."""
    if raw:
        return Content(message.text)
    if message.role == "assistant" and message.kind == "text":
        return markdown_content(message.text)
    if message.kind == "text" and message.display:
        return literal_content(message.display)  # a slash command, as it was typed
    return literal_content(message.text)


def fold_summary(message: Message) -> str:
    """The one line shown for a folded message."""
    text = " ".join((message.display or message.text).split())
    if len(text) > SUMMARY_WIDTH:
        text = text[: SUMMARY_WIDTH - 1] + "…"
    lines = message.text.count("\n") + 1
    if message.kind == "tool_use":
        return f"⚙ {text}"
    if message.kind == "tool_result":
        what = "error" if is_tool_error(message) else "output"
        return f"↳ {what} · {lines:,} line{'s' * (lines != 1)} · {text}"
    if message.kind == "thinking":
        return f"✻ thinking · {len(message.text.split()):,} words"
    if message.kind == "compaction":
        when = local_time(message.timestamp)
        words = len(message.text.split())
        return f"⟳ compacted{' · ' + when if when else ''} · summary of {words:,} words"
    if message.kind in OTHER_KINDS:  # what the CLI, not the person, put in the transcript
        return f"{OTHER_KINDS[message.kind]} · {text}"
    return f"· {message.role} · {text}"


def in_reading_order(messages: list[Message]) -> list[Message]:
    """``messages`` with each result of parallel tool calls moved under its call.

    Claude Code writes parallel calls as a run of calls followed by a run of their results, in
    the same order; read that way, a result sits screens away from what asked for it.
    The archive keeps no call ids, so only a run of N calls followed at once by N results
    is paired, which is exactly that shape.
    """
    out: list[Message] = []
    index, total = 0, len(messages)
    while index < total:
        calls = index
        while calls < total and messages[calls].kind == "tool_use":
            calls += 1
        count = calls - index
        results = calls
        while results - calls < count and results < total and _is_result(messages[results]):
            results += 1
        if count > 1 and results - calls == count:
            for call, result in zip(messages[index:calls], messages[calls:results], strict=True):
                out += [call, result]
            index = results
        elif count:
            out += messages[index:calls]
            index = calls
        else:
            out.append(messages[index])
            index += 1
    return out


def _is_result(message: Message) -> bool:
    return message.kind == "tool_result"


class MessageView(Vertical, can_focus=True):
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_fold", "Unfold"),  # only on a folded message
        Binding("c", "copy", "Copy"),
        Binding("m", "toggle_raw", "Raw"),
    ]

    expanded: reactive[bool] = reactive(False)
    raw: reactive[bool] = reactive(False)

    def __init__(self, message: Message, *, match: str | None = None) -> None:
        """``match`` is a search snippet (MARK_START/MARK_END around the matched words)."""
        classes = [f"-{message.role}", f"-{message.kind.replace('_', '-')}"]
        if message.sidechain:
            classes.append("-sidechain")
        if match is not None:
            classes.append("-target")
        if is_tool_error(message):
            classes.append("-error")
        self.folded = is_folded(message)
        if self.folded:
            classes.append("-folded")
        super().__init__(classes=" ".join(classes))
        self.message = message
        self.match = match

    def compose(self) -> ComposeResult:
        if self.folded:
            yield Static(self._fold_line(), classes="fold")
        else:
            yield Static(self._header(), classes="header")
        if self.match is not None:
            match = Content.assemble(("▶ match  ", "bold $accent"), marked_snippet(self.match))
            yield Static(match, classes="match")
        if not self.folded:
            yield Static(self._body(body_content(self.message)), classes="body")

    def _body(self, content: Content) -> Content:
        """The message body, with the words a search matched highlighted."""
        return content if self.match is None else highlight_terms(content, marked_terms(self.match))

    def _header(self) -> Content:
        message = self.message
        parts = [local_time(message.timestamp)]
        if message.model and message.role == "assistant" and _is_claude(message.model):
            parts.append(message.model)
        if message.sidechain:
            parts.append("sub-agent")
        if message.partial:
            parts.append("cut short")
        details = " · ".join(p for p in parts if p)
        return Content.assemble((speaker(message), "bold"), "  ", (details, "$text-muted"))

    def _fold_line(self) -> Content:
        arrow = "▾" if self.expanded else "▸"
        return Content(f"{arrow} {fold_summary(self.message)}")

    async def watch_expanded(self, expanded: bool) -> None:
        if not self.folded or not self.is_mounted:
            return
        self.query_one(".fold", Static).update(self._fold_line())
        bodies = self.query(".body")
        if expanded and not bodies:
            text = self._body(body_content(self.message, raw=self.raw))
            await self.mount(Static(text, classes="body"))
        for body in bodies:
            body.display = expanded
        if expanded:  # unfolded on the last line shown, the body would stay below the screen
            self.call_after_refresh(self.scroll_visible, animate=False)

    def watch_raw(self, raw: bool) -> None:
        if not self.is_mounted:
            return
        self.set_class(raw, "-raw")
        for body in self.query(".body").results(Static):
            body.update(self._body(body_content(self.message, raw=raw)))
        if self.folded and not self.expanded:
            self.expanded = True  # the raw text of a folded message is its body
        self.notify("Raw text." if raw else "Formatted text.", timeout=2, markup=False)

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter is offered (in the footer) only where there is something to unfold."""
        return self.folded if action == "toggle_fold" else True

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
            self.app.call_from_thread(
                self.notify, f"Copy failed: {exc}", severity="error", markup=False
            )
            return
        self.app.call_from_thread(self.notify, f"Message copied to the {where}.")

    def _copy_in_terminal(self, text: str) -> None:
        self.app.call_from_thread(self.app.copy_to_clipboard, text)
