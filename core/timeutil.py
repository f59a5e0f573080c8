"""Timestamps: one text form in the index so they sort and compare as strings.

Sources write ISO 8601 with ``Z`` or offsets, with or without fractions, and pi writes epoch
milliseconds. The index stores ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC), which sorts correctly as text.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_CACHE_SIZE = 4096


def parse_ts(value: object) -> datetime | None:
    """A timezone-aware UTC datetime, or ``None`` if ``value`` is not a timestamp."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            seconds = value / 1000 if value > 10**11 else value
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    tz = parsed.tzinfo
    if tz is UTC:
        return parsed  # "Z", the common case: already UTC
    if tz is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+14:00 is before year 1 in UTC: off the calendar
        return None


def format_ts(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ``, the year always in four digits: text order is time order."""
    utc = moment.astimezone(UTC)
    return utc.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def normalize_ts(value: object) -> str | None:
    """The index's text form of ``value``, or ``None``."""
    if isinstance(value, str) and len(value) == 24 and value[-1] == "Z" and value[19] == ".":
        return value  # already canonical: the common case, skip parsing
    parsed = parse_ts(value)
    return format_ts(parsed) if parsed else None


def now_ts() -> str:
    return format_ts(datetime.now(UTC))


def date_bounds(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """The index timestamps a ``since``/``until`` pair selects: ``ts >= low`` and ``ts < high``.

    Both ends are inclusive as a person reads them: ``--until 2025-07-14`` keeps that whole day
    (the bound is the next midnight), so ``--since D --until D`` is day D. A bound with a time
    keeps that instant. A value that is not a date, or a ``since`` after its ``until`` (which
    could only ever match nothing), is a :class:`ValueError` whose text is the message to show.
    """
    low = _bound("since", since)
    high = _bound("until", until)
    if high is not None and until is not None and len(until.strip()) == 10:
        high += timedelta(days=1)  # a bare date: the end of its day
    elif high is not None:
        high += timedelta(milliseconds=1)
    if low is not None and high is not None and low >= high:
        raise ValueError(f"since {since} is after until {until}: nothing can match")
    return (format_ts(low) if low else None, format_ts(high) if high else None)


def _bound(name: str, value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parse_ts(value.strip())
        if parsed is not None:
            format_ts(parsed + timedelta(days=1))  # the day after must be on the calendar too
    except (OverflowError, ValueError):
        parsed = None
    if parsed is None:
        raise ValueError(f"not a date: {value!r} (use YYYY-MM-DD)")
    return parsed
