"""A one-line meter of a chat session's prompt tokens against its context window, with the
memory-flush and compaction thresholds marked where they fall on the bar."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clawback.core.chat.sessions import ChatSession
from clawback.core.config import ChatConfig
from clawback.core.memory import CompactionPolicy, FlushPolicy
from textual.content import Content
from textual.widgets import Static

FLUSH_MARK, COMPACT_MARK = "┃", "║"


@dataclass(frozen=True)
class Usage:
    """Where a session stands: ``tokens`` is the last prompt's size (``total_tokens``)."""

    tokens: int
    window: int
    flush_at: int
    compact_at: int

    @classmethod
    def of(cls, session: ChatSession | None, chat: ChatConfig) -> Usage:
        flush, compaction = FlushPolicy.from_config(chat), CompactionPolicy.from_config(chat)
        if session is None:
            window = chat.context_window
            return cls(0, window, window - chat.reserve_tokens_floor - chat.soft_threshold_tokens,
                       window - chat.reserve_tokens)  # fmt: skip
        return cls(session.total_tokens, flush.window(session), flush.threshold(session),
                   compaction.limit(session))  # fmt: skip

    @property
    def state(self) -> str:
        if self.tokens >= self.compact_at:
            return "compact"
        return "flush" if self.tokens >= self.flush_at else "ok"

    def describe(self) -> str:
        """``12,345 of 200k tokens (6%) · flush at 176k ┃ · compact at 184k ║``: each mark is
        named beside the figure it stands for, in the order the bar reaches them."""
        percent = 100 * self.tokens / self.window if self.window else 0
        marks = sorted(
            [(self.flush_at, f"flush at {_short(self.flush_at)} {FLUSH_MARK}"),
             (self.compact_at, f"compact at {_short(self.compact_at)} {COMPACT_MARK}")]
        )  # fmt: skip
        return f"{self.tokens:,} of {_short(self.window)} tokens ({percent:.0f}%) · " + " · ".join(
            label for _, label in marks
        )


def _short(tokens: int) -> str:
    """Thresholds read at a glance: 176k rather than 176,000."""
    return f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens:,}"


def bar(usage: Usage, width: int) -> Content:
    """``width`` cells: filled up to the usage, the two thresholds drawn as marks."""
    width = max(width, 10)

    def cell(tokens: int) -> int:
        return min(width - 1, max(0, round(width * tokens / max(usage.window, 1))))

    filled = cell(usage.tokens) if usage.tokens else 0
    chars = ["█" if i < filled else "░" for i in range(width)]
    chars[cell(usage.flush_at)] = FLUSH_MARK
    chars[cell(usage.compact_at)] = COMPACT_MARK
    style = {"ok": "$success", "flush": "$warning", "compact": "$error"}[usage.state]
    text = "".join(chars)
    return Content.assemble((text[:filled], style), (text[filled:], "$text-muted"))


class ContextMeter(Static):
    """Set :attr:`usage`; the bar and the figures follow. State classes: -ok, -flush, -compact."""

    DEFAULT_CSS = """
    ContextMeter { height: 1; width: 1fr; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self._usage: Usage | None = None

    @property
    def usage(self) -> Usage | None:
        return self._usage

    @usage.setter
    def usage(self, usage: Usage) -> None:
        self._usage = usage
        for state in ("ok", "flush", "compact"):
            self.set_class(usage.state == state, f"-{state}")
        self.refresh_bar()

    def on_resize(self) -> None:
        self.refresh_bar()

    def refresh_bar(self) -> None:
        if self._usage is None:
            return
        label = self._usage.describe()
        width = max(10, self.size.width - len(label) - 1)
        self.update(Content.assemble(bar(self._usage, width), " ", (label, "$text-muted")))
