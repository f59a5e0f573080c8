"""Knowledge facts that match a query, for the lists that mix them with the archive's hits.

Facts have their own FTS5 table (``facts_fts``: content and context, no CJK column). A few
keywords must all be there; a question is also answered by any of its content words, ranked
by BM25, as the archive's keyword side does (:mod:`.plan`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from clawback.core.db import Queryable
from clawback.core.search.filters import SearchFilters
from clawback.core.search.plan import plan_query
from clawback.core.search.query import build_match, score_from_rank
from clawback.core.timeutil import date_bounds


@dataclass(frozen=True, slots=True)
class FactHit:
    id: int
    kind: str
    content: str
    context: str | None
    session_id: str | None
    session_title: str | None
    timestamp: str | None
    score: float

    @property
    def text(self) -> str:
        return self.content + (f" ({self.context})" if self.context else "")


def search_facts(db: Queryable, query: str, filters: SearchFilters, limit: int) -> list[FactHit]:
    """Current facts matching ``query`` within the filters' session and dates, best first."""
    plan = plan_query(query)
    strict = build_match(query, cjk_column=None)
    words = [build_match(f'"{word}"', cjk_column=None) for word in plan.highlight]
    loose = " OR ".join(f"({word})" for word in words if word) or None
    found: dict[int, FactHit] = {}
    for match in (strict, loose) if plan.natural or plan.loose else (strict,):
        if match is None or len(found) >= limit:
            continue
        for hit in _facts(db, match, filters, limit):
            found.setdefault(hit.id, hit)
    return list(found.values())[:limit]


def _facts(db: Queryable, match: str, filters: SearchFilters, limit: int) -> list[FactHit]:
    clauses = ["facts_fts MATCH ?", "f.superseded_by IS NULL"]
    params: list[Any] = [match]
    if filters.session_id:
        clauses.append("f.session_id LIKE ?")
        params.append(filters.session_id + "%")
    for bound, op in zip(date_bounds(filters.since, filters.until), (">=", "<"), strict=True):
        if bound:
            clauses.append(f"coalesce(f.source_ts, f.created_at) {op} ?")
            params.append(bound)
    try:
        rows = db.execute(
            f"""SELECT f.id, f.type, f.content, f.context, f.session_id,
                       coalesce(s.label, s.title, s.first_prompt),
                       coalesce(f.source_ts, f.created_at), bm25(facts_fts, 1.0, 0.4)
                FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
                LEFT JOIN sessions s ON s.id = f.session_id
                WHERE {" AND ".join(clauses)} ORDER BY 8 LIMIT ?""",
            [*params, limit],
        ).fetchall()
    except sqlite3.OperationalError:
        return []  # an expression facts_fts cannot run (a CJK column filter) finds nothing
    return [
        FactHit(fact_id, kind, content, context, session, title, ts, score_from_rank(rank))
        for fact_id, kind, content, context, session, title, ts, rank in rows
    ]
