"""Full-text search over the index: FTS5 ranks, filters and limits; Python only formats.

Every hit points at its exact place (file key and 1-based line), so a viewer can jump to it.
Matches are never pulled into Python to be sorted or cut: SQLite does ``ORDER BY rank LIMIT``.
On very large archives two query plans keep typing responsive (docs/benchmarks.md, "Prefixes
and big archives"): short prefixes (1-3 letters) are answered newest-first, which FTS5 can stop
early on, and other queries rank at most ``score_cap`` of the newest matches.

Semantic and hybrid modes add a vector side (``NearestChunks``, built by
``embeddings.semantic``): each side brings its best :data:`CANDIDATES`, ``search.fusion``
merges them, and every hit says which side found it. This module never imports numpy, so
keyword search costs the same whether or not embeddings are installed.
"""

from __future__ import annotations

import _thread
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

from clawback.core.archive import project_name
from clawback.core.db import Queryable
from clawback.core.errors import ClawbackError, UsageError
from clawback.core.search.candidates import FEW, Candidate, keyword_candidates, ranked
from clawback.core.search.dates import DateWindow
from clawback.core.search.filters import SearchFilters
from clawback.core.search.plan import QueryPlan, plan_query
from clawback.core.search.prefixes import expand_prefixes
from clawback.core.search.query import score_from_rank
from clawback.core.search.strength import STRONG, WEAK, strength

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

MARK_START, MARK_END = "\x02", "\x03"  # snippet() markers; rendered by each client
SNIPPET_TOKENS = 16
# snippet() costs the square of a matching text's size (32,000 characters full of matches:
# 20 ms; 1 MB: 12 s): a longer text is windowed and marked in Python (``highlight_window``).
SNIPPET_MAX_CHARS = 32_000
DEFAULT_SCORE_CAP = 3_000
COUNT_CAP = 1000
MODES = ("keyword", "semantic", "hybrid")
CANDIDATES = 100  # each side of a hybrid search brings this many to the fusion
NEAREST_POOL = 200  # nearest chunks read before filters and stale vectors thin them out


RELATED = "related"  # a hit's found_by when meaning alone found it, below hybrid.ANSWER_FLOOR


@dataclass
class SearchHit:
    entry_id: int
    session_id: str | None
    session_title: str | None
    session_key: str | None
    source: str
    role: str
    kind: str
    timestamp: str | None
    snippet: str  # matches wrapped in MARK_START / MARK_END
    # 0..1, in the list's order; when the words found nothing, its similarity in meaning
    # (never above the hit before it: fusion.similarity_shown)
    score: float
    file: str  # file key, relative to its source root
    path: str
    line: int
    sidechain: bool
    # keyword | semantic | both | date (a question naming only a time) | related (by meaning
    # alone, below the similarity an answer needs: see hybrid.ANSWER_FLOOR)
    found_by: str = "keyword"
    project: str | None = None  # the session's working folder's name, what --project matches
    # The share of the query's words it holds, rarity-weighted (search.coverage): for a hit
    # found by words; a reply found through the turn it replies to holds half of that turn's.
    # None when nothing was measured (found by meaning alone, by date, or a few keywords that
    # every hit holds).
    held: float | None = None
    # strong | fair | weak: the evidence itself, which the score is not (search.strength)
    strength: str = WEAK

    @property
    def related(self) -> bool:
        """Found by meaning alone and not sure enough to be an answer: shown, never recalled."""
        return self.found_by == RELATED

    def to_json(self, mark: tuple[str, str] = ("<mark>", "</mark>")) -> dict[str, Any]:
        data = asdict(self)
        data["snippet"] = self.snippet.replace(MARK_START, mark[0]).replace(MARK_END, mark[1])
        data["score"] = round(self.score, 4)
        return data


@dataclass
class SearchResults:
    query: str
    hits: list[SearchHit] = field(default_factory=list)
    total: int = 0  # matches before filters, capped at COUNT_CAP
    total_capped: bool = False
    seconds: float = 0.0
    mode: str = "keyword"  # the mode that ran (hybrid falls back to keyword, see ``note``)
    note: str | None = None  # one line for the person when the asked-for mode could not run
    window: DateWindow | None = None  # the time a question naming only a time asked about
    read_as: DateWindow | None = None  # the time the query names: hits from then come first

    @property
    def related_only(self) -> bool:
        """Hits, and none of them an answer: every one only related in meaning."""
        return bool(self.hits) and all(hit.related for hit in self.hits)


class NearestChunks(Protocol):
    """What hybrid search needs from the vector side (``embeddings.semantic.SemanticIndex``)."""

    def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
        """``(chunk, text hash, similarity)`` best first; raises ``ClawbackError`` to decline.

        Hybrid search calls it on a thread of its own (one, shared by every search), while the
        keyword side runs: it must not use the caller's database connection."""
        ...


_DETAILS = f"""
SELECT e.id, e.session_id, coalesce(s.label, s.title, s.first_prompt), s.key, f.source, e.role,
       e.kind, e.ts,
       CASE WHEN length(e.text) <= {SNIPPET_MAX_CHARS}
            THEN snippet(entries_fts, 0, char(2), char(3), '…', {SNIPPET_TOKENS}) ELSE '' END,
       f.file_key, f.path, e.line, e.sidechain, e.text, s.cwd
FROM entries_fts
JOIN entries e ON e.id = entries_fts.rowid
JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id
WHERE entries_fts MATCH :q AND entries_fts.rowid = :id
"""

_PLAIN_DETAILS = """
SELECT e.id, e.session_id, coalesce(s.label, s.title, s.first_prompt), s.key, f.source, e.role,
       e.kind, e.ts, '', f.file_key, f.path, e.line, e.sidechain, e.text, s.cwd
FROM entries e
JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id
WHERE e.id = :id
"""


def search(
    db: Queryable,
    query: str,
    filters: SearchFilters | None = None,
    *,
    limit: int = 20,
    offset: int = 0,
    score_cap: int = DEFAULT_SCORE_CAP,
    count: bool = False,
    mode: str = "keyword",
    nearest: NearestChunks | None = None,
    recency: bool = False,
    today: date | None = None,
    meaning: str | None = None,
    snippets: bool = True,
) -> SearchResults:
    """Ranked hits for a query typed by a person. Never raises on odd input.

    ``mode`` is ``keyword`` (FTS5 only), ``semantic`` (vectors only) or ``hybrid`` (both,
    fused); the vector modes need ``nearest`` and fall back to keywords without it. The query
    is read by :func:`~.plan.plan_query`: a question is also searched by its content words, a
    date in it ("last week") favours hits from then (relative to ``today``), and a prefix or an
    exclusion keeps a hybrid query on keywords alone. ``recency`` gently favours recent hits in
    the vector modes; ``meaning`` replaces what the vector side reads. The hits are the first
    ``limit`` (after ``offset``) of one ranked list that does not depend on ``limit``.
    ``snippets=False``: no matches marked in a hit's snippet, for a caller that reads the hits'
    own text (recall): marking them re-runs the match for each hit, most of a recall's reads.
    """
    started = time.perf_counter()
    if mode not in MODES:
        raise UsageError(f"unknown search mode {mode!r} (use {', '.join(MODES)})")
    filters = filters or SearchFilters()
    plan = plan_query(query, today=today)
    if meaning is not None:
        plan = replace(plan, meaning=meaning)  # what the vector side reads, when not the query
    vectors = nearest is not None and (
        mode == "semantic" or (mode == "hybrid" and not plan.exact_only)
    )
    if plan.when_only and plan.window is not None:
        results = _asked_then(db, plan.query, plan.window, filters, limit, offset, count)
    elif not vectors or nearest is None:
        results = _keyword_search(db, plan, filters, limit, offset, score_cap, count, snippets)
    else:
        try:
            results = _vector_search(
                db, plan, filters, mode, nearest, limit, offset, recency, snippets
            )
        except ClawbackError as exc:
            results = _keyword_search(db, plan, filters, limit, offset, score_cap, count, snippets)
            results.note = f"{exc}; showing keyword results"
        else:
            if count and mode == "hybrid":
                results.total, results.total_capped = _count(db, plan.loose or plan.strict)
            # What the vectors add is not counted by FTS5: the total is at least what is shown.
            results.total = max(results.total, len(results.hits))
    results.read_as = plan.window
    results.seconds = time.perf_counter() - started
    return results


def _keyword_search(
    db: Queryable,
    plan: QueryPlan,
    filters: SearchFilters,
    limit: int,
    offset: int,
    score_cap: int,
    count: bool,
    snippets: bool = True,
) -> SearchResults:
    """A few keywords: SQLite picks the ``limit`` best row ids of the strict expression (filters
    applied, nothing else computed), then snippets are built for those rows only. A question,
    a date, or strict matches too few for the page: the candidate list of :mod:`.candidates`."""
    results = SearchResults(query=plan.query)
    if limit <= 0 or (plan.strict is None and plan.loose is None):
        return results
    highlight = list(plan.highlight)
    if not plan.natural and plan.window is None and plan.strict is not None:
        strict = expand_prefixes(db, plan.strict)
        rows, newest_first = ranked(db, plan.query, strict, filters, limit, offset, score_cap)
        if len(rows) == limit or plan.loose is None or (rows and offset + len(rows) >= FEW):
            for rowid, rank in rows:
                score = 1.0 if newest_first else score_from_rank(rank)
                row = _details(db, rowid, strict if snippets else None)
                if row is not None:
                    results.hits.append(_hit(row, score, highlight, STRONG))  # every word
            if count:
                results.total, results.total_capped = _count(db, strict)
            return results
    found = keyword_candidates(db, plan, filters, max(CANDIDATES, offset + limit), score_cap)
    for item in found[offset : offset + limit]:
        row = _details(db, item.id, item.match if snippets else None)
        if row is not None:
            evidence = strength(1.0 if item.strict else item.held)  # strict: every word typed
            hit = _hit(row, item.score, highlight, evidence)
            results.hits.append(replace(hit, held=item.held))
    if count:
        loose = plan.loose if plan.natural or len(found) > 0 else plan.strict
        results.total, results.total_capped = _count(db, loose and expand_prefixes(db, loose))
    return results


def _asked_then(
    db: Queryable,
    query: str,
    window: DateWindow,
    filters: SearchFilters,
    limit: int,
    offset: int,
    count: bool,
) -> SearchResults:
    """A time and nothing to look for ("what did we do last week?"): what the person asked
    then, a hit per session, newest first (:mod:`.when`), in every mode: the vector side has
    nothing to read in such a question but "what happened"."""
    from clawback.core.search.when import asked_in

    results = SearchResults(query=query, window=window)
    found = asked_in(db, window, filters)
    for entry in found[offset : offset + limit]:
        row = db.execute(_PLAIN_DETAILS, {"id": entry}).fetchone()
        if row is not None:
            hit = _hit(row, 1.0, [], STRONG)  # from the time asked, which is all it asks
            results.hits.append(replace(hit, found_by="date"))
    if count:
        results.total = min(len(found), COUNT_CAP)
        results.total_capped = len(found) > COUNT_CAP
    return results


def _details(db: Queryable, entry_id: int, match: str | None) -> tuple[Any, ...] | None:
    """A hit's row for :func:`_hit`: with its matches marked when ``match`` finds it, plain
    otherwise (found by meaning, or a reply found through the turn it replies to)."""
    row = None
    if match is not None:
        row = db.execute(_DETAILS, {"q": match, "id": entry_id}).fetchone()
    if row is None:
        row = db.execute(_PLAIN_DETAILS, {"id": entry_id}).fetchone()
    return row


def _count(db: Queryable, match: str | None) -> tuple[int, bool]:
    if match is None:
        return 0, False
    total = db.execute(
        "SELECT count(*) FROM (SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? LIMIT ?)",
        (match, COUNT_CAP + 1),
    ).fetchone()[0]
    return min(total, COUNT_CAP), total > COUNT_CAP


def _vector_search(
    db: Queryable,
    plan: QueryPlan,
    filters: SearchFilters,
    mode: str,
    nearest: NearestChunks,
    limit: int,
    offset: int,
    recency: bool,
    snippets: bool = True,
) -> SearchResults:
    """Semantic or hybrid: each side's top :data:`CANDIDATES`, fused (see ``fusion``)."""
    # Imported here, not at the top: keyword searches (the command line's fast path) never
    # need them, and they cost a few milliseconds of start-up (hashlib, dataclasses).
    from clawback.core.search.acknowledgements import instead_of_acknowledgements
    from clawback.core.search.fusion import first_page, fuse, similarity_shown
    from clawback.core.search.hybrid import (
        ANSWER_FLOOR,
        above_floor,
        admit,
        boost_recent,
        by_window,
        ceiling,
        discount_narration,
        favour_person,
        favour_sessions,
        once_each,
        timestamps,
    )

    results = SearchResults(query=plan.query, mode=mode)
    if not plan.query.strip() or limit <= 0:
        return results
    keyword: list[Candidate] = []
    if mode == "hybrid" and (plan.strict or plan.loose):
        # The two sides overlap: the query's embedding and the vector product run on the
        # vector thread (both release the GIL) while SQLite ranks the keyword side here.
        pending = _vector_thread().submit(nearest.nearest, plan.meaning, NEAREST_POOL)
        try:
            keyword = keyword_candidates(db, plan, filters, CANDIDATES, DEFAULT_SCORE_CAP)
        finally:
            neighbours = pending.result()
    else:
        neighbours = nearest.nearest(plan.meaning, NEAREST_POOL)
    vector = admit(db, above_floor(neighbours), *filters.where())[:CANDIDATES]
    # Nothing found by words, and meaning not sure either: what meaning brings is only related.
    related = not keyword and (not vector or vector[0][1] < ANSWER_FLOOR)
    ranked_keyword = [(item.id, item.score) for item in keyword]
    fused = fuse(ranked_keyword, vector, {item.id: item.held for item in keyword})
    fused = once_each(db, fused)
    fused = instead_of_acknowledgements(db, fused, *filters.where())
    if mode == "hybrid":
        if plan.natural:
            fused = discount_narration(db, fused)
        fused = favour_sessions(db, fused)
        if plan.asks_decision:
            fused = favour_person(db, fused)
    if recency or plan.window is not None:
        stamps = timestamps(db, fused)
        if recency:
            fused = boost_recent(fused, stamps)
        if plan.window is not None:
            says_date = {item.id for item in keyword if item.says_date}
            fused = by_window(fused, stamps, plan.window, says_date)
    strict = [pair for pair, item in zip(ranked_keyword, keyword, strict=True) if item.strict]
    ordered = first_page(fused, strict, ranked_keyword)[: offset + limit]
    # Found by meaning alone (the words found nothing): each hit shows its similarity.
    similar = {} if keyword else similarity_shown(ordered)
    matches = {item.id: item.match for item in keyword if snippets}
    every_word = {item.id for item in keyword if item.strict}
    held = {item.id: item.held for item in keyword}
    highlight = list(plan.highlight)
    for item in ordered[offset:]:
        row = _details(db, item.id, matches.get(item.id))
        if row is not None:
            score = min(1.0, item.score / (ceiling(plan) if mode == "hybrid" else 1.0))
            share = 1.0 if item.id in every_word else held.get(item.id)
            evidence = strength(share, item.vector, answer_floor=ANSWER_FLOOR)
            marked = highlight if item.id in matches else []
            hit = _hit(row, similar.get(item.id, score), marked, evidence)
            found_by = RELATED if related else item.found_by
            results.hits.append(replace(hit, found_by=found_by, held=held.get(item.id)))
    return results


_VECTOR_THREAD: ThreadPoolExecutor | None = None
_VECTOR_THREAD_LOCK = _thread.allocate_lock()  # not ``threading``: keyword search skips it


def _vector_thread() -> ThreadPoolExecutor:
    """The one thread that asks the vector side for neighbours during hybrid searches.

    One thread, so a ``NearestChunks`` (which need not be thread-safe) still answers one query
    at a time however many threads search; it never touches the index database.
    """
    global _VECTOR_THREAD
    with _VECTOR_THREAD_LOCK:
        if _VECTOR_THREAD is None:
            from concurrent.futures import ThreadPoolExecutor

            _VECTOR_THREAD = ThreadPoolExecutor(1, thread_name_prefix="clawback-vectors")
        return _VECTOR_THREAD


def _hit(row: tuple[Any, ...], score: float, highlight: list[str], tier: str) -> SearchHit:
    (entry_id, session_id, title, key, source, role, kind, ts, snip, file_key, path, line,
     sidechain, text, cwd) = row  # fmt: skip
    if MARK_START not in snip:
        # CJK matches hit the bigram column, so snippet() of the text column marks nothing;
        # a huge text gets no snippet() at all (SNIPPET_MAX_CHARS).
        snip = highlight_window(text, highlight)
    return SearchHit(
        entry_id=entry_id,
        session_id=session_id,
        session_title=title,
        session_key=key,
        source=source,
        role=role,
        kind=kind,
        timestamp=ts,
        snippet=snip,
        score=score,
        strength=tier,
        file=file_key,
        path=path,
        line=line,
        sidechain=bool(sidechain),
        project=project_name(cwd) if cwd else None,
    )


def highlight_window(text: str, words: list[str], width: int = 160) -> str:
    """A window of ``text`` around the first of ``words``, with every occurrence marked."""
    lowered = text.lower()
    positions = [lowered.find(w.lower()) for w in words if w]
    found = [p for p in positions if p >= 0]
    start = max(0, min(found) - width // 3) if found else 0
    window = text[start : start + width]
    for word in sorted({w for w in words if w}, key=len, reverse=True):
        window = re.sub(
            re.escape(word), lambda m: f"{MARK_START}{m.group(0)}{MARK_END}", window, flags=re.I
        )
    prefix = "…" if start else ""
    suffix = "…" if start + width < len(text) else ""
    return prefix + window.replace("\n", " ") + suffix
