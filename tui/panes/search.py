"""The live search pane: results update with every keystroke, without ever blocking typing.

Each query runs in an exclusive thread worker (SQLite blocks), so a new keystroke cancels the
previous worker and interrupts its query. Cancellation alone cannot stop a thread that has
already finished, so every query also carries a generation number and results older than the
newest query are dropped: stale results never overwrite newer ones.

The filters (source, role, dates, this session only) are saved to ``config.toml`` as they
change, in a worker, so the next start searches the way the last one did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from clawback.core.errors import ClawbackError
from clawback.core.records import KIND_FILTERS
from clawback.core.search import (
    FAIR,
    MIN_PREFIX,
    RELATED,
    STRONG,
    TIERS,
    WEAK,
    SearchFilters,
    SearchHit,
    SearchResults,
    as_you_type,
    by_meaning,
    too_short,
)
from clawback.core.timeutil import normalize_ts
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Checkbox, Input, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from .. import background, resume
from ..format import SOURCES, local_time, marked_snippet, source_label
from ..store import Store, Superseded
from ..widgets.pane import Pane, stylesheet

SOURCE_CHOICES = [("Any source", ""), *((label, key) for key, label in SOURCES.items())]
ROLE_CHOICES = [
    ("Any role", ""),
    ("You", "user"),
    ("Claude", "assistant"),
    ("Tool", "tool"),
    ("System", "system"),
]
ROLE_LABELS = {value: label for label, value in ROLE_CHOICES if value}
KIND_LABELS = {"all": "Any kind", "tool": "Tools", "hook": "Hooks", "notice": "Notices"}
KIND_CHOICES = [  # the CLI's --kind filters, "all" first
    (KIND_LABELS.get(name, name.title()), name)
    for name in sorted(KIND_FILTERS, key=lambda name: name != "all")
]
# A hit's strength (search.strength) in the theme's words for good, middling and faint.
STRENGTH_STYLES = {STRONG: "bold $text-success", FAIR: "$text-warning", WEAK: "$text-muted"}
WIDEST = max(len(tier) for tier in TIERS)


MEANING_PAUSE = 0.35  # seconds of no typing before results by meaning replace keyword ones


def _choice(value: str, choices: list[tuple[str, str]]) -> str:
    """``value`` if it is one of ``choices``, else "any": a stale setting never breaks search."""
    return value if value in {v for _, v in choices} else ""


def hit_row(hit: SearchHit) -> Content:
    """How strong a hit is, where it came from and when, its title, then the snippet with its
    matches highlighted.

    The title comes last on its line: a narrow pane cuts the end of a line, and a long title put
    first cut the source and the date to "Clau…" at 80 columns."""
    title = " ".join((hit.session_title or hit.file).split())  # one line, whatever it holds
    facts = " · ".join(
        part
        for part in (
            {"semantic": "by meaning", RELATED: "only related"}.get(hit.found_by, ""),
            source_label(hit.source),
            ROLE_LABELS.get(hit.role, hit.role),  # "Claude", not "assistant": shorter, and plain
            local_time(hit.timestamp),
        )
        if part
    )
    return Content.assemble(
        (hit.strength.ljust(WIDEST), STRENGTH_STYLES.get(hit.strength, "")), "  ",
        (facts, "$text-muted"), "  ", (title, "bold"), "\n", marked_snippet(hit.snippet),
    )  # fmt: skip


class SearchPane(Pane):
    TITLE = "Search"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave search"),
        Binding("down", "focus_results", "Results", show=False),
        Binding("ctrl+t", "toggle_this_session", "This session only"),
        Binding(resume.KEY, "resume", resume.DESCRIPTION, tooltip=resume.TOOLTIP),
    ]

    @dataclass
    class HitChosen(Message):
        hit: SearchHit

    @dataclass
    class Left(Message):
        """Escape was pressed: go back to where search was opened from."""

    def __init__(self, store: Store, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        self.current_session_id: str | None = None  # set by the app as sessions open
        self._generation = 0
        self._hits: list[SearchHit] = []
        self._meaning_timer: Timer | None = None
        self.meaning_pause = MEANING_PAUSE  # tests set 0
        ui = store.config.ui
        self._saved: dict[str, object] = {  # the filters as config.toml has (or will have) them
            "ui.search_source": _choice(ui.search_source, SOURCE_CHOICES),
            "ui.search_role": _choice(ui.search_role, ROLE_CHOICES),
            "ui.search_kind": _choice(ui.search_kind, KIND_CHOICES) or "all",
            "ui.search_since": ui.search_since,
            "ui.search_until": ui.search_until,
            "ui.search_this_session": ui.search_this_session,
        }

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder='Search every session…  words, "a phrase", prefix*', id="search-input"
        )
        saved = self._saved
        with Horizontal(id="search-filters"):
            yield Select(
                SOURCE_CHOICES,
                allow_blank=False,
                value=saved["ui.search_source"],
                id="search-source",
                compact=True,
            )
            yield Select(
                ROLE_CHOICES,
                allow_blank=False,
                value=saved["ui.search_role"],
                id="search-role",
                compact=True,
            )
            yield Select(
                KIND_CHOICES,
                allow_blank=False,
                value=saved["ui.search_kind"],
                id="search-kind",
                compact=True,
                tooltip="Only what was said, thinking, or tool calls and output",
            )
            yield Input(
                str(saved["ui.search_since"]),
                placeholder="since date",
                id="search-since",
                compact=True,
                tooltip="Only entries on or after this day (YYYY-MM-DD)",
            )
            yield Input(
                str(saved["ui.search_until"]),
                placeholder="until date",
                id="search-until",
                compact=True,
                tooltip="Only entries on or before this day (YYYY-MM-DD)",
            )
            yield Checkbox(
                "This session",
                bool(saved["ui.search_this_session"]),
                id="search-this-session",
                compact=True,
            )
        yield OptionList(id="search-results")
        yield Static("Type to search.", id="search-status")

    def on_mount(self) -> None:
        self.border_title = self.TITLE

    def focus_default(self) -> None:
        self.query_one("#search-input", Input).focus()

    @property
    def query_text(self) -> str:
        return self.query_one("#search-input", Input).value

    def filters(self) -> SearchFilters:
        def value(selector: str) -> str | None:
            widget = self.query_one(selector)
            raw = widget.value if isinstance(widget, Input | Select) else None
            return raw.strip() or None if isinstance(raw, str) else None

        this_session = self.query_one("#search-this-session", Checkbox).value
        return SearchFilters(
            source=value("#search-source"),
            role=value("#search-role"),
            kind=value("#search-kind") or "all",
            since=value("#search-since"),
            until=value("#search-until"),
            session_id=self.current_session_id if this_session else None,
        )

    # -- saving the filters -------------------------------------------------------------------

    @on(Select.Changed)
    @on(Checkbox.Changed)
    @on(Input.Changed, "#search-since, #search-until")
    def _filters_changed(self) -> None:
        wanted = self._wanted()
        if wanted != self._saved:
            self._saved = wanted
            background.save_settings(self, self.store, "the search filters", lambda: self._saved)

    def _wanted(self) -> dict[str, object]:
        """The filters as they would be saved; a date still being typed keeps the saved one."""

        def chosen(selector: str) -> str:
            value = self.query_one(selector, Select).value
            return value if isinstance(value, str) else ""

        def day(bound: str) -> object:
            typed = self.query_one(f"#search-{bound}", Input).value.strip()
            return typed if not typed or normalize_ts(typed) else self._saved[f"ui.search_{bound}"]

        return {
            "ui.search_source": chosen("#search-source"),
            "ui.search_role": chosen("#search-role"),
            "ui.search_kind": chosen("#search-kind") or "all",
            "ui.search_since": day("since"),
            "ui.search_until": day("until"),
            "ui.search_this_session": self.query_one("#search-this-session", Checkbox).value,
        }

    # -- running queries ----------------------------------------------------------------------

    @on(Input.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def refresh_results(self) -> None:
        self._generation += 1
        query = self.query_text
        if not query.strip():
            self.workers.cancel_group(self, "search")
            self._show_results(self._generation, SearchResults(query=""))
            return
        if too_short(query):
            self.workers.cancel_group(self, "search")
            self._show_results(self._generation, SearchResults(query=""))
            self.query_one("#search-status", Static).update(
                f"Keep typing: a word needs {MIN_PREFIX} letters (or end it with a space)."
            )
            return
        filters = self.filters()
        if filters.session_id is None and self.query_one("#search-this-session", Checkbox).value:
            self._show_problem(self._generation, "“This session” needs an open session.")
            return
        self.query_one("#search-status", Static).update("Searching…")
        self._search(self._generation, query, filters)
        if self._meaning_timer is not None:
            self._meaning_timer.stop()
            self._meaning_timer = None
        if self._searched_again(query):
            generation = self._generation

            def finished() -> None:
                self._search(generation, query, filters, typing=False)

            if self.meaning_pause <= 0:
                finished()
            else:
                self._meaning_timer = self.set_timer(self.meaning_pause, finished)

    def _searched_again(self, query: str) -> bool:
        """Whether a pause in typing searches again, the query read as finished: by meaning too
        when the home has vectors and the query is not exact words only (prefix*, -word stay
        keyword-only), and in any home when typing read its last word as a prefix, so that a
        question ends as the command line answers it ("which search index did we choose?" read
        with "choose?*" found nothing in a home without vectors)."""
        settings = self.store.config.embeddings
        vectors = settings.enabled and self.store.paths.vectors.exists()
        return (vectors and by_meaning(query)) or as_you_type(query) != query

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(
        self, generation: int, query: str, filters: SearchFilters, *, typing: bool = True
    ) -> None:
        """Keyword results at once (the last word as a prefix); the finished query's, hybrid
        where the home has vectors, when typing pauses."""
        try:
            limit = self.store.config.ui.search_limit
            results = self.store.search(query, filters, limit=limit, typing=typing)
            if not typing and not results.hits and as_you_type(query) != query:
                # A pause must not empty the list: "sof" read as finished matches nothing, the
                # "sof*" typing found still stands.
                results = self.store.search(query, filters, limit=limit, typing=True)
        except Superseded:
            return
        except ClawbackError as exc:  # a bad date in a filter: say so, keep typing
            self.app.call_from_thread(self._show_problem, generation, str(exc))
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_results, generation, results)

    def _show_problem(self, generation: int, problem: str) -> None:
        if generation == self._generation:
            self.query_one("#search-status", Static).update(Content.styled(problem, "$error"))

    def _show_results(self, generation: int, results: SearchResults) -> None:
        if generation != self._generation:
            return
        self._hits = results.hits
        listing = self.query_one("#search-results", OptionList)
        listing.set_options(
            Option(hit_row(hit), id=str(index)) for index, hit in enumerate(results.hits)
        )
        listing.highlighted = 0 if results.hits else None
        status = self._status(results)
        if active := self.active_filters():
            status += f" · filtered by {', '.join(active)}"
        self.query_one("#search-status", Static).update(status)

    def active_filters(self) -> list[str]:
        """The filters narrowing the results (saved ones come back on start: say so)."""
        wanted = self._wanted()
        names = {
            "ui.search_source": "source",
            "ui.search_role": "role",
            "ui.search_since": "since",
            "ui.search_until": "until",
            "ui.search_this_session": "this session",
        }
        active = [name for key, name in names.items() if wanted[key]]
        if wanted["ui.search_kind"] not in ("", "all"):
            active.append("kind")
        return active

    def _status(self, results: SearchResults) -> str:
        if not results.query.strip():
            return "Type to search."
        if not results.hits:
            said = f": {results.note}" if results.note else ""
            return f"No results{said} · {results.seconds * 1000:.0f} ms"
        if results.related_only:
            # What the words matched is not an answer: say so first, before it is cut.
            return (
                f"{results.note or 'only related'} · {len(results.hits):,} shown"
                f" · {results.seconds * 1000:.0f} ms · Enter opens"
            )
        total = f"{results.total:,}{'+' if results.total_capped else ''}"
        mode = " · by words and meaning" if results.mode == "hybrid" else ""
        if mode and all(hit.found_by == "semantic" for hit in results.hits):
            mode = " · by meaning alone"  # no word matched
        covered = self.store.embedded
        if mode and covered is not None and covered.ratio < 1:
            mode += f" ({100 * covered.ratio:.0f}% embedded so far)"
        note = f" · {results.note}" if results.note else ""
        matches = f"{total} {'match' if results.total == 1 else 'matches'}"
        if self.active_filters():  # the total counts matches before the filters apply
            matches += " before the filters"
        return (
            f"{len(results.hits):,} shown of {matches}"
            f"{mode} · {results.seconds * 1000:.0f} ms · Enter opens{note}"
        )

    # -- choosing a hit -----------------------------------------------------------------------

    @on(OptionList.OptionSelected, "#search-results")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.HitChosen(self._hits[int(event.option.id)]))

    @on(Input.Submitted, "#search-input")
    def _submitted(self) -> None:
        listing = self.query_one("#search-results", OptionList)
        if listing.highlighted is not None and self._hits:
            self.post_message(self.HitChosen(self._hits[listing.highlighted]))

    def action_focus_results(self) -> None:
        if self._hits:
            self.query_one("#search-results", OptionList).focus()

    def action_resume(self) -> None:
        """Continue the highlighted hit's session in Claude Code."""
        listing = self.query_one("#search-results", OptionList)
        if listing.highlighted is None or not self._hits:
            return
        hit = self._hits[listing.highlighted]
        if hit.session_id is None:
            self.notify("This result is not from a session", severity="warning")
            return
        resume.resume_session(self.app, hit.session_id)  # type: ignore[arg-type]

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def action_toggle_this_session(self) -> None:
        box = self.query_one("#search-this-session", Checkbox)
        box.value = not box.value
