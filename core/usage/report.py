"""Usage read back: tokens and cost per day, week, month, project, session or model.

Every client (``clawback usage``, the app's usage pane, the sessions list, the transcript's
header) asks :func:`usage_report` or :func:`session_usage`; both read only ``usage_buckets``
(sums per session, quarter hour and model, see :mod:`.index`) and price them with a
:class:`~.prices.PriceTable`. Days, weeks and months are the person's own (local time); a
week starts on Monday. Only reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from clawback.core.db import Queryable
from clawback.core.timeutil import date_bounds, format_ts, parse_ts
from clawback.core.usage.prices import PriceTable, Tokens

GROUPINGS = ("day", "week", "month", "project", "session", "model")
PERIODS = ("day", "week", "month")
NO_DATE = ""  # the period of usage whose lines have no time

_KEYS = {
    "day": "date(b.bucket, 'localtime')",
    "week": "date(b.bucket, 'localtime', 'weekday 0', '-6 days')",
    "month": "strftime('%Y-%m', b.bucket, 'localtime')",
    "project": "s.cwd",
    "session": "b.session_id",
    "model": "b.model || CASE WHEN b.fast THEN ' (fast)' ELSE '' END",
}


@dataclass
class UsageTotals:
    """Tokens of the counted responses, and what they cost.

    ``cost_usd`` is what the known part cost; tokens of a model without a known price are in
    ``unpriced_tokens`` (their models in ``unpriced_models``), and :attr:`cost` is then
    ``None``: a total that leaves part out is never shown as the whole.
    """

    responses: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_tokens: int = 0
    unpriced_models: set[str] = field(default_factory=set)

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    @property
    def cost(self) -> float | None:
        """The whole cost, or ``None`` when part of it is unknown."""
        return None if self.unpriced_tokens else self.cost_usd

    @property
    def cache_read_share(self) -> float | None:
        """The part of the prompt tokens read from the cache (input, cache reads and cache
        writes make a prompt); ``None`` without prompt tokens."""
        prompt = self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
        return self.cache_read_tokens / prompt if prompt else None

    def add(self, other: UsageTotals) -> None:
        self.responses += other.responses
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cost_usd += other.cost_usd
        self.unpriced_tokens += other.unpriced_tokens
        self.unpriced_models |= other.unpriced_models

    def token_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "total_tokens": self.total_tokens,
            "cache_read_share": _round(self.cache_read_share, 4),
            "cost_usd": _round(self.cost, 6),
            "known_cost_usd": _round(self.cost_usd, 6),
            "unpriced_models": sorted(self.unpriced_models),
            "responses": self.responses,
        }


@dataclass
class UsageRow(UsageTotals):
    """One row of a report: ``key`` is its period, project (a working directory), session id
    or model; a session's row carries its title, project and dates."""

    key: str = ""
    title: str | None = None
    project: str | None = None
    first: str | None = None  # sessions: when they started and were last active
    last: str | None = None

    def to_json(self, by: str) -> dict[str, Any]:
        head: dict[str, Any]
        if by in PERIODS:
            head = {"period": self.key or None}
        elif by == "project":
            head = {"project": self.key or None}
        elif by == "session":
            head = {
                "session_id": self.key,
                "title": self.title,
                "project": self.project,
                "started_at": self.first,
                "updated_at": self.last,
            }
        else:
            head = {"model": self.key or None}
        return {**head, **self.token_json()}


@dataclass
class UsageReport:
    by: str
    rows: list[UsageRow]
    total: UsageTotals


def usage_report(
    db: Queryable,
    prices: PriceTable,
    *,
    by: str = "day",
    since: str | None = None,
    until: str | None = None,
    project: str | None = None,
    model: str | None = None,
    limit: int | None = None,
) -> UsageReport:
    """The counted usage grouped ``by`` one of :data:`GROUPINGS`.

    ``since``/``until`` are inclusive local dates (or times, read to the quarter hour) as
    search reads them (a bad one is a :class:`ValueError` to show); ``project`` keeps
    sessions whose working directory contains it; ``model`` one model. Periods come oldest
    first; projects, sessions and models costliest first (then most tokens). ``limit`` keeps
    that many rows; the total is always the whole selection's.
    """
    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {', '.join(GROUPINGS)}")
    where, params = _where(since, until, project, model)
    join = "LEFT JOIN sessions s ON s.id = b.session_id" if by == "project" or project else ""
    sql = f"""
        SELECT coalesce({_KEYS[by]}, '') AS k, b.model, b.fast, b.band, b.priced,
               substr(b.bucket, 1, 10), sum(b.responses), sum(b.input_tokens),
               sum(b.output_tokens), sum(b.cache_read_tokens), sum(b.cache_write_tokens),
               sum(b.cache_write_1h_tokens), sum(b.cost_usd)
        FROM usage_buckets b {join} WHERE {where}
        GROUP BY k, b.model, b.fast, b.band, b.priced, substr(b.bucket, 1, 10)"""
    rows: dict[str, UsageRow] = {}
    for key, *group in db.execute(sql, params):
        row = rows.get(key)
        if row is None:
            row = rows[key] = UsageRow(key=key)
        _add_group(row, group, prices)
    total = UsageTotals()
    for row in rows.values():
        total.add(row)
    ordered = _ordered(list(rows.values()), by)
    if limit is not None:
        ordered = ordered[:limit]
    if by == "session":
        _describe_sessions(db, ordered)
    return UsageReport(by, ordered, total)


def session_usage(
    db: Queryable, prices: PriceTable, session_ids: Iterable[str]
) -> dict[str, UsageTotals]:
    """Each of ``session_ids``' whole usage (sessions without any are left out)."""
    ids = sorted(set(session_ids))
    found: dict[str, UsageTotals] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for session_id, *group in db.execute(
            f"""SELECT session_id, model, fast, band, priced, substr(bucket, 1, 10),
                       sum(responses), sum(input_tokens), sum(output_tokens),
                       sum(cache_read_tokens), sum(cache_write_tokens),
                       sum(cache_write_1h_tokens), sum(cost_usd)
                FROM usage_buckets WHERE session_id IN ({marks})
                GROUP BY session_id, model, fast, band, priced, substr(bucket, 1, 10)""",
            chunk,
        ):
            _add_group(found.setdefault(session_id, UsageTotals()), group, prices)
    return found


def models(db: Queryable) -> list[str]:
    """Every model with usage, most tokens first (the app's model filter)."""
    return [
        row[0]
        for row in db.execute(
            """SELECT model FROM usage_buckets WHERE model != '' GROUP BY model
               ORDER BY sum(input_tokens + output_tokens + cache_read_tokens
                            + cache_write_tokens) DESC"""
        )
    ]


def cost_text(usage: UsageTotals) -> str:
    """A cost as people read it: ``$12.34``, ``<$0.01``, ``unknown`` when no part of it has a
    price, and ``+?`` after the known part when some tokens have none."""
    if usage.unpriced_tokens and not usage.cost_usd:
        return "unknown"
    known = usage.cost_usd
    shown = f"${known:,.2f}" if known >= 0.005 or not known else "<$0.01"
    return f"{shown}+?" if usage.unpriced_tokens else shown


def projects(db: Queryable) -> list[str]:
    """Every working folder with usage, most tokens first (the app's project filter)."""
    return [
        row[0]
        for row in db.execute(
            """SELECT s.cwd FROM usage_buckets b JOIN sessions s ON s.id = b.session_id
               WHERE s.cwd IS NOT NULL AND s.cwd != '' GROUP BY s.cwd
               ORDER BY sum(b.input_tokens + b.output_tokens + b.cache_read_tokens
                            + b.cache_write_tokens) DESC"""
        )
    ]


def _add_group(row: UsageTotals, group: list[Any], prices: PriceTable) -> None:
    model, fast, band, priced, day, responses, inp, out, read, write, write_1h, cost = group
    row.responses += responses
    row.input_tokens += inp
    row.output_tokens += out
    row.cache_read_tokens += read
    row.cache_write_tokens += write
    if priced:
        row.cost_usd += cost or 0.0
        return
    tokens = Tokens(inp, out, read, write, write_1h)
    priced_at = prices.cost(model or None, tokens, day=day or None, band=band, fast=bool(fast))
    if priced_at is None:
        row.unpriced_tokens += inp + out + read + write
        row.unpriced_models.add(f"{model or '(no model)'}{' (fast)' if fast else ''}")
    else:
        row.cost_usd += priced_at


def _where(
    since: str | None, until: str | None, project: str | None, model: str | None
) -> tuple[str, list[Any]]:
    clauses = ["1"]
    params: list[Any] = []
    low, high = date_bounds(since, until)  # as search reads them: one reading
    if low:
        clauses.append("b.bucket >= ?")
        params.append(_quarter(low, up=False))
    if high:
        clauses.append("b.bucket < ? AND b.bucket != ''")
        params.append(_quarter(high, up=True))
    if project:
        escaped = project.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("s.cwd LIKE ? ESCAPE '\\'")
        params.append(f"%{escaped}%")
    if model:
        clauses.append("b.model = ?")
        params.append(model)
    return " AND ".join(clauses), params


def _quarter(ts: str, *, up: bool) -> str:
    """The quarter hour (a bucket's start) an index timestamp falls in, or with ``up`` the
    first that starts at or after it. A day's bounds in any time zone fall on a quarter hour,
    so a bare date selects exactly its day; a time is read to the quarter hour."""
    moment = parse_ts(ts)
    assert moment is not None  # date_bounds made it
    floor = moment.replace(minute=moment.minute - moment.minute % 15, second=0, microsecond=0)
    if up and floor < moment:
        floor += timedelta(minutes=15)
    return format_ts(floor)[:16]


def _ordered(rows: list[UsageRow], by: str) -> list[UsageRow]:
    if by in PERIODS:
        # The usage of lines without a time last.
        return sorted(rows, key=lambda r: (r.key == NO_DATE, r.key))
    return sorted(rows, key=lambda r: (-r.cost_usd, -r.total_tokens, r.key))


def _describe_sessions(db: Queryable, rows: list[UsageRow]) -> None:
    by_id = {row.key: row for row in rows}
    ids = list(by_id)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for session_id, title, cwd, first, last in db.execute(
            f"""SELECT id, coalesce(label, title, first_prompt), cwd, started_at, updated_at
                FROM sessions WHERE id IN ({marks})""",
            chunk,
        ):
            row = by_id[session_id]
            row.title = " ".join(title.split())[:200] if title else None
            row.project, row.first, row.last = cwd, first, last


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
