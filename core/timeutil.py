"""Timestamps: one text form in the index so they sort and compare as strings.

Sources write ISO 8601 with ``Z`` or offsets, with or without fractions, and pi writes epoch
milliseconds. The index stores ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC), which sorts correctly as text.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo

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


def local_midnight(day: date, zone: tzinfo | None = None) -> datetime:
    """The start of ``day`` on the person's clock (``zone``; ``None``: the system's, with the
    summer time in force that day), in UTC. Every date a person gives is read this way: the
    ``--since``/``--until`` bounds (:func:`date_bounds`) and the days a question names
    (``search.dates``)."""
    start = datetime.combine(day, time(), tzinfo=zone) if zone else datetime.combine(day, time())
    return start.astimezone(UTC)


def date_bounds(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """The index timestamps a ``since``/``until`` pair selects: ``ts >= low`` and ``ts < high``.

    Both ends are inclusive as a person reads them, in their own days: ``--since 2025-07-14`` is
    that local midnight, ``--until 2025-07-14`` keeps that whole local day (the bound is the
    next local midnight), so ``--since D --until D`` is day D on the person's clock. A time
    without an offset is on their clock too; one with an offset (or ``Z``) is that instant, and
    an ``until`` with a time keeps it. A value that is not a date, or a ``since`` after its
    ``until`` (which could only ever match nothing), is a :class:`ValueError` whose text is the
    message to show.
    """
    low = _bound(since)
    high = _bound(until, end=True)
    if low is not None and high is not None and low >= high:
        raise ValueError(f"since {since} is after until {until}: nothing can match")
    return (format_ts(low) if low else None, format_ts(high) if high else None)


def _bound(value: str | None, *, end: bool = False) -> datetime | None:
    """``value`` read as a bound, UTC: a bare date's local midnight (with ``end``, the next
    one), a time on the local clock or at its own offset (with ``end``, a millisecond on)."""
    if not value:
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            bound = local_midnight(day + timedelta(days=1) if end else day)
        else:
            moment = datetime.fromisoformat(text) if len(text) > 10 else None
            if moment is None:
                raise ValueError(text)
            bound = moment.astimezone(UTC)  # without an offset: the local clock's
            if end:
                bound += timedelta(milliseconds=1)
        format_ts(bound + timedelta(days=1))  # the day after must be on the calendar too
    except (OverflowError, ValueError, OSError):
        raise ValueError(f"not a date: {value!r} (use YYYY-MM-DD)") from None
    return bound
