"""The compaction pane's two lists: the ledger of compactions (each row expanding to the
messages it replaced, read from the transcript only when opened) and the session's knowledge
facts (current ones first, superseded ones dimmed and struck through, edited ones marked)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from clawback.core.memory import CompactionRecord, Fact, compacted_messages
from textual import on, work
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Collapsible, OptionList, Static
from textual.widgets.option_list import Option

from ..format import local_time, plural


class LedgerRow(Collapsible):
    """One compaction; its compacted messages are read from the transcript when expanded."""

    def __init__(self, record: CompactionRecord) -> None:
        title = (
            f"{local_time(record.created_at)} · {record.tokens_before:,} → "
            f"{record.tokens_after:,} tokens · {plural(record.messages_removed, 'message')}"
        )
        super().__init__(
            Static(record.summary, classes="ledger-summary", markup=False),
            Static("", classes="ledger-messages", markup=False),
            title=title,
            collapsed=True,
            classes="ledger-row",
        )
        self.record = record
        self._loaded = False

    @on(Collapsible.Expanded)
    def _expanded(self) -> None:
        if not self._loaded:
            self._loaded = True
            self._load()

    @work(thread=True, group="ledger-messages", exit_on_error=False)
    def _load(self) -> None:
        messages = compacted_messages(self.record)
        lines = [f"{m.role}: {' '.join(m.content.split())[:200]}" for m in messages]
        text = "Compacted messages:\n" + "\n".join(lines) if lines else "(messages not found)"
        target = self.query_one(".ledger-messages", Static)
        self.app.call_from_thread(target.update, text)


def fact_row(fact: Fact) -> Content:
    """``#id type  content · edited``; a superseded fact dimmed and struck through. The id is
    shown because a superseded fact names its successor by it. (``dim``, as the "auto"
    colours ``$text-muted``/``$text-disabled`` come out white in an option.)"""
    if fact.superseded_by is not None:
        return Content.assemble(
            (f"#{fact.id} {fact.type}  {fact.content}", "dim strike"),
            (f" · superseded by #{fact.superseded_by}", "dim"),
        )
    return Content.assemble(
        (f"#{fact.id} ", "dim"),
        (f"{fact.type}  ", "dim"),
        fact.content,
        (" · edited", "italic $text-accent") if fact.edited else "",
    )


def fact_order(facts: Sequence[Fact]) -> list[Fact]:
    """Current knowledge first, then what it replaced; newest first within each (a stable
    order, so a refresh never reshuffles the row being edited)."""
    return sorted(facts, key=lambda fact: (fact.superseded_by is not None, -fact.id))


class FactList(OptionList):
    """The session's facts, one option each (id: the fact's id); Enter or ``e`` edits one."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("e", "select", "Edit fact")]

    def on_focus(self) -> None:
        if self.highlighted is None and self.option_count:
            self.highlighted = 0

    def show(self, facts: Sequence[Fact]) -> None:
        """Replace the rows, keeping the highlight on the same fact."""
        kept = self.highlighted_option.id if self.highlighted_option else None
        self.set_options(Option(fact_row(fact), id=str(fact.id)) for fact in facts)
        ids = [str(fact.id) for fact in facts]
        if kept in ids or (self.has_focus and ids):
            self.highlighted = ids.index(kept) if kept in ids else 0
