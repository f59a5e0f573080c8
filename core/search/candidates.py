"""The keyword side's ranked candidates: a few keywords by the strict expression, a question
by the loose one.

A plan (:mod:`.plan`) has a strict expression (everything typed, AND-ed) and maybe a loose one
(content words OR-ed, over what people said). Keywords are answered by the strict hits, by
BM25: a message holding every word typed is the best keyword evidence there is; when those
are fewer than :data:`FEW`, the loose hits follow. A question or sentence is answered by the
loose expression alone. Loose hits holding less than :data:`LOOSE_FLOOR` of the query (see
:mod:`.coverage`) are not results. A date window puts the candidates from that time first,
then those saying every word asked for with the date's own words whenever they were said ("the
migration runs every Tuesday" for "when did the migration run on Tuesday?": a date reading
never hides a message holding every word), then the rest (each part keeps its own order).

The list never depends on how many hits a client shows: every caller takes the first N of the
same list, so ``--limit 3`` shows the first three of what ``--limit 5`` shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from clawback.core.db import Queryable
from clawback.core.search.acknowledgements import MAX_CHARS as ACK_CHARS
from clawback.core.search.acknowledgements import is_acknowledgement
from clawback.core.search.coverage import coverage
from clawback.core.search.filters import NOT_MARKUP, SearchFilters
from clawback.core.search.plan import QueryPlan
from clawback.core.search.prefixes import expand_prefixes
from clawback.core.search.query import score_from_rank

FEW = 5  # a strict expression finding fewer than this also gets the loose one's hits
LOOSE_CONVERSATIONAL = True
LOOSE_FLOOR = 0.25  # calibrated on the dev questions and nonsense (docs/search-quality.md)
REPLIES_OF = 20  # a question's first this many hits bring the person's reply along ...
REPLY_SHARE = 0.5  # ... counting for this share of the hit it replies to
_SHORT_PREFIX = re.compile(r"^\s*\S{1,3}\*\s*$")

_RANKED = """
SELECT m.rowid, {rank} FROM {matches} AS m
{joins}
{where}
ORDER BY {order}
LIMIT :limit OFFSET :offset
"""

_JOIN_ENTRIES = "JOIN entries e ON e.id = m.rowid"
_JOIN_FILES = "JOIN files f ON f.id = e.file_id"
_JOIN_SESSIONS = "LEFT JOIN sessions s ON s.id = e.session_id"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A keyword hit: its entry, a 0..1 score (never above the one before), the expression
    that found it (for its snippet)."""

    id: int
    score: float
    match: str
    strict: bool = True  # found by the strict expression (every typed word), not the loose one
    held: float = 1.0  # the share of the query it holds (see .coverage)
    says_date: bool = False  # outside the date's window, but saying the date's words too


def keyword_candidates(
    db: Queryable, plan: QueryPlan, filters: SearchFilters, depth: int, score_cap: int
) -> list[Candidate]:
    """The first ``depth`` keyword candidates for ``plan``, best first."""
    if plan.window is None:
        return _answers(db, plan, filters, depth, score_cap)
    narrowed = filters.narrowed(plan.window.since, plan.window.until)
    first = _answers(db, plan, narrowed, depth, score_cap) if narrowed else []
    seen = {item.id for item in first}
    if plan.said is not None:
        said = (None, plan.said) if plan.natural else (plan.said, None)
        saying = replace(plan, strict=said[0], loose=said[1])
        for item in _answers(db, saying, filters, depth, score_cap):
            if item.id not in seen:
                first.append(replace(item, says_date=True))
                seen.add(item.id)
    rest = [c for c in _answers(db, plan, filters, depth, score_cap) if c.id not in seen]
    return _monotonic(first + rest)[:depth]


def _answers(
    db: Queryable, plan: QueryPlan, filters: SearchFilters, depth: int, score_cap: int
) -> list[Candidate]:
    """The candidates that answer: each with the share of the query it holds, those holding
    too little left out, and for a question the person's replies to the first of them."""
    found = _candidates(db, plan, filters, depth, score_cap)
    held = coverage(db, plan.highlight, [item.id for item in found])
    # A loose hit holding too little of the question is not an answer to it ("penguins on the
    # moon base" finds "base"): below the floor it is left out, and nonsense finds nothing. One
    # holding a phrase the person quoted has what was asked for exactly, and stays.
    kept = [
        replace(item, held=held.get(item.id, 0.0))
        for item in found
        if item.strict or plan.required or held.get(item.id, 0.0) >= LOOSE_FLOOR
    ]
    if not plan.natural:
        return kept
    # A reply holding too little of the question on its own words is found again here.
    replies = _replies(db, kept, filters, {item.id for item in kept})
    return _monotonic(sorted(kept + replies, key=lambda item: -item.score))[:depth]


def _candidates(
    db: Queryable, plan: QueryPlan, filters: SearchFilters, depth: int, score_cap: int
) -> list[Candidate]:
    found: list[Candidate] = []
    # A question is answered by its content words alone: putting the messages that hold every
    # content word first ranks worse on the question set (docs/search-quality.md) and costs a
    # second ranked query.
    if plan.strict is not None and (not plan.natural or plan.loose is None):
        strict = expand_prefixes(db, plan.strict)
        rows, _ = ranked(db, plan.query, strict, filters, depth, 0, score_cap)
        found = [Candidate(rowid, score_from_rank(rank), strict) for rowid, rank in rows]
    if plan.loose is not None and (plan.natural or len(found) < FEW):
        loose = expand_prefixes(db, plan.loose)
        seen = {item.id for item in found}
        cap = score_cap  # the newest matches, as the strict side
        said = replace(filters, conversational=True) if LOOSE_CONVERSATIONAL else filters
        rows, _ = ranked(db, plan.query, loose, said, depth, 0, cap)
        found += [
            Candidate(id, score_from_rank(rank), loose, strict=False)
            for id, rank in rows
            if id not in seen
        ]
    return _monotonic(found)[:depth]


# The person's next text turn after an assistant text turn, in the same file and thread; ``e``
# is the reply (so the filters' SQL applies to it) and ``a`` the turn it replies to. A slash
# command they ran next is not a reply (NOT_MARKUP).
_REPLIES = f"""
SELECT a.id, e.id, length(e.text) <= {{short}}, substr(e.text, 1, {{short}})
FROM entries a
JOIN entries e ON e.id = (
    SELECT n.id FROM entries n
    WHERE n.file_id = a.file_id AND n.kind = 'text' AND n.conversational = 1
      AND n.role IN ('user', 'assistant') AND n.sidechain = a.sidechain
      AND (n.line > a.line OR (n.line = a.line AND n.id > a.id))
    ORDER BY n.line, n.id LIMIT 1)
JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id
WHERE a.id IN ({{ids}}) AND a.role = 'assistant' AND a.kind = 'text' AND e.role = 'user'
  AND {NOT_MARKUP}{{where}}
"""


def _replies(
    db: Queryable, hits: list[Candidate], filters: SearchFilters, seen: set[int]
) -> list[Candidate]:
    """The person's reply to each of a question's first :data:`REPLIES_OF` assistant hits, at
    :data:`REPLY_SHARE` of its score: what was decided is often the answer to a proposal ("ok,
    let's do vite"), holding none of the question's words that the proposal holds."""
    first = {item.id: item for item in hits[:REPLIES_OF]}
    if not first:
        return []
    clauses, params = filters.where()
    sql = _REPLIES.format(
        ids=", ".join("?" * len(first)),
        where="".join(f" AND {c}" for c in clauses),
        short=ACK_CHARS,
    )
    replies: list[Candidate] = []
    for hit_id, reply_id, short, head in db.execute(sql, [*first, *params]):
        if short and is_acknowledgement(head):
            continue  # "ok" settles nothing in its own words: the proposal it accepts is the hit
        if reply_id not in seen:
            seen.add(reply_id)
            hit = first[hit_id]
            replies.append(
                Candidate(
                    reply_id, REPLY_SHARE * hit.score, hit.match, strict=False,
                    held=REPLY_SHARE * hit.held,
                )
            )  # fmt: skip
    return replies


def _monotonic(found: list[Candidate]) -> list[Candidate]:
    """Scores capped by the one before, so the list's order is its scores' order (fusion
    normalises scores: a loose hit must not outscore the strict hits above it)."""
    out: list[Candidate] = []
    for item in found:
        if out and item.score > out[-1].score:
            item = replace(item, score=out[-1].score)
        out.append(item)
    return out


def _joins(where: str) -> str:
    """Only the tables the filters read: each join runs once per ranked match."""
    joins = [_JOIN_ENTRIES]
    if "f." in where:
        joins.append(_JOIN_FILES)
    if "s." in where:
        joins.append(_JOIN_SESSIONS)
    return "\n".join(joins)


def ranked(
    db: Queryable,
    query: str,
    match: str,
    filters: SearchFilters,
    limit: int,
    offset: int,
    score_cap: int,
) -> tuple[list[tuple[int, float]], bool]:
    """The best ``(rowid, rank)`` pairs for ``match`` with ``filters``, and whether they came
    newest first (short prefixes) instead of by rank. Ties go to the newest, so a longer
    ``limit`` never reorders the first rows."""
    clauses, params = filters.where()
    recency = bool(_SHORT_PREFIX.match(query))
    if recency:
        # Newest first lets FTS5 walk its doclist backwards and stop after ``limit`` rows.
        matches = "entries_fts"
        order = "m.rowid DESC"
        clauses.insert(0, "entries_fts MATCH :q")
    else:
        matches = (
            "(SELECT rowid, rank FROM (SELECT rowid, rank FROM entries_fts"
            " WHERE entries_fts MATCH :q ORDER BY rowid DESC LIMIT :cap))"
        )
        order = "m.rank, m.rowid DESC"
    where = " AND ".join(clauses)
    for index in range(len(params)):
        where = where.replace("?", f":p{index}", 1)
    sql = _RANKED.format(
        rank="0" if recency else "m.rank",
        matches=matches,
        joins=_joins(where) if len(clauses) > recency else "",
        where=f"WHERE {where}" if where else "",
        order=order,
    )
    named: dict[str, Any] = {"q": match, "limit": limit, "offset": offset, "cap": score_cap}
    named.update({f"p{index}": value for index, value in enumerate(params)})
    return db.execute(sql, named).fetchall(), recency
