"""The filters a search narrows by, as SQL over ``entries e``, ``files f`` and ``sessions s``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from clawback.core.db import Queryable
from clawback.core.errors import UsageError
from clawback.core.records import KIND_FILTERS
from clawback.core.timeutil import date_bounds, format_ts, parse_ts

CONVERSATIONAL = (
    "e.kind IN ('text', 'compaction') AND (e.conversational = 1 OR f.source = 'memory')"
)
_PASSING = """
SELECT e.id FROM entries e JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id
WHERE e.id IN ({ids}){where}
"""
# Text the person wrote, not a wrapper Claude Code writes into their turn: a slash command they
# ran (``<command-name>/exit``), its output (``<local-command-stdout>``).
NOT_MARKUP = "e.text NOT LIKE '<%'"


@dataclass
class SearchFilters:
    source: str | None = None
    session_id: str | None = None
    role: str | None = None
    kind: str = "all"
    since: str | None = None
    until: str | None = None
    project: str | None = None  # substring of the session's cwd
    sidechains: bool = True
    conversational: bool = False  # only what people said (text turns, compactions, memory)
    # What the asker already holds, left out by SQLite before the ranked cut, so it takes no
    # candidate slot (a chat turn's recall: the prompt carries its own session's lines).
    exclude_session: str | None = None  # one session, by its exact id
    exclude_uuids: tuple[str, ...] = ()  # messages, by their transcript ids

    def where(self) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if self.source:
            clauses.append("f.source = ?")
            params.append(self.source)
        if self.session_id:
            clauses.append("e.session_id LIKE ?")
            params.append(self.session_id + "%")
        if self.role:
            clauses.append("e.role = ?")
            params.append(self.role)
        if self.kind != "all":
            if self.kind not in KIND_FILTERS:
                raise UsageError(f"unknown kind {self.kind!r} (use {', '.join(KIND_FILTERS)})")
            kinds = [k.value for k in KIND_FILTERS[self.kind]]
            clauses.append(f"e.kind IN ({', '.join('?' * len(kinds))})")
            params.extend(kinds)
        try:
            low, high = date_bounds(self.since, self.until)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        for bound, op in ((low, ">="), (high, "<")):
            if bound:
                clauses.append(f"e.ts {op} ?")
                params.append(bound)
        if self.project:
            clauses.append("s.cwd LIKE ?")
            params.append(f"%{self.project}%")
        if not self.sidechains:
            clauses.append("e.sidechain = 0")
        if self.conversational:
            clauses.append(CONVERSATIONAL)
        if self.exclude_session:
            clauses.append("e.session_id IS NOT ?")
            params.append(self.exclude_session)
        uuids = sorted({uuid for uuid in self.exclude_uuids if uuid})
        if uuids:
            clauses.append(f"(e.uuid IS NULL OR e.uuid NOT IN ({', '.join('?' * len(uuids))}))")
            params.extend(uuids)
        return clauses, params

    def narrowed(self, since: str, until: str) -> SearchFilters | None:
        """These filters within ``since`` <= time < ``until`` too (index timestamps); ``None``
        when nothing can be both. Bounds a person typed wrong are left for :meth:`where`."""
        try:
            low, high = date_bounds(self.since, self.until)
        except ValueError:
            return self
        low = max(low or since, since)
        high = min(high or until, until)
        if low >= high:
            return None
        last = parse_ts(high)
        assert last is not None  # a bound date_bounds made, or the window's own
        # ``until`` with a time is kept to the instant (date_bounds adds a millisecond).
        return replace(self, since=low, until=format_ts(last - timedelta(milliseconds=1)))


def passing(db: Queryable, ids: list[int], clauses: list[str], params: list[Any]) -> set[int]:
    """The entries among ``ids`` that pass the filters' SQL ``clauses``
    (:meth:`SearchFilters.where`): a turn search brings in place of one it found (the turn an
    acknowledgement answers, the answer to a restated question) must pass them as well."""
    if not ids:
        return set()
    where = "".join(f" AND {clause}" for clause in clauses)
    sql = _PASSING.format(ids=", ".join("?" * len(ids)), where=where)
    return {row[0] for row in db.execute(sql, [*ids, *params])}
