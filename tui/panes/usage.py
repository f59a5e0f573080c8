"""The usage pane: what the sessions of a period cost, day by day, and the costliest of them.

A bar chart by day (cost, or tokens stacked by kind), the day under the chart's cursor in
figures, and the period's costliest sessions (Enter opens one), narrowed by project and model.
Every figure comes from :func:`clawback.core.usage.usage_report` in a thread worker, so the
pane never blocks; it reloads when the watcher indexes something new. The period chosen is
saved to ``config.toml`` (``ui.usage_period``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, ClassVar, NamedTuple

from clawback.core.usage import UsageReport, UsageRow, UsageTotals
from clawback.core.usage.report import cost_text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from .. import background
from ..format import cost_column, local_date, plural, project_label, project_labels
from ..store import Store
from ..widgets.pane import Pane, stylesheet
from ..widgets.usage_chart import KINDS, Column, UsageChart

PERIODS = [
    ("Last 7 days", "7d"),
    ("Last 30 days", "30d"),
    ("Last 90 days", "90d"),
    ("Last 365 days", "365d"),
    ("All time", "all"),
]
ALL_PROJECTS = ("All projects", "")
ALL_MODELS = ("All models", "")
COSTLIEST = 50


class Choice(NamedTuple):
    """What the pane shows, captured on the event loop for the worker that fetches it."""

    period: str
    project: str | None
    model: str | None


@dataclass
class Loaded:
    """A worker's answer: the period's days and sessions, and what the filters can offer."""

    choice: Choice
    days: UsageReport
    sessions: UsageReport
    first_day: date | None  # the first day with usage in the whole archive
    projects: list[str]
    models: list[str]


class UsagePane(Pane):
    TITLE = "Usage"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "toggle_tokens", "Cost/tokens"),
        Binding("d", "cycle_period", "Period"),
        Binding("p", "choose_project", "Project"),
        Binding("m", "choose_model", "Model"),
        Binding("c", "focus_chart", "Chart", show=False),
        Binding("o", "focus_sessions", "Sessions", show=False),
    ]

    @dataclass
    class SessionChosen(Message):
        session_id: str

    def __init__(self, store: Store, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        known = {value for _, value in PERIODS}
        period = store.config.ui.usage_period
        self._period = period if period in known else "30d"
        self._project = ""
        self._model = ""
        self._generation = 0
        self._projects: list[str] = []
        self._models: list[str] = []
        self._offered: dict[str, list[str]] = {}
        self._stale = False  # new usage came while the pane was hidden

    def compose(self) -> ComposeResult:
        with Horizontal(id="usage-filters"):
            for options, value, name, tooltip in (
                (PERIODS, self._period, "usage-period", "The period shown (d cycles)"),
                ([ALL_PROJECTS], "", "usage-project", "Only sessions of this project (p)"),
                ([ALL_MODELS], "", "usage-model", "Only this model (m)"),
            ):
                yield Select(
                    options, allow_blank=False, value=value, id=name, compact=True, tooltip=tooltip
                )
        yield Static("", id="usage-summary")
        yield Static("", id="usage-chart-title")
        yield UsageChart(id="usage-chart")
        yield Static("", id="usage-day")
        yield Static("Costliest sessions", id="usage-sessions-title")
        yield OptionList(id="usage-sessions")
        yield Static("", id="usage-empty")

    def on_mount(self) -> None:
        self.border_title = self.TITLE
        self.reload()

    def focus_default(self) -> None:
        self.query_one(UsageChart).focus()

    # -- loading ------------------------------------------------------------------------------

    def reload(self) -> None:
        self._generation += 1
        self._load(
            self._generation, Choice(self._period, self._project or None, self._model or None)
        )

    def archive_changed(self) -> None:
        """New usage may have been indexed: show it now if the pane is on screen, else when it
        is shown next (the watcher and chat turns call this)."""
        if not self.is_mounted:
            return
        if self.display:
            self.reload()
        else:
            self._stale = True

    def on_show(self) -> None:
        if self._stale:
            self._stale = False
            self.reload()

    @work(thread=True, exclusive=True, group="usage", exit_on_error=False)
    def _load(self, generation: int, choice: Choice) -> None:
        since = _since(choice.period)
        days = self.store.usage_report(
            by="day", since=since, project=choice.project, model=choice.model
        )
        sessions = self.store.usage_report(
            by="session", since=since, project=choice.project, model=choice.model,
            limit=COSTLIEST,
        )  # fmt: skip
        first = None
        if not days.rows:
            everything = self.store.usage_report(by="month")
            first = _day(next((row.key for row in everything.rows if row.key), None))
        loaded = Loaded(
            choice, days, sessions, first, self.store.usage_projects(), self.store.usage_models()
        )
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, generation, loaded)

    def _show(self, generation: int, loaded: Loaded) -> None:
        if generation != self._generation:
            return
        self._offer(loaded.projects, loaded.models)
        days, sessions = loaded.days, loaded.sessions
        empty = not days.rows
        self.set_class(empty, "-empty")
        total = days.total
        self.query_one("#usage-summary", Static).update(_summary(total, loaded.choice.period))
        chart = self.query_one(UsageChart)
        if empty:
            self.query_one("#usage-empty", Static).update(_nothing(loaded))
            chart.show({}, today(), today())
            self.query_one("#usage-sessions", OptionList).clear_options()
            return
        found = {day: row for row in days.rows if (day := _day(row.key)) is not None}
        first = _day(_since(loaded.choice.period)) or min(found)
        chart.show(found, first, max(today(), max(found)))
        self._title_chart(chart)
        listing = self.query_one("#usage-sessions", OptionList)
        kept = listing.highlighted_option.id if listing.highlighted_option else None
        listing.set_options([Option(_session_row(row), id=row.key) for row in sessions.rows])
        ids = [row.key for row in sessions.rows]
        listing.highlighted = ids.index(kept) if kept in ids else (0 if ids else None)

    def _offer(self, projects: list[str], models: list[str]) -> None:
        """The project and model pickers' options (never reshuffled while one is open)."""
        for select_id, values, current, first, label in (
            ("#usage-project", projects, self._project, ALL_PROJECTS, project_labels(projects)),
            ("#usage-model", models, self._model, ALL_MODELS, {m: m for m in models}),
        ):
            select = self.query_one(select_id, Select)
            if select.expanded or values == self._offered.get(select_id):
                continue
            self._offered[select_id] = values
            options = [first, *((label[v], v) for v in values)]
            if current and current not in values:
                options.append((label.get(current, current) or current, current))
            select.set_options(options)
            select.value = current

    def _title_chart(self, chart: UsageChart) -> None:
        what = "Tokens" if chart.tokens else "Cost"
        top = max((chart.value(c) for c in chart.columns), default=0.0)
        scale = f"{top:,.0f} tokens" if chart.tokens else cost_text(UsageTotals(cost_usd=top))
        title = Content.assemble((f"{what} by {chart.unit}", "bold"), f"  (tallest {scale})")
        if chart.tokens:
            legend = [Content.assemble("  ", ("█", style), f" {name}") for _, style, name in KINDS]
            title = Content("").join([title, *legend])
        self.query_one("#usage-chart-title", Static).update(title)

    # -- events -------------------------------------------------------------------------------

    @on(UsageChart.Moved)
    def _moved(self, event: UsageChart.Moved) -> None:
        self._title_chart(self.query_one(UsageChart))
        column = event.column
        line = Content("") if column is None else _column_line(column)
        self.query_one("#usage-day", Static).update(line)

    @on(Select.Changed, "#usage-period")
    @on(Select.Changed, "#usage-project")
    @on(Select.Changed, "#usage-model")
    def _choice_changed(self, event: Select.Changed) -> None:
        value = event.select.value if isinstance(event.select.value, str) else ""
        attribute = {"usage-period": "_period", "usage-project": "_project"}.get(
            event.select.id or "", "_model"
        )
        if value == getattr(self, attribute):
            return
        setattr(self, attribute, value)
        self.reload()
        if attribute == "_period":
            background.save_settings(
                self, self.store, "the usage period", lambda: {"ui.usage_period": self._period}
            )
        if event.select.has_focus_within:
            self.action_focus_chart()

    @on(OptionList.OptionSelected, "#usage-sessions")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.post_message(self.SessionChosen(event.option.id))

    def action_toggle_tokens(self) -> None:
        chart = self.query_one(UsageChart)
        chart.tokens = not chart.tokens
        self._title_chart(chart)

    def action_cycle_period(self) -> None:
        values = [value for _, value in PERIODS]
        select = self.query_one("#usage-period", Select)
        current = select.value if select.value in values else self._period
        select.value = values[(values.index(current) + 1) % len(values)]

    def action_choose_project(self) -> None:
        select = self.query_one("#usage-project", Select)
        select.focus()
        select.action_show_overlay()

    def action_choose_model(self) -> None:
        select = self.query_one("#usage-model", Select)
        select.focus()
        select.action_show_overlay()

    def action_focus_chart(self) -> None:
        self.query_one(UsageChart).focus()

    def action_focus_sessions(self) -> None:
        self.query_one("#usage-sessions", OptionList).focus()


def today() -> date:
    """The local day periods end on (tests and the screenshots fix it)."""
    return date.today()


def _since(period: str) -> str | None:
    """The first local day of a period ending today."""
    if period == "all":
        return None
    return (today() - timedelta(days=int(period.rstrip("d")) - 1)).isoformat()


def _day(text: str | None) -> date | None:
    try:
        return date.fromisoformat(f"{text}-01" if text and len(text) == 7 else text or "")
    except ValueError:
        return None


def _summary(total: UsageTotals, period: str) -> Content:
    label = dict((value, name) for name, value in PERIODS)[period]
    share = total.cache_read_share
    parts = [
        f"{label}: {cost_text(total)}",
        f"{total.total_tokens:,} tokens",
        f"{share:.0%} read from the cache" if share is not None else "",
        plural(total.responses, "response"),
    ]
    content = Content(" · ".join(p for p in parts if p))
    if total.unpriced_models:
        content = Content.assemble(
            content, ("  cost unknown for " + ", ".join(sorted(total.unpriced_models)), "$warning")
        )
    return content


def _nothing(loaded: Loaded) -> Content:
    if loaded.first_day is None:
        return Content(
            "No usage recorded yet.\n\nIt is read from every assistant reply as transcripts are"
            " indexed\n(Ctrl+P → “Ingest sources”)."
        )
    narrowed = loaded.choice.project or loaded.choice.model
    where = " for this project or model" if narrowed else ""
    return Content(
        f"No usage in this period{where}.\nThe archive's usage begins in"
        f" {loaded.first_day:%B %Y}: press d for a longer period."
    )


def _column_line(column: Column) -> Content:
    usage = column.usage
    share = usage.cache_read_share
    figures = [
        ("input", usage.input_tokens),
        ("output", usage.output_tokens),
        ("cache read", usage.cache_read_tokens),
        ("cache write", usage.cache_write_tokens),
    ]
    return Content.assemble(
        (column.period, "bold"),
        f"  {cost_text(usage)}",
        "".join(f" · {name} {count:,}" for name, count in figures),
        f" · {share:.0%} cached" if share is not None else "",
    )


def _session_row(row: UsageRow) -> Content:
    title = " ".join((row.title or row.key).split())
    where = " · ".join(p for p in (project_label(row.project), local_date(row.last)) if p)
    return Content.assemble(
        (cost_column(row), "bold $text-accent"),
        title,
        (f"  {where}" if where else "", "$text-muted"),
    )
