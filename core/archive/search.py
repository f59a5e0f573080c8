"""Full-text search over the index: FTS5 ranks, filters and limits; Python only formats.

Every hit points at its exact place (file key and 1-based line), so a viewer can jump to it.
Matches are never pulled into Python to be sorted or cut: SQLite does ``ORDER BY rank LIMIT``.
On very large archives two query plans keep typing responsive (see ``README.md``, "Search on
big archives"): short prefixes (1-3 letters) are answered newest-first, which FTS5 can stop early
on, and other queries rank at most ``score_cap`` of the newest matches.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import sqlite_utils
from clawback.core.archive.query import build_match, score_from_rank, terms
from clawback.core.errors import UsageError
from clawback.core.records import KIND_FILTERS
from clawback.core.timeutil import normalize_ts

MARK_START, MARK_END = "\x02", "\x03"  # snippet() markers; rendered by each client
SNIPPET_TOKENS = 16
DEFAULT_SCORE_CAP = 3_000
COUNT_CAP = 1000
_SHORT_PREFIX = re.compile(r"^\s*\S{1,3}\*\s*$")
# A quoted prefix term that is not behind a column filter (CJK prefixes query the bigrams).
_PREFIX_TERM = re.compile(r'(?<!: )"([^"]+)"\*')
MAX_PREFIX_EXPANSION = 32


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
        for bound, op in ((self.since, ">="), (self.until, "<")):
            if bound:
                ts = normalize_ts(bound)
                if ts is None:
                    raise UsageError(f"not a date: {bound!r} (use YYYY-MM-DD)")
                clauses.append(f"e.ts {op} ?")
                params.append(ts)
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


_RANKED = """
SELECT m.rowid, {rank} FROM {matches} AS m
{joins}
{where}
ORDER BY {order}
LIMIT :limit OFFSET :offset
"""

_DETAILS = f"""
SELECT e.id, e.session_id, coalesce(s.label, s.title, s.first_prompt), s.key, f.source, e.role,
       e.kind, e.ts, snippet(entries_fts, 0, char(2), char(3), '…', {SNIPPET_TOKENS}),
       f.file_key, f.path, e.line, e.sidechain, e.text
FROM entries_fts
JOIN entries e ON e.id = entries_fts.rowid
JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id
WHERE entries_fts MATCH :q AND entries_fts.rowid = :id
"""

_JOINS = """JOIN entries e ON e.id = m.rowid
JOIN files f ON f.id = e.file_id
LEFT JOIN sessions s ON s.id = e.session_id"""


def search(
    db: sqlite_utils.Database,
    query: str,
    filters: SearchFilters | None = None,
    *,
    limit: int = 20,
    offset: int = 0,
    score_cap: int = DEFAULT_SCORE_CAP,
    count: bool = False,
) -> SearchResults:
    """Ranked hits for a query typed by a person. Never raises on odd input.

    Two steps: SQLite picks the ``limit`` best row ids (filters applied, nothing else
    computed), then snippets are built for those rows only.
    """
    started = time.perf_counter()
    results = SearchResults(query=query)
    match = build_match(query)
    if match is None or limit <= 0:
        results.seconds = time.perf_counter() - started
        return results
    clauses, params = (filters or SearchFilters()).where()
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
    match = _expand_prefixes(db, match)
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
    ranked = db.execute(sql, named).fetchall()
    highlight = terms(query)
    for rowid, rank in ranked:
        row = db.execute(_DETAILS, {"q": match, "id": rowid}).fetchone()
        if row is not None:
            results.hits.append(_hit(row, rank, highlight, recency))
    if count:
        total = db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? LIMIT ?)",
            (match, COUNT_CAP + 1),
        ).fetchone()[0]
        results.total = min(total, COUNT_CAP)
        results.total_capped = total > COUNT_CAP
    results.seconds = time.perf_counter() - started
    return results


def _expand_prefixes(db: sqlite_utils.Database, match: str) -> str:
    """Rewrite ``"sear"*`` as ``("search" OR "searched")`` when few indexed terms start so.

    FTS5 answers a prefix by merging the doclists of every matching term into memory before
    the first row comes out; an OR of the same terms is read lazily, newest first, so it stops
    at the score cap like any word. The term list comes from the index's own vocabulary
    (``temp.entries_vocab``, made by ``db.connect``: a B-tree range, no doclists read). Many
    terms, or none: the prefix stays as it was.
    """
    if '"*' not in match:
        return match

    def expand(found: re.Match[str]) -> str:
        prefix = found.group(1).lower()
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        terms = [
            row[0]
            for row in db.execute(
                "SELECT term FROM temp.entries_vocab WHERE term >= ? AND term < ? LIMIT ?",
                (prefix, upper, MAX_PREFIX_EXPANSION + 1),
            )
        ]
        if not terms or len(terms) > MAX_PREFIX_EXPANSION:
            return found.group(0)
        return "(" + " OR ".join('"' + term.replace('"', '""') + '"' for term in terms) + ")"

    return _PREFIX_TERM.sub(expand, match)


def _hit(row: tuple[Any, ...], rank: float, highlight: list[str], recency: bool) -> SearchHit:
    (entry_id, session_id, title, key, source, role, kind, ts, snip, file_key, path, line,
     sidechain, text) = row  # fmt: skip
    if MARK_START not in snip:
        # CJK matches hit the bigram column, so snippet() of the text column marks nothing.
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
