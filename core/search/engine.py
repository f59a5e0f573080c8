"""Full-text search over the index: FTS5 ranks, filters and limits; Python only formats.

Every hit points at its exact place (file key and 1-based line), so a viewer can jump to it.
Matches are never pulled into Python to be sorted or cut: SQLite does ``ORDER BY rank LIMIT``.
On very large archives two query plans keep typing responsive (see ``README.md``, "Search on
big archives"): short prefixes (1-3 letters) are answered newest-first, which FTS5 can stop early
on, and other queries rank at most ``score_cap`` of the newest matches.

Semantic and hybrid modes add a vector side (``NearestChunks``, built by
``embeddings.semantic``): each side brings its best :data:`CANDIDATES`, ``embeddings.fusion``
merges them, and every hit says which side found it. This module never imports numpy, so
keyword search costs the same whether or not embeddings are installed.
"""

from __future__ import annotations

import _thread
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from clawback.core.db import Queryable
from clawback.core.errors import ClawbackError, UsageError
from clawback.core.records import KIND_FILTERS
from clawback.core.search.prefixes import expand_prefixes
from clawback.core.search.query import build_match, score_from_rank, split_terms, terms
from clawback.core.timeutil import date_bounds

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

MARK_START, MARK_END = "\x02", "\x03"  # snippet() markers; rendered by each client
SNIPPET_TOKENS = 16
# snippet() costs the square of a matching text's size (32,000 characters full of matches:
# 20 ms; 1 MB: 12 s): a longer text is windowed and marked in Python (``highlight_window``).
SNIPPET_MAX_CHARS = 32_000
DEFAULT_SCORE_CAP = 3_000
COUNT_CAP = 1000
_SHORT_PREFIX = re.compile(r"^\s*\S{1,3}\*\s*$")
MODES = ("keyword", "semantic", "hybrid")
CANDIDATES = 100  # each side of a hybrid search brings this many to the fusion
NEAREST_POOL = 200  # nearest chunks read before filters and stale vectors thin them out


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
        return clauses, params


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
    score: float
    file: str  # file key, relative to its source root
    path: str
    line: int
    sidechain: bool
    found_by: str = "keyword"  # keyword | semantic | both

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


class NearestChunks(Protocol):
    """What hybrid search needs from the vector side (``embeddings.semantic.SemanticIndex``)."""

    def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
        """``(chunk, text hash, similarity)`` best first; raises ``ClawbackError`` to decline.

        Hybrid search calls it on a thread of its own (one, shared by every search), while the
        keyword side runs: it must not use the caller's database connection."""
        ...


_RANKED = """
SELECT m.rowid, {rank} FROM {matches} AS m
{joins}
{where}
ORDER BY {order}
LIMIT :limit OFFSET :offset
"""

_DETAILS = f"""
SELECT e.id, e.session_id, coalesce(s.label, s.title, s.first_prompt), s.key, f.source, e.role,
       e.kind, e.ts,
       CASE WHEN length(e.text) <= {SNIPPET_MAX_CHARS}
            THEN snippet(entries_fts, 0, char(2), char(3), '…', {SNIPPET_TOKENS}) ELSE '' END,
       f.file_key, f.path, e.line, e.sidechain, e.text
FROM entries_fts
JOIN entries e ON e.id = entries_fts.rowid
JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id
WHERE entries_fts MATCH :q AND entries_fts.rowid = :id
"""

_PLAIN_DETAILS = """
SELECT e.id, e.session_id, coalesce(s.label, s.title, s.first_prompt), s.key, f.source, e.role,
       e.kind, e.ts, '', f.file_key, f.path, e.line, e.sidechain, e.text
FROM entries e
JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id
WHERE e.id = :id
"""

_JOINS = """JOIN entries e ON e.id = m.rowid
JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id"""


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
) -> SearchResults:
    """Ranked hits for a query typed by a person. Never raises on odd input.

    ``mode`` is ``keyword`` (FTS5 only), ``semantic`` (vectors only) or ``hybrid`` (both,
    fused); the vector modes need ``nearest`` and fall back to keywords without it. Quoted
    phrases, prefixes and exclusions ask for exactly those words, so a hybrid query holding one
    runs on keywords alone. ``recency`` gently favours recent hits in the vector modes.
    """
    started = time.perf_counter()
    if mode not in MODES:
        raise UsageError(f"unknown search mode {mode!r} (use {', '.join(MODES)})")
    filters = filters or SearchFilters()
    vectors = nearest is not None and (
        mode == "semantic" or (mode == "hybrid" and not _exact_only(query))
    )
    if not vectors or nearest is None:
        results = _keyword_search(db, query, filters, limit, offset, score_cap, count)
    else:
        try:
            results = _vector_search(db, query, filters, mode, nearest, limit, offset, recency)
        except ClawbackError as exc:
            results = _keyword_search(db, query, filters, limit, offset, score_cap, count)
            results.note = f"{exc}; showing keyword results"
        else:
            if count and mode == "hybrid":
                results.total, results.total_capped = _count(db, build_match(query))
            # What the vectors add is not counted by FTS5: the total is at least what is shown.
            results.total = max(results.total, len(results.hits))
    results.seconds = time.perf_counter() - started
    return results


def _exact_only(query: str) -> bool:
    """Whether the query asks for exact words: a quoted phrase, a prefix or an exclusion."""
    return any(term.phrase or term.prefix or term.exclude for term in split_terms(query))


def _keyword_search(
    db: Queryable,
    query: str,
    filters: SearchFilters,
    limit: int,
    offset: int,
    score_cap: int,
    count: bool,
) -> SearchResults:
    """Two steps: SQLite picks the ``limit`` best row ids (filters applied, nothing else
    computed), then snippets are built for those rows only."""
    results = SearchResults(query=query)
    match = build_match(query)
    if match is None or limit <= 0:
        return results
    match = expand_prefixes(db, match)
    ranked, newest_first = _ranked(db, query, match, filters, limit, offset, score_cap)
    highlight = terms(query)
    for rowid, rank in ranked:
        row = db.execute(_DETAILS, {"q": match, "id": rowid}).fetchone()
        if row is not None:
            results.hits.append(_hit(row, rank, highlight, newest_first))
    if count:
        results.total, results.total_capped = _count(db, match)
    return results


def _count(db: Queryable, match: str | None) -> tuple[int, bool]:
    if match is None:
        return 0, False
    total = db.execute(
        "SELECT count(*) FROM (SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? LIMIT ?)",
        (match, COUNT_CAP + 1),
    ).fetchone()[0]
    return min(total, COUNT_CAP), total > COUNT_CAP


def _ranked(
    db: Queryable,
    query: str,
    match: str,
    filters: SearchFilters,
    limit: int,
    offset: int,
    score_cap: int,
) -> tuple[list[tuple[int, float]], bool]:
    """The best ``(rowid, rank)`` pairs for ``match`` with ``filters``, and whether they came
    newest first (short prefixes) instead of by rank."""
    clauses, params = filters.where()
    recency = bool(_SHORT_PREFIX.match(query))
    if recency:
        # Newest first lets FTS5 walk its doclist backwards and stop after ``limit`` rows.
        matches = "entries_fts"
        order = "m.rowid DESC"
        clauses.insert(0, "entries_fts MATCH :q")
    else:
        matches = (
            "SELECT rowid, rank FROM (SELECT rowid, rank FROM entries_fts"
            " WHERE entries_fts MATCH :q ORDER BY rowid DESC LIMIT :cap)"
        )
        order = "m.rank"
    where = " AND ".join(clauses)
    for index in range(len(params)):
        where = where.replace("?", f":p{index}", 1)
    sql = _RANKED.format(
        rank="0" if recency else "m.rank",
        matches=matches if recency else f"({matches})",
        joins=_JOINS if len(clauses) > recency else "",
        where=f"WHERE {where}" if where else "",
        order=order,
    )
    named: dict[str, Any] = {"q": match, "limit": limit, "offset": offset, "cap": score_cap}
    named.update({f"p{index}": value for index, value in enumerate(params)})
    return db.execute(sql, named).fetchall(), recency


def _vector_search(
    db: Queryable,
    query: str,
    filters: SearchFilters,
    mode: str,
    nearest: NearestChunks,
    limit: int,
    offset: int,
    recency: bool,
) -> SearchResults:
    """Semantic or hybrid: each side's top :data:`CANDIDATES`, fused (see ``fusion``)."""
    # Imported here, not at the top: keyword searches (the command line's fast path) never
    # need them, and they cost a few milliseconds of start-up (hashlib, dataclasses).
    from clawback.core.search.fusion import VECTOR_WEIGHT, fuse_weighted, keep_exact
    from clawback.core.search.hybrid import admit, boost_recent

    results = SearchResults(query=query, mode=mode)
    if not query.strip() or limit <= 0:
        return results
    match = build_match(query)
    keyword: list[tuple[int, float]] = []
    if mode == "hybrid" and match is not None:
        # The two sides overlap: the query's embedding and the vector product run on the
        # vector thread (both release the GIL) while SQLite ranks the keyword side here.
        pending = _vector_thread().submit(nearest.nearest, query, NEAREST_POOL)
        try:
            match = expand_prefixes(db, match)
            ranked, _ = _ranked(db, query, match, filters, CANDIDATES, 0, DEFAULT_SCORE_CAP)
        finally:
            neighbours = pending.result()
        keyword = [(rowid, score_from_rank(rank)) for rowid, rank in ranked]
    else:
        neighbours = nearest.nearest(query, NEAREST_POOL)
    vector = admit(db, neighbours, *filters.where())[:CANDIDATES]
    # With nothing from one side, the other's evidence is all there is: it gets full weight.
    weight = VECTOR_WEIGHT if keyword and vector else float(not keyword)
    fused = fuse_weighted(keyword, vector, vector_weight=weight)
    if recency:
        fused = boost_recent(db, fused)
    page = keep_exact(fused, keyword, offset + limit)[offset : offset + limit]
    highlight = terms(query)
    for item in page:
        row = None
        if item.keyword is not None and match is not None:
            row = db.execute(_DETAILS, {"q": match, "id": item.id}).fetchone()
        if row is None:
            row = db.execute(_PLAIN_DETAILS, {"id": item.id}).fetchone()
        if row is not None:
            hit = _hit(row, 0.0, highlight if item.keyword is not None else [], False)
            results.hits.append(replace(hit, score=item.score, found_by=item.found_by))
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


def _hit(row: tuple[Any, ...], rank: float, highlight: list[str], recency: bool) -> SearchHit:
    (entry_id, session_id, title, key, source, role, kind, ts, snip, file_key, path, line,
     sidechain, text) = row  # fmt: skip
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
        score=1.0 if recency else score_from_rank(rank),
        file=file_key,
        path=path,
        line=line,
        sidechain=bool(sidechain),
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
