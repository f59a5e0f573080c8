"""The sessions pane: every session, newest first, narrowed by a filter box, a source and a
project.

It must stay smooth with tens of thousands of sessions, so it never builds a widget per
session: rows are options of one virtualised :class:`OptionList`, fetched a page at a time in a
thread worker as the cursor or the scrollbar nears the end of what is loaded. The source and
project chosen are saved to ``config.toml`` (in a worker) so the next start opens with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from clawback.core.archive import Project, SessionSummary
from clawback.core.usage import UsageTotals
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, OptionList, Select, Static
from textual.widgets.option_list import Option, OptionDoesNotExist
from textual.worker import get_current_worker

from .. import background, resume
from ..format import (
    SOURCES,
    local_date,
    origin_label,
    plural,
    project_label,
    project_labels,
    source_label,
    usage_label,
)
from ..store import Store
from ..widgets.ingest_progress import IngestProgress
from ..widgets.pane import Pane, stylesheet

PAGE = 200
SOURCE_CHOICES = [
    ("All sources", ""),
    *((label, key) for key, label in SOURCES.items() if key != "memory"),
]
ALL_PROJECTS = ("All projects", "")


class Query(NamedTuple):
    """What narrows the list, captured on the event loop for the worker that fetches it."""

    text: str
    source: str | None
    project: str | None


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


def session_row(session: SessionSummary, usage: UsageTotals | None = None) -> Content:
    """Two lines: the title, then source · last active · message count · what the session
    cost and the part of its prompts read from the cache · project.

    What every row has comes first and the project last, so that a narrow pane cuts the
    project, never a count (a cost in front made a cut "51 msgs" read "51 ms…").
    """
    details = " · ".join(
        part
        for part in (
            origin_label(session.source, session.key),
            local_date(session.updated_at or session.started_at),
            plural(session.message_count, "msg"),
            "source deleted" if session.source_missing else "",
            usage_label(usage),
            project_label(session.cwd),
        )
        if part
    )
    title = " ".join(session.title.split())  # two lines per row, whatever the title holds
    return Content.assemble((title, "bold"), "\n", (details, "$text-muted"))


class SessionsPane(Pane):
    TITLE = "Sessions"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "focus_filter", "Filter"),
        Binding("s", "cycle_source", "Source"),
        Binding("p", "choose_project", "Project"),
        Binding(resume.KEY, "resume", resume.DESCRIPTION, tooltip=resume.TOOLTIP),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("down", "focus_list", "To list", show=False),
    ]

    @dataclass
    class SessionChosen(Message):
        """A session was picked; ``focus`` asks to move focus to its transcript."""

        session_id: str
        focus: bool

    @dataclass
    class ListedNothing(Message):
        """A filter change left the list empty: the transcript shows nothing either."""

    def __init__(self, store: Store, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        self._generation = 0
        self._loaded = 0
        self._exhausted = False
        self._fetching = False  # a page is on its way (not Widget.loading: that blurs focus)
        self._first_page = True
        self._follow = False  # the filter changed: the transcript follows to a row of the list
        self._open_when_shown = False  # Enter in the filter came before its list
        self._first_run = ""  # what an empty archive says (set once the folders are counted)
        ui = store.config.ui
        # The saved choices apply from the first page on; the selects follow these, not lead.
        known = {value for _, value in SOURCE_CHOICES}
        self._source = ui.sessions_source if ui.sessions_source in known else ""
        self._project = ui.sessions_project
        self._projects: list[Project] | None = None  # None until loaded (after the first page)

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Filter sessions…  project:NAME", id="session-filter", compact=True)
        with Horizontal(id="session-filters"):
            yield Select(
                SOURCE_CHOICES,
                allow_blank=False,
                value=self._source,
                id="session-source",
                compact=True,
                tooltip="Only sessions from this source (s cycles)",
            )
            yield Select(
                self._project_choices(),
                allow_blank=False,
                value=self._project,
                id="session-project",
                compact=True,
                tooltip="Only sessions run in this project's folder (p)",
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
        return self._source or None

    @property
    def project(self) -> str | None:
        """The chosen project's folder, as `archive.sessions.projects` lists it."""
        return self._project or None

    def reload(self, *, keep_loaded: bool = False) -> None:
        """Load the list again from the top (live updates keep as many rows as were loaded)."""
        self._generation += 1
        self._fetching = True
        limit = max(PAGE, self._loaded) if keep_loaded else PAGE
        self._fetch_first(self._generation, limit, self._query())

    def _query(self) -> Query:
        return Query(self.filter_text, self.source, self.project)

    @work(thread=True, exclusive=True, group="sessions", exit_on_error=False)
    def _fetch_first(self, generation: int, limit: int, query: Query) -> None:
        self._fetch(generation, 0, limit, query)

    @work(thread=True, exclusive=True, group="sessions-more", exit_on_error=False)
    def _fetch_more(self, generation: int, offset: int, query: Query) -> None:
        self._fetch(generation, offset, PAGE, query)

    def _fetch(self, generation: int, offset: int, limit: int, query: Query) -> None:
        """Runs in a worker thread: one page of rows (and the total, when not typed into)."""
        rows = self.store.sessions(
            source=query.source,
            project=query.project,
            text=query.text or None,
            limit=limit,
            offset=offset,
        )
        total = None if query.text else self.store.count_sessions(query.source, query.project)
        usage = self.store.session_usage([row.id for row in rows])
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, generation, offset, limit, rows, total, usage)

    def _show(
        self,
        generation: int,
        offset: int,
        limit: int,
        rows: list[SessionSummary],
        total: int | None,
        usage: dict[str, UsageTotals],
    ) -> None:
        if generation != self._generation:
            return  # a newer filter or reload is on its way
        self._fetching = False
        listing = self.query_one(SessionList)
        options = [Option(session_row(s, usage.get(s.id)), id=s.id) for s in rows]
        if offset == 0:
            kept = listing.highlighted_option.id if listing.highlighted_option else None
            listing.set_options(options)
            ids = [s.id for s in rows]
            listing.highlighted = ids.index(kept) if kept in ids else (0 if ids else None)
            if (self._first_page or self._follow) and ids:
                # Open the newest session (something to read at once), or after a filter
                # change, the row the cursor is on: the transcript never shows a session the
                # list has filtered out.
                self.post_message(self.SessionChosen(ids[listing.highlighted or 0], False))
            elif self._follow:
                self.post_message(self.ListedNothing())
            self._follow = False
            self._first_page = not ids
            if self._projects is None:  # after the first page, so it never delays the list
                self._load_projects()
        else:
            listing.add_options(options)
        self._loaded = offset + len(rows)
        self._exhausted = len(rows) < limit
        self._show_status(total)
        if offset == 0 and self._open_when_shown:
            self._open_highlighted()

    def _show_status(self, total: int | None) -> None:
        shown = self._loaded
        more = "" if self._exhausted else "+"
        status = plural(total, "session") if total is not None else f"{shown:,}{more} matching"
        chosen = [
            source_label(self.source) if self.source else "",
            project_label(self.project) if self.project else "",
        ]
        if any(chosen):  # saved choices come back on start: never filter silently
            status += " · only " + ", ".join(c for c in chosen if c)
        self.query_one("#sessions-status", Static).update(status)
        empty = shown == 0
        self.set_class(empty, "-empty")
        if empty:
            if self.filter_text:
                hint = f"No session matches “{self.filter_text}”."
            elif self.source or self.project:
                where = [
                    "from this source" if self.source else "",
                    "in this project" if self.project else "",
                ]
                hint = f"No sessions {' '.join(w for w in where if w)}."
            else:
                hint = self._first_run or "No sessions yet."
            self.query_one("#sessions-empty", Static).update(Content(hint))  # typed text

    def show_first_run(self, folders: list[tuple[str, Path, int]]) -> None:
        """An empty archive: where transcripts would come from, how many are there, and what
        to press (instead of a blank pane and "0 sessions")."""
        lines = ["No sessions yet.", ""]
        for name, path, count in folders:
            where = str(path).replace(str(Path.home()), "~", 1)
            found = "folder not found" if not path.exists() else plural(count, "transcript")
            lines.append(f"{SOURCES.get(name, name)}: {where} ({found})")
        lines += [
            "",
            "Ctrl+P → “Ingest sources” indexes them,",
            "or Ctrl+N starts a chat with Claude.",
        ]
        self._first_run = "\n".join(lines)
        if self.has_class("-empty") and not (self.filter_text or self.source or self.project):
            self.query_one("#sessions-empty", Static).update(Content(self._first_run))

    @on(SessionList.NearedEnd)
    def _load_more(self) -> None:
        if self._exhausted or self._fetching or self._loaded == 0:
            return
        self._fetching = True
        self._fetch_more(self._generation, self._loaded, self._query())

    # -- projects -----------------------------------------------------------------------------

    def _project_choices(self) -> list[tuple[str, str]]:
        """The picker's options: all projects, then each with its count, newest active first.

        Until the list is loaded, the saved project is offered alone, so the picker can show
        it from the first frame.
        """
        projects = self._projects or []
        labels = project_labels(p.path for p in projects)
        choices = [
            ALL_PROJECTS,
            *((f"{labels[p.path]} ({p.sessions:,})", p.path) for p in projects),
        ]
        if self._project and self._projects is None:
            choices.append((project_label(self._project), self._project))
        return choices

    @work(thread=True, exclusive=True, group="projects", exit_on_error=False)
    def _load_projects(self) -> None:
        projects = self.store.projects()
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_projects, projects)

    def _show_projects(self, projects: list[Project]) -> None:
        select = self.query_one("#session-project", Select)
        if select.expanded:
            return  # never reshuffle a list someone is choosing from; counts catch up later
        self._projects = projects
        if self._project and self._project not in {p.path for p in projects}:
            # Gone from the archive (or not indexed yet): show everything, but keep the saved
            # choice in config.toml, as a missing theme does.
            self.app.notify(
                f"No sessions in {self._project} now; showing all projects.",
                title="Sessions",
                severity="warning",
                markup=False,
            )
            self._project = ""
            self.reload()
        select.set_options(self._project_choices())  # resets to the first option, so:
        select.value = self._project

    # -- events -------------------------------------------------------------------------------

    @on(Input.Changed, "#session-filter")
    def _filter_changed(self) -> None:
        self._follow = True
        self.reload()

    @on(Select.Changed, "#session-source")
    @on(Select.Changed, "#session-project")
    def _choice_changed(self, event: Select.Changed) -> None:
        # Compare with the pane's own state, not the message: set_options posts a Changed for
        # its reset before the value is put back, and those must not count as choices.
        value = event.select.value if isinstance(event.select.value, str) else ""
        attribute = "_source" if event.select.id == "session-source" else "_project"
        if value == getattr(self, attribute):
            return
        setattr(self, attribute, value)
        self._follow = True
        self.reload()
        background.save_settings(self, self.store, "the session filters", self._saved_choices)
        if event.select.has_focus_within:  # chosen from its list: back to browsing
            self.action_focus_list()

    def _saved_choices(self) -> dict[str, object]:
        """Read when the save runs, so of several saves racing, the last writes the latest."""
        return {"ui.sessions_source": self._source, "ui.sessions_project": self._project}

    @on(Input.Submitted, "#session-filter")
    def _filter_submitted(self) -> None:
        """Enter in the filter opens the session it narrowed to (the row under the cursor),
        once the list for what was typed has come; with nothing listed it goes to the list."""
        if self._fetching:
            self._open_when_shown = True
        else:
            self._open_highlighted()

    def _open_highlighted(self) -> None:
        self._open_when_shown = False
        option = self.query_one(SessionList).highlighted_option
        if option is not None and option.id is not None:
            self.post_message(self.SessionChosen(option.id, True))
        else:
            self.action_focus_list()

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

    def action_resume(self) -> None:
        """Continue the highlighted session in Claude Code (a deleted one: restore it first)."""
        listing = self.query_one(SessionList)
        if listing.highlighted is not None:
            option = listing.get_option_at_index(listing.highlighted)
            if option.id is not None:
                resume.resume_session(self.app, option.id)  # type: ignore[arg-type]

    def action_focus_filter(self) -> None:
        self.query_one("#session-filter", Input).focus()

    def action_clear_filter(self) -> None:
        self.query_one("#session-filter", Input).value = ""
        self.action_focus_list()

    def action_choose_project(self) -> None:
        select = self.query_one("#session-project", Select)
        select.focus()
        select.action_show_overlay()

    def action_cycle_source(self) -> None:
        select = self.query_one("#session-source", Select)
        values = [value for _, value in SOURCE_CHOICES]
        current = select.value if select.value in values else ""
        select.value = values[(values.index(current) + 1) % len(values)]

    def archive_changed(self) -> None:
        """New sessions or entries were indexed: refresh in place, keeping the cursor."""
        self.reload(keep_loaded=True)
        if self._projects is not None:  # new projects and counts (else the first page asks)
            self._load_projects()

    def reveal(self, session_id: str) -> None:
        """Move the cursor to ``session_id`` if it is loaded (after opening it from search)."""
        listing = self.query_one(SessionList)
        try:
            listing.highlighted = listing.get_option_index(session_id)
        except OptionDoesNotExist:  # not in the loaded pages, or filtered out
            return
