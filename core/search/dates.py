"""Dates a person says in a question: "on May 3", "last Tuesday", "in Jul 2025", "in the last 3
days", "two weeks ago", "2026-01-14".

:func:`date_window` finds the first such expression and returns the days it names, read in the
person's local time zone, as the span of index timestamps (UTC, ``until`` exclusive) search
favours, and where the expression sits in the query so that its words are not searched for.
Search, recall and the hooks all read dates here and nowhere else. The readings are listed in
docs/dates.md; ``tests/search/test_dates.py`` holds them as a table against a fixed day.

A date never comes from an ordinary word: a month or weekday that is also an English word ("I
may", "march on", "the cat sat", "the sun", "we wed") or a name ("Jan said") counts only where
a person writing a date puts it: after "on", "in", "since", "last", with a day or a year, or
capitalised where the word alone would be a verb. A weekday named alone is a time only in a
question or a sentence ("what did we do Tuesday?"); among a few keywords ("zebracorn Tuesday")
it is a word to look for. A false date is worse than none: search puts what was said then
first, and a question naming only a time lists only what was said then.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo

from clawback.core.search.sentence import is_natural
from clawback.core.timeutil import format_ts, local_midnight

MAX_READ = 2_000  # characters of a query read for a date: a long prompt's tail is pasted text

_MONTH_NAMES = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec"),
)  # fmt: skip
MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, 1) for name in names}
#: month words that are also ordinary words or names: lower case and without a cue, no date
_WORDY_MONTHS = frozenset({"may", "march", "mar", "jan", "dec", "august"})
#: what follows "may" when it is the verb ("since may be empty", "in may have")
_MAY_VERB = re.compile(
    r"\s+(?:be|not|have|need|want|also|still|just|help|take|get|cause|break|work|fail|"
    r"make|come|go|do|use|run|look|seem|well|never|only|even)\b",
    re.IGNORECASE,
)
_WEEKDAY_NAMES = (
    ("monday", "mon"), ("tuesday", "tue", "tues"), ("wednesday", "wed"),
    ("thursday", "thu", "thur", "thurs"), ("friday", "fri"), ("saturday", "sat"),
    ("sunday", "sun"),
)  # fmt: skip
WEEKDAYS = {name: number for number, names in enumerate(_WEEKDAY_NAMES) for name in names}
#: weekday abbreviations that are English words: only capitalised ("on Sat", not "sat on")
_WORDY_DAYS = frozenset({"mon", "wed", "sat", "sun"})
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "couple of": 2, "a couple": 2, "a few": 3, "few": 3,
}  # fmt: skip

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_FULL_DAY = "|".join(names[0] for names in _WEEKDAY_NAMES)
_ANY_DAY = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_LEAD = r"(?:(?P<lead>on|in|during|since|from)\s+)"
_PART = r"(?:(?:early|mid|late|the\s+(?:start|beginning|middle|end)\s+of)-?\s*)?"
_END = r"(?![\w'’])"  # not followed by more of a word, nor a possessive ("Jan's branch")


@dataclass(frozen=True, slots=True)
class DateWindow:
    """``since`` <= time < ``until`` (index timestamps, UTC); ``span``: where the query says it;
    ``first`` and ``last``: the days it names, in the person's time zone; ``words``: what of it
    a message can say as words ("Tuesday", "March", "2025", "2026-01-14"; none for "yesterday"
    or "3 days ago"), so that search also finds the messages saying them (:func:`said`)."""

    since: str
    until: str
    span: tuple[int, int]
    first: date = field(compare=False)
    last: date = field(compare=False)
    words: tuple[str, ...] = field(default=(), compare=False)

    def contains(self, ts: str | None) -> bool:
        return ts is not None and self.since <= ts < self.until

    def days(self) -> tuple[str, str]:
        """The first and the last day, as the person reads them."""
        return self.first.isoformat(), self.last.isoformat()

    def described(self) -> str:
        """The days as a person reads them: ``2026-05-03`` or ``2026-05-01 to 2026-05-31``."""
        first, last = self.days()
        return first if first == last else f"{first} to {last}"


Days = tuple[date, date]  # the first day and the day after the last, local
_Reader = Callable[[re.Match[str], date], Days | None]


def date_window(query: str, now: date | datetime | None = None) -> DateWindow | None:
    """The time the query names, or ``None``: the earliest expression in the text wins.

    ``now``: an aware datetime reads days in its time zone; a date is today in the local time
    zone; ``None`` is now, here."""
    today, zone = _today(now)
    text = query[:MAX_READ]
    best: tuple[re.Match[str], Days] | None = None
    for pattern, read in _RULES:
        for found in pattern.finditer(text):
            if best is not None and found.start() >= best[0].start():
                break
            days = read(found, today)
            if days is not None:
                best = (found, days)
                break
    if best is None:
        return None
    found, (first, after) = best
    if (found.groupdict().get("lead") or "").lower() in ("since", "from"):
        after = max(after, today + timedelta(days=1))  # "since May": from then until now
    return DateWindow(
        _stamp(first, zone),
        _stamp(after, zone),
        found.span(),
        first,
        after - timedelta(days=1),
        said(found),
    )


def said(found: re.Match[str]) -> tuple[str, ...]:
    """The words of a date expression that a message says when it names that date: a weekday, a
    month, a year, an ISO date. Not a day's number ("3" is not "3rd"), not a name that is also
    an ordinary word ("may", "sun": every message would say it), not "last", "on", "yesterday"
    or "3 days ago"."""
    groups = found.groupdict()
    if groups.get("y"):
        return (found.group(0),)
    names = [groups[name] for name in ("wd", "month", "year") if groups.get(name)]
    return tuple(n for n in names if n.lower() not in _WORDY_MONTHS | _WORDY_DAYS)


def _today(now: date | datetime | None) -> tuple[date, tzinfo | None]:
    if isinstance(now, datetime):
        local = now if now.tzinfo is not None else now.astimezone()
        return local.date(), local.tzinfo
    if isinstance(now, date):
        return now, None
    return datetime.now().astimezone().date(), None


def _stamp(day: date, zone: tzinfo | None) -> str:
    """The index timestamp of the local midnight starting ``day``, read as every date a person
    gives is (``--since`` too: :func:`~clawback.core.timeutil.local_midnight`)."""
    return format_ts(local_midnight(day, zone))


# -------------------------------------------------------------------------------- the readings


def _iso(found: re.Match[str], today: date) -> Days | None:
    day = _date(int(found["y"]), int(found["m"]), int(found["d"]))
    return (day, day + timedelta(days=1)) if day else None


_RELATIVE = {
    "today": (0, 1), "tonight": (0, 1), "this morning": (0, 1), "this afternoon": (0, 1),
    "this evening": (0, 1), "earlier today": (0, 1), "yesterday": (-1, 0),
    "the day before yesterday": (-2, -1), "day before yesterday": (-2, -1),
}  # fmt: skip


def _relative(found: re.Match[str], today: date) -> Days | None:
    words = " ".join(found["rel"].lower().split())
    if words in _RELATIVE:
        start, end = _RELATIVE[words]
        return today + timedelta(days=start), today + timedelta(days=end)
    which, unit = words.split()
    tomorrow = today + timedelta(days=1)
    if unit == "weekend":
        # "this weekend": this week's, once it has begun; "last"/"past weekend": the latest
        # that has begun, or on a weekend for "last", the one before.
        saturday = today - timedelta(days=(today.weekday() - 5) % 7)
        if which == "this" and today.weekday() < 5:
            return None
        if which == "last" and today.weekday() >= 5:
            saturday -= timedelta(days=7)
        return saturday, saturday + timedelta(days=2)
    if unit == "week":
        monday = today - timedelta(days=today.weekday()) - timedelta(days=7 * (which == "last"))
        if which == "past":
            return today - timedelta(days=7), tomorrow
        return monday, (tomorrow if which == "this" else monday + timedelta(days=7))
    if unit == "month":
        first = today.replace(day=1)
        if which == "last":
            return _months_back(first, 1), first
        return (_months_back(today, 1) if which == "past" else first), tomorrow
    if which == "last":
        return date(today.year - 1, 1, 1), date(today.year, 1, 1)
    return (_years_back(today, 1) if which == "past" else date(today.year, 1, 1)), tomorrow


def _last_n(found: re.Match[str], today: date) -> Days | None:
    """A span back from today ("in the last 3 days", "over the past two weeks"): from that long
    ago through today."""
    count, unit = _count(found), found["unit"].lower()
    if count is None or count == 0:
        return None
    return _back(today, count, unit), today + timedelta(days=1)


def _ago(found: re.Match[str], today: date) -> Days | None:
    """A time ago ("two weeks ago"): about then, give or take half a unit (a day for days)."""
    count, unit = _count(found), found["unit"].lower()
    if count is None:
        return None
    middle = _back(today, count, unit)
    slack = timedelta(days={"day": 1, "week": 3, "month": 15, "year": 182}[unit])
    if unit == "day" and count <= 2:
        slack = timedelta(0)  # "2 days ago" is that day
    return middle - slack, middle + slack + timedelta(days=1)


def _weekday(found: re.Match[str], today: date) -> Days | None:
    """A weekday ("on Tuesday", "last Tuesday", "Friday's", "Tuesday" in a question): the latest
    before today; "Tuesday before last" the one before that; "this Tuesday" this week's, when it
    is not still to come."""
    name = found["wd"]
    key = name.lower()
    if key in _WORDY_DAYS and not name[0].isupper():
        return None  # "sat on it", "the sun": words, not days
    if key not in (names[0] for names in _WEEKDAY_NAMES) and not (
        found["which"] or found.groupdict().get("lead")
    ):
        return None  # an abbreviation alone ("fri") is no date
    cued = found["which"] or found.groupdict().get("lead") or found["before_last"]
    if not (cued or _possessive(found) or is_natural(found.string)):
        return None  # "zebracorn Tuesday": a word to look for, not a time
    target = WEEKDAYS[key]
    which = (found["which"] or "").lower()
    if which == "this":
        day = today - timedelta(days=today.weekday() - target)
        return (day, day + timedelta(days=1)) if day <= today else None
    day = today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)
    if found["before_last"]:
        day -= timedelta(days=7)
    return day, day + timedelta(days=1)


def _month_day(found: re.Match[str], today: date) -> Days | None:
    if not _month_said(found):
        return None
    month = MONTHS[found["month"].lower()]
    day = _recent_day(month, int(found["day"]), found["year"], today)
    return (day, day + timedelta(days=1)) if day else None


def _month(found: re.Match[str], today: date) -> Days | None:
    """A month ("in March", "Jul 2025", "last June", "since Oct"): the whole month."""
    if not _month_said(found):
        return None
    month = MONTHS[found["month"].lower()]
    which = (found.groupdict().get("which") or "").lower()
    if found.groupdict().get("year"):
        year = int(found["year"])
    elif which == "this":
        year = today.year
        if month > today.month:
            return None  # a month still to come holds nothing yet
    else:
        # The latest such month: "in March" is this March once it has begun; "last March" is
        # the one before the current month, so in March it is a year ago.
        year = (
            today.year
            if month < today.month or (month == today.month and not which)
            else (today.year - 1)
        )
    first = date(year, month, 1)
    return first, _months_back(first, -1)


def _year(found: re.Match[str], today: date) -> Days | None:
    year = int(found["year"])
    return date(year, 1, 1), date(year + 1, 1, 1)


def _nth(found: re.Match[str], today: date) -> Days | None:
    """A day of the month ("on the 14th"): the latest 14th not after today."""
    number = int(found["day"])
    day = _date(today.year, today.month, number)
    if day is None or day > today:
        previous = _months_back(today.replace(day=1), 1)
        day = _date(previous.year, previous.month, number)
    return (day, day + timedelta(days=1)) if day else None


# ------------------------------------------------------------------------------------ helpers


def _month_said(found: re.Match[str]) -> bool:
    """Whether a month word is meant as a month. One that is also a verb or a name (may, march,
    Jan) needs a capital, a year, or "in"/"since"/"on" before it ("this may happen" is no
    date); "may" without a day or year must not read as the verb ("since may be empty")."""
    name = found["month"]
    key = name.lower()
    groups = found.groupdict()
    if key in _WORDY_MONTHS and not (name[0].isupper() or groups.get("lead") or groups.get("year")):
        return False
    if key == "may" and not groups.get("day") and not groups.get("year"):
        return _MAY_VERB.match(found.string, found.end()) is None
    return True


def _possessive(found: re.Match[str]) -> bool:
    """Whether the expression is followed by 's, as in "Friday's standup" (a time's own)."""
    return found.string[found.end() : found.end() + 2].replace("’", "'") == "'s"


def _count(found: re.Match[str]) -> int | None:
    text = " ".join(found["count"].lower().split())
    return int(text) if text.isdigit() else _NUMBERS.get(text)


def _back(today: date, count: int, unit: str) -> date:
    if unit == "day":
        return today - timedelta(days=count)
    if unit == "week":
        return today - timedelta(days=7 * count)
    if unit == "month":
        return _months_back(today, count)
    return _years_back(today, count)


def _months_back(day: date, count: int) -> date:
    """``day`` ``count`` months earlier (later when negative), the day of the month kept where
    the month has it (March 31 back one month is February 28)."""
    index = day.year * 12 + day.month - 1 - count
    year, month = divmod(index, 12)
    for last in (day.day, 30, 29, 28):
        found = _date(year, month + 1, min(day.day, last))
        if found is not None:
            return found
    return date(year, month + 1, 1)


def _years_back(day: date, count: int) -> date:
    return _date(day.year - count, day.month, day.day) or date(day.year - count, day.month, 28)


def _recent_day(month: int, day: int, year: str | None, today: date) -> date | None:
    """The date, or without a year the latest one not after today ("on Dec 24" asked in
    January means last December)."""
    if year:
        return _date(int(year), month, day)
    found = _date(today.year, month, day)
    if found is not None and found <= today:
        return found
    return _date(today.year - 1, month, day)


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:  # "February 30", month 13: not a date
        return None


def _rule(pattern: str, read: _Reader) -> tuple[re.Pattern[str], _Reader]:
    return re.compile(pattern, re.IGNORECASE), read


# Tried in this order; the expression starting first in the query wins, and at the same start
# the rule listed first (the longer reading: "Tuesday before last" before "Tuesday").
_RULES: list[tuple[re.Pattern[str], _Reader]] = [
    _rule(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>\d{2})-(?P<d>\d{2})\b", _iso),
    _rule(
        r"\b(?:(?:in|over|during|within|for)\s+)?(?:the\s+)?(?:last|past)\s+"
        rf"{_COUNT}\s+{_UNIT}\b",
        _last_n,
    ),
    _rule(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", _ago),
    _rule(
        r"\b(?P<rel>(?:the\s+)?day\s+before\s+yesterday|yesterday|today|tonight|earlier\s+today"
        r"|this\s+(?:morning|afternoon|evening)"
        r"|(?:this|last|past)\s+(?:week|weekend|month|year))(?![\w-])",
        _relative,
    ),
    _rule(
        rf"\b(?:{_LEAD}|(?P<which>last|this)\s+)?(?P<wd>{_ANY_DAY})\.?"
        r"(?P<before_last>\s+before\s+last)?(?!\w)",
        _weekday,
    ),
    _rule(
        rf"\b{_LEAD}?(?P<month>{_MONTH})\.?\s+{_DAY}(?![\d:])\b(?:,?\s+{_YEAR}\b)?",
        _month_day,
    ),
    _rule(
        rf"\b{_LEAD}?(?:the\s+)?{_DAY}\s+(?:of\s+)?(?P<month>{_MONTH})\b\.?(?:,?\s+{_YEAR}\b)?",
        _month_day,
    ),
    _rule(rf"\b{_LEAD}?{_PART}(?P<month>{_MONTH})\.?,?\s+(?:of\s+)?{_YEAR}\b", _month),
    _rule(rf"\b(?:{_LEAD}{_PART}|(?P<which>last|this)\s+)(?P<month>{_MONTH})\.?{_END}", _month),
    _rule(rf"\b(?P<lead>in|during|since|from)\s+{_YEAR}\b", _year),
    _rule(r"\bon\s+the\s+(?P<day>\d{1,2})(?:st|nd|rd|th)\b", _nth),
]
