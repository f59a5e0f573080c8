"""The sessions pane: every session, newest first, narrowed by a filter box and a source.

It must stay smooth with tens of thousands of sessions, so it never builds a widget per
session: rows are options of one virtualised :class:`OptionList`, fetched a page at a time in a
thread worker as the cursor or the scrollbar nears the end of what is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from clawback.core.archive import SessionSummary
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, OptionList, Select, Static
from textual.widgets.option_list import Option, OptionDoesNotExist
from textual.worker import get_current_worker

from ..format import SOURCES, local_time, plural, source_label
from ..store import Store
from ..widgets.ingest_progress import IngestProgress
from ..widgets.pane import Pane, stylesheet

PAGE = 200
SOURCE_CHOICES = [("All sources", ""), *((label, key) for key, label in SOURCES.items())]


class SessionList(OptionList):
    """An OptionList that asks for the next page when the cursor or the view nears its end."""

    @dataclass
    class NearedEnd(Message):
        pass

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        if highlighted is not None and highlighted >= self.option_count - 20:
            self.post_message(self.NearedEnd())

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new >= self.max_scroll_y - self.size.height:
            self.post_message(self.NearedEnd())


def session_row(session: SessionSummary) -> Content:
    """Two lines: the title, then source · last activity · message count."""
    details = " · ".join(
        part
        for part in (
            source_label(session.source),
            local_time(session.updated_at or session.started_at),
            plural(session.message_count, "msg"),
            "source deleted" if session.source_missing else "",
        )
        if part
    )
    return Content.assemble((session.title, "bold"), "\n", (details, "$text-muted"))


class SessionsPane(Pane):
    TITLE = "Sessions"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "focus_filter", "Filter"),
        Binding("s", "cycle_source", "Source"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("down", "focus_list", "To list", show=False),
    ]

    @dataclass
    class SessionChosen(Message):
        """A session was picked; ``focus`` asks to move focus to its transcript."""

        session_id: str
        focus: bool

    def __init__(self, store: Store, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self._generation = 0
        self._loaded = 0
        self._exhausted = False
        self._fetching = False  # a page is on its way (not Widget.loading: that blurs focus)
        self._first_page = True

    def compose(self) -> ComposeResult:
        with Horizontal(id="session-filters"):
            yield Input(placeholder="Filter sessions…", id="session-filter", compact=True)
            yield Select(
                SOURCE_CHOICES, allow_blank=False, value="", id="session-source", compact=True
            )
        yield SessionList(id="session-list")
        yield Static("", id="sessions-empty")
        yield Static("", id="sessions-status")
        yield IngestProgress(id="ingest-progress")

    def on_mount(self) -> None:
        self.border_title = self.TITLE
        self.reload()

    def focus_default(self) -> None:
        self.query_one(SessionList).focus()

    # -- loading ------------------------------------------------------------------------------

    @property
    def filter_text(self) -> str:
        return self.query_one("#session-filter", Input).value.strip()

    @property
    def source(self) -> str | None:
        value = self.query_one("#session-source", Select).value
        return value if isinstance(value, str) and value else None

    def reload(self, *, keep_loaded: bool = False) -> None:
        """Load the list again from the top (live updates keep as many rows as were loaded)."""
        self._generation += 1
        self._fetching = True
        limit = max(PAGE, self._loaded) if keep_loaded else PAGE
        self._fetch_first(self._generation, limit, self.filter_text, self.source)

    @work(thread=True, exclusive=True, group="sessions", exit_on_error=False)
    def _fetch_first(self, generation: int, limit: int, text: str, source: str | None) -> None:
        self._fetch(generation, 0, limit, text, source)

    @work(thread=True, exclusive=True, group="sessions-more", exit_on_error=False)
    def _fetch_more(self, generation: int, offset: int, text: str, source: str | None) -> None:
        self._fetch(generation, offset, PAGE, text, source)

    def _fetch(
        self, generation: int, offset: int, limit: int, text: str, source: str | None
    ) -> None:
        """Runs in a worker thread: one page of rows (and the total, when unfiltered)."""
        rows = self.store.sessions(source=source, text=text or None, limit=limit, offset=offset)
        total = None if text else self.store.count_sessions(source)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, generation, offset, limit, rows, total)

    def _show(
        self,
        generation: int,
        offset: int,
        limit: int,
        rows: list[SessionSummary],
        total: int | None,
    ) -> None:
        if generation != self._generation:
            return  # a newer filter or reload is on its way
        self._fetching = False
        listing = self.query_one(SessionList)
        options = [Option(session_row(s), id=s.id) for s in rows]
        if offset == 0:
            kept = listing.highlighted_option.id if listing.highlighted_option else None
            listing.set_options(options)
            ids = [s.id for s in rows]
            listing.highlighted = ids.index(kept) if kept in ids else (0 if ids else None)
            if self._first_page and ids:  # open the newest session: something to read at once
                self.post_message(self.SessionChosen(ids[0], False))
            self._first_page = not ids
        else:
            listing.add_options(options)
        self._loaded = offset + len(rows)
        self._exhausted = len(rows) < limit
        self._show_status(total)

    def _show_status(self, total: int | None) -> None:
        shown = self._loaded
        more = "" if self._exhausted else "+"
        status = plural(total, "session") if total is not None else f"{shown:,}{more} matching"
        self.query_one("#sessions-status", Static).update(status)
        empty = shown == 0
        self.set_class(empty, "-empty")
        if empty:
            hint = (
                f"No session matches “{self.filter_text}”."
                if self.filter_text or self.source
                else "No sessions yet.\nCtrl+P → “Ingest sources” indexes them."
            )
            self.query_one("#sessions-empty", Static).update(hint)

    @on(SessionList.NearedEnd)
    def _load_more(self) -> None:
        if self._exhausted or self._fetching or self._loaded == 0:
            return
        self._fetching = True
        self._fetch_more(self._generation, self._loaded, self.filter_text, self.source)

    # -- events -------------------------------------------------------------------------------

    @on(Input.Changed, "#session-filter")
    @on(Select.Changed, "#session-source")
    def _filter_changed(self) -> None:
        self.reload()

    @on(Input.Submitted, "#session-filter")
    def action_focus_list(self) -> None:
        self.query_one(SessionList).focus()

    @on(OptionList.OptionHighlighted, "#session-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # Preview only while someone moves through the list, not when a refresh moves it. The
        # transcript's exclusive worker drops the previews a fast cursor has already passed.
        if event.option.id is not None and event.option_list.has_focus:
            self.post_message(self.SessionChosen(event.option.id, False))

    @on(OptionList.OptionSelected, "#session-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.post_message(self.SessionChosen(event.option.id, True))

    def action_focus_filter(self) -> None:
        self.query_one("#session-filter", Input).focus()

    def action_clear_filter(self) -> None:
        self.query_one("#session-filter", Input).value = ""
        self.action_focus_list()

    def action_cycle_source(self) -> None:
        select = self.query_one("#session-source", Select)
        values = [value for _, value in SOURCE_CHOICES]
        current = select.value if select.value in values else ""
        select.value = values[(values.index(current) + 1) % len(values)]

    def archive_changed(self) -> None:
        """New sessions or entries were indexed: refresh in place, keeping the cursor."""
        self.reload(keep_loaded=True)

    def reveal(self, session_id: str) -> None:
        """Move the cursor to ``session_id`` if it is loaded (after opening it from search)."""
        listing = self.query_one(SessionList)
        try:
            listing.highlighted = listing.get_option_index(session_id)
        except OptionDoesNotExist:  # not in the loaded pages, or filtered out
            return
