"""Dates in a question: "on May 3", "last week", "in March 2024", "2026-01-14".

:func:`date_window` finds the first such expression and returns the span of time it names
(UTC days, ``until`` exclusive) and where it sits in the query, so search can favour what was
said then and leave the date's words out of the words it looks for. A date without a year is
the most recent one not after today ("on May 3" asked in January means last May). Month names
alone count only after "in", "during" or "since", or before a year: a bare "may" is a verb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}  # fmt: skip
_FULL = "|".join(name for name in MONTHS if len(name) > 4 or name == "may")
_ANY = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("month_day", re.compile(rf"\b(?:on\s+)?({_ANY})\.?\s+{_DAY}\b(?:,?\s+{_YEAR}\b)?", re.I)),
    ("day_month",
     re.compile(rf"\b(?:on\s+)?{_DAY}\s+(?:of\s+)?({_ANY})\b(?:,?\s+{_YEAR}\b)?", re.I)),
    ("month_year", re.compile(rf"\b(?:in\s+|during\s+)?({_FULL})\s+{_YEAR}\b", re.I)),
    ("in_month", re.compile(rf"\b(?:in|during|since)\s+({_FULL})\b", re.I)),
    ("in_year", re.compile(rf"\b(?:in|during)\s+{_YEAR}\b", re.I)),
    ("ago",
     re.compile(r"\b(\d+|an?|one|two|three|four|five|six)\s+(day|week|month)s?\s+ago\b", re.I)),
    ("relative",
     re.compile(r"\b(today|yesterday|(?:this|last|past)\s+(?:week|month|year))\b", re.I)),
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class DateWindow:
    """``since`` <= time < ``until`` (index timestamps, UTC); ``span``: where the query says it."""

    since: str
    until: str
    span: tuple[int, int]

    def contains(self, ts: str | None) -> bool:
        return ts is not None and self.since <= ts < self.until

    def days(self) -> tuple[str, str]:
        """The first and the last day, as a person reads them (``until`` is the day after)."""
        last = date.fromisoformat(self.until[:10]) - timedelta(days=1)
        return self.since[:10], last.isoformat()

    def described(self) -> str:
        """The days as a person reads them: ``2026-05-03`` or ``2026-05-01 to 2026-05-31``."""
        first, last = self.days()
        return first if first == last else f"{first} to {last}"


def date_window(query: str, today: date | None = None) -> DateWindow | None:
    """The time the query names, or ``None``: the earliest match in the text wins."""
    today = today or datetime.now(UTC).date()
    best: DateWindow | None = None
    for kind, pattern in _PATTERNS:
        for found in pattern.finditer(query):
            days = _days(kind, found, today)
            if days is not None and (best is None or found.start() < best.span[0]):
                best = DateWindow(_stamp(days[0]), _stamp(days[1]), found.span())
                break
    return best


def _days(kind: str, found: re.Match[str], today: date) -> tuple[date, date] | None:
    """``(first day, day after the last)`` for one match, or ``None`` when it is no date."""
    groups = found.groups()
    try:
        if kind == "iso":
            day = date(int(groups[0]), int(groups[1]), int(groups[2]))
            return day, day + timedelta(days=1)
        if kind in ("month_day", "day_month"):
            month_name, day_text = (groups[0], groups[1]) if kind == "month_day" else groups[1::-1]
            if month_name == "may" and not found.group().lower().startswith("on"):
                return None  # "you may 3 times" is not a date; "May 3" and "on may 3" are
            day = _recent(MONTHS[month_name.lower()], int(day_text), groups[2], today)
            return day, day + timedelta(days=1)
        if kind in ("month_year", "in_month"):
            month = MONTHS[groups[0].lower()]
            year = int(groups[1]) if kind == "month_year" else _recent_year(month, today)
            return date(year, month, 1), _next_month(date(year, month, 1))
        if kind == "in_year":
            return date(int(groups[0]), 1, 1), date(int(groups[0]) + 1, 1, 1)
        if kind == "ago":
            return _ago(groups[0].lower(), groups[1].lower(), today)
        return _relative(" ".join(groups[0].lower().split()), today)
    except ValueError:  # "February 30", month 13: not a date
        return None


def _recent(month: int, day: int, year: str | None, today: date) -> date:
    if year:
        return date(int(year), month, day)
    candidate = date(today.year, month, day)
    return candidate if candidate <= today else date(today.year - 1, month, day)


def _recent_year(month: int, today: date) -> int:
    return today.year if month <= today.month else today.year - 1


def _next_month(first: date) -> date:
    return date(first.year + first.month // 12, first.month % 12 + 1, 1)


def _ago(amount: str, unit: str, today: date) -> tuple[date, date]:
    count = _NUMBERS.get(amount) or int(amount)
    length = {"day": 1, "week": 7, "month": 30}[unit]
    middle = today - timedelta(days=count * length)
    slack = timedelta(days=max(1, length // 2))  # "two weeks ago" is about then, give or take
    return middle - slack, middle + slack + timedelta(days=1)


def _relative(words: str, today: date) -> tuple[date, date]:
    tomorrow = today + timedelta(days=1)
    monday = today - timedelta(days=today.weekday())
    first = today.replace(day=1)
    spans = {
        "today": (today, tomorrow),
        "yesterday": (today - timedelta(days=1), today),
        "this week": (monday, tomorrow),
        "last week": (monday - timedelta(days=7), monday),
        "past week": (today - timedelta(days=7), tomorrow),
        "this month": (first, tomorrow),
        "last month": ((first - timedelta(days=1)).replace(day=1), first),
        "past month": (today - timedelta(days=30), tomorrow),
        "this year": (date(today.year, 1, 1), tomorrow),
        "last year": (date(today.year - 1, 1, 1), date(today.year, 1, 1)),
        "past year": (today - timedelta(days=365), tomorrow),
    }
    return spans[words]


def _stamp(day: date) -> str:
    return f"{day.isoformat()}T00:00:00.000Z"
