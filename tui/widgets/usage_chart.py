"""A bar chart of usage over time: a column per day (or week, or month, when the days would not
fit), cost or tokens stacked by kind, and a cursor whose column the pane describes.

It only draws what it is given (:meth:`UsageChart.show`); the figures come from the usage pane's
worker. Colours are theme variables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import ClassVar

from clawback.core.usage import UsageTotals
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget

# Token kinds bottom to top, each with its colour (a theme variable) and its name.
KINDS = (
    ("cache_read_tokens", "$primary", "cache read"),
    ("cache_write_tokens", "$secondary", "cache write"),
    ("input_tokens", "$warning", "input"),
    ("output_tokens", "$success", "output"),
)
COST_STYLE = "$accent"
CURSOR = "reverse"
_EIGHTHS = " ▁▂▃▄▅▆▇█"


@dataclass
class Column:
    """One bar: its period (``2026-11-20``, a week's Monday, or ``2026-11``) and its usage."""

    period: str
    usage: UsageTotals


class UsageChart(Widget, can_focus=True):
    """Columns of usage; ←/→ move the cursor; :attr:`tokens` draws tokens instead of cost."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left,h", "move(-1)", "Earlier", show=False),
        Binding("right,l", "move(1)", "Later", show=False),
        Binding("home", "move_to(0)", "First", show=False),
        Binding("end", "move_to(-1)", "Last", show=False),
    ]

    tokens: var[bool] = var(False)  # tokens by kind instead of cost
    cursor: var[int] = var(-1)

    @dataclass
    class Moved(Message):
        """The cursor is on ``column`` (``None``: nothing to show)."""

        column: Column | None

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.columns: list[Column] = []
        self.unit = "day"
        self._days: Mapping[date, UsageTotals] = {}
        self._span: tuple[date, date] | None = None

    def show(self, days: Mapping[date, UsageTotals], first: date, last: date) -> None:
        """Draw the usage of each day from ``first`` to ``last`` (days without any included),
        a column a day, or a week or a month when the days would not fit the width."""
        self._days, self._span = days, (first, last)
        self._lay_out()

    def on_resize(self) -> None:
        self._lay_out()

    def _lay_out(self) -> None:
        if self._span is None:
            return
        chosen = self.columns[self.cursor].period if 0 <= self.cursor < len(self.columns) else None
        first, last = self._span
        self.columns, self.unit = columns_for(self._days, first, last, self.size.width)
        periods = [column.period for column in self.columns]
        used = [i for i, column in enumerate(self.columns) if column.usage.responses]
        self.cursor = (
            periods.index(chosen)
            if chosen in periods
            else (used[-1] if used else len(self.columns) - 1)
        )
        self.post_message(self.Moved(self.columns[self.cursor] if self.columns else None))
        self.refresh()

    def value(self, column: Column) -> float:
        return float(column.usage.total_tokens if self.tokens else column.usage.cost_usd)

    # -- drawing ------------------------------------------------------------------------------

    def render(self) -> Content:
        width, height = self.size.width, self.size.height
        if not self.columns or width < 4 or height < 3:
            return Content("")
        rows = height - 1  # the last line names the first and last periods
        bar, gap = self._bar_width(width)
        step = bar + gap
        top = max((self.value(c) for c in self.columns), default=0.0) or 1.0
        grid: list[list[Content]] = [[Content(" ")] * width for _ in range(rows)]
        for index, column in enumerate(self.columns):
            cells = self._cells(column, rows, top)
            left = index * step
            chosen = index == self.cursor
            for row, cell in enumerate(cells):
                for x in range(left, min(left + bar, width)):
                    grid[row][x] = cell.stylize(CURSOR) if chosen and cell.plain != " " else cell
            if chosen and not any(c.plain.strip() for c in cells):
                grid[rows - 1][left] = Content("▁").stylize(CURSOR)  # an empty day, chosen
        lines = [Content("").join(line) for line in grid]
        return Content("\n").join([*lines, self._axis(width, step)])

    def _bar_width(self, width: int) -> tuple[int, int]:
        count = len(self.columns)
        for bar, gap in ((3, 1), (2, 1), (1, 1)):
            if count * (bar + gap) - gap <= width:
                return bar, gap
        return 1, 0

    def _cells(self, column: Column, rows: int, top: float) -> list[Content]:
        """The column's cells, top row first."""
        blank = Content(" ")
        if not self.tokens:
            eighths = round(self.value(column) / top * rows * 8)
            cells = []
            for row in range(rows):
                level = rows - 1 - row  # 0 at the bottom
                filled = max(0, min(8, eighths - level * 8))
                cells.append(Content(_EIGHTHS[filled]).stylize(COST_STYLE) if filled else blank)
            return cells
        total = column.usage.total_tokens
        height = round(total / top * rows) if total else 0
        sizes = [getattr(column.usage, kind) for kind, _, _ in KINDS]
        parts = _apportion(sizes, height)
        stack: list[Content] = []
        for (_, style, _), part in zip(KINDS, parts, strict=True):
            stack += [Content("█").stylize(style)] * part
        stack += [blank] * (rows - len(stack))
        return stack[::-1][:rows]

    def _axis(self, width: int, step: int) -> Content:
        first, last = self.columns[0].period, self.columns[-1].period
        if len(self.columns) == 1 or len(first) + len(last) + 1 > width:
            return Content(first[:width])
        span = min(width, len(self.columns) * step)
        return Content(first + " " * max(1, span - len(first) - len(last)) + last)

    # -- keys ---------------------------------------------------------------------------------

    def watch_cursor(self) -> None:
        self.refresh()

    def watch_tokens(self) -> None:
        self.refresh()

    def action_move(self, by: int) -> None:
        self.action_move_to(max(0, min(len(self.columns) - 1, self.cursor + by)))

    def action_move_to(self, index: int) -> None:
        if not self.columns:
            return
        self.cursor = index % len(self.columns)
        self.post_message(self.Moved(self.columns[self.cursor]))


def columns_for(
    days: Mapping[date, UsageTotals], first: date, last: date, width: int
) -> tuple[list[Column], str]:
    """A column per day from ``first`` to ``last``, or per week (from Monday) or month when
    there would be more columns than ``width``."""
    every = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    for unit, key in (
        ("day", lambda d: d.isoformat()),
        ("week", lambda d: (d - timedelta(days=d.weekday())).isoformat()),
        ("month", lambda d: d.isoformat()[:7]),
    ):
        periods: dict[str, UsageTotals] = {}
        for day in every:
            total = periods.setdefault(key(day), UsageTotals())
            usage = days.get(day)
            if usage is not None:
                total.add(usage)
        if len(periods) <= max(width, 1) or unit == "month":
            return [Column(period, total) for period, total in periods.items()], unit
    return [], "day"


def _apportion(sizes: list[int], cells: int) -> list[int]:
    """``cells`` shared out in proportion to ``sizes`` (largest remainders), so the stack is as
    tall as the column and a small kind is never drawn bigger than it is."""
    total = sum(sizes)
    if not total or not cells:
        return [0] * len(sizes)
    exact = [size * cells / total for size in sizes]
    parts = [int(x) for x in exact]
    for index in sorted(range(len(sizes)), key=lambda i: exact[i] - parts[i], reverse=True):
        if sum(parts) >= cells:
            break
        parts[index] += 1
    return parts
