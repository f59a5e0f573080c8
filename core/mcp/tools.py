"""The memory tools' logic, without the MCP SDK: what ``memory_search`` and ``memory_get`` answer.

:class:`MemoryTools` takes an open index and returns plain dicts (the JSON the tools return), so
it is tested directly; :mod:`.server` only wires it to the protocol. Input the model got wrong
raises :class:`ToolInputError` with one sentence the model can act on.

This module only reads: it never writes to the index or the workspace, and never opens a file
(refs are resolved through the index, see :mod:`.refs`).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from clawback.core.db import Queryable
from clawback.core.errors import ClawbackError
from clawback.core.mcp import answers
from clawback.core.mcp.reader import Reader
from clawback.core.mcp.refs import FactRef, ToolInputError, entry_ref
from clawback.core.records import KIND_FILTERS, Source
from clawback.core.search.engine import MODES, NearestChunks, SearchFilters, search
from clawback.core.search.query import build_match, score_from_rank, terms
from clawback.core.timeutil import date_bounds

__all__ = ["MemoryTools", "ToolInputError"]

DEFAULT_RESULTS = 8
MAX_RESULTS = 50
FACT_SOURCE = "fact"
SOURCES = (*(source.value for source in Source), FACT_SOURCE)
KINDS = tuple(KIND_FILTERS)
MAX_QUERY_CHARS = 2_000


class MemoryTools:
    """``memory_search`` and ``memory_get`` over one open index (read-only)."""

    def __init__(self, db: Queryable, nearest: NearestChunks | None = None) -> None:
        """``nearest`` is the vector side of hybrid search (``None``: keyword search only)."""
        self.db = db
        self.reader = Reader(db)
        self.nearest = nearest

    # -- memory_search ----------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        max_results: int = DEFAULT_RESULTS,
        source: str | None = None,
        session: str | None = None,
        since: str | None = None,
        until: str | None = None,
        kind: str | None = None,
        mode: str | None = None,
    ) -> dict[str, Any]:
        """Hits for ``query`` (the ``clawback search`` syntax), best first, as ``results``.

        ``mode``: keyword, semantic or hybrid (the default when the archive has embeddings).
        """
        query = (query or "").strip()
        if not query:
            raise ToolInputError("The query is empty: give one or more words to search for.")
        if len(query) > MAX_QUERY_CHARS:
            raise ToolInputError(
                f"The query is {len(query)} characters long: search for a few words (at most "
                f"{MAX_QUERY_CHARS} characters)."
            )
        limit = max(1, min(int(max_results), MAX_RESULTS))
        source = _choice("source", source, SOURCES)
        kind = _choice("kind", kind, KINDS) or "all"
        mode = _choice("mode", mode, MODES) or ("hybrid" if self.nearest else "keyword")
        try:
            date_bounds(since, until)
        except ValueError as exc:
            raise ToolInputError(f"{exc}.") from None
        session_id = self.reader.session_id(session) if session else None
        answer: dict[str, Any] = answers.as_retrieved({"results": []})
        if build_match(query) is None:
            answer["note"] = (
                "Nothing in this query can be searched for: give at least one word (a '-word' "
                "only excludes)."
            )
            return answer
        found: list[tuple[float, dict[str, Any], str]] = []
        fallback = None
        if source != FACT_SOURCE:
            filters = SearchFilters(
                source=source, session_id=session_id, kind=kind, since=since, until=until
            )
            archive, fallback = self._archive_hits(query, filters, limit, mode)
            found += archive
        if source in (None, FACT_SOURCE) and kind in ("all", "text"):
            cap = limit if source == FACT_SOURCE else max(1, limit // 4)
            found += self._fact_hits(query, cap, session_id, since, until)
        found.sort(key=lambda item: -item[0])
        found = found[:limit]
        hits = [hit for _score, hit, _text in found]
        answer["results"] = hits
        answers.fit_snippets(answer, hits, [text for _s, _h, text in found], terms(query))
        if not hits:
            answer["note"] = (
                "No matches. Try fewer or other words, a prefix (word*), or no filters."
            )
        elif len(hits) == limit:
            answer["note"] = (
                "Snippets are cut: memory_get(ref) returns a whole message. More may match: "
                f"raise max_results (up to {MAX_RESULTS}) or narrow with since/until/source."
            )
        else:
            answer["note"] = "Snippets are cut: memory_get(ref) returns a whole message."
        if fallback:
            answer["note"] = f"{fallback}. {answer['note']}"
        return answer

    def _archive_hits(
        self, query: str, filters: SearchFilters, limit: int, mode: str
    ) -> tuple[list[tuple[float, dict[str, Any], str]], str | None]:
        """Archive hits and, when the asked-for mode fell back to keywords, why."""
        try:
            results = search(self.db, query, filters, limit=limit, mode=mode, nearest=self.nearest)
        except ClawbackError as exc:
            raise ToolInputError(" ".join(str(exc).split())) from None
        if not results.hits:
            return [], results.note
        ids = [hit.entry_id for hit in results.hits]
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT id, text, end_line, display FROM entries WHERE id IN ({marks})", ids
        ).fetchall()
        details = {row[0]: row[1:] for row in rows}
        found = []
        for hit in results.hits:
            text, end_line, heading = details.get(hit.entry_id, ("", None, None))
            title = hit.session_title
            if hit.source == Source.MEMORY:
                lines = f"{hit.line}-{end_line}" if end_line and end_line != hit.line else hit.line
                title = f"{hit.file} lines {lines}" + (f": {heading}" if heading else "")
            found.append(
                (
                    hit.score,
                    {
                        "ref": entry_ref(hit.source, hit.file, hit.line),
                        "session_id": hit.session_id,
                        "session_title": answers.one_line(title),
                        "source": hit.source,
                        "role": hit.role,
                        "kind": hit.kind,
                        "timestamp": hit.timestamp,
                        "snippet": "",
                        "score": round(hit.score, 4),
                        "found_by": hit.found_by,
                    },
                    text,
                )
            )
        return found, results.note

    def _fact_hits(
        self,
        query: str,
        limit: int,
        session_id: str | None,
        since: str | None,
        until: str | None,
    ) -> list[tuple[float, dict[str, Any], str]]:
        match = build_match(query, cjk_column=None)
        if match is None:
            return []
        clauses = ["facts_fts MATCH ?", "f.superseded_by IS NULL"]
        params: list[Any] = [match]
        if session_id:
            clauses.append("f.session_id = ?")
            params.append(session_id)
        for bound, op in zip(date_bounds(since, until), (">=", "<"), strict=True):
            if bound:
                clauses.append(f"coalesce(f.source_ts, f.created_at) {op} ?")
                params.append(bound)
        try:
            rows = self.db.execute(
                f"""SELECT f.id, f.type, f.content, f.context, f.session_id,
                           coalesce(f.source_ts, f.created_at), bm25(facts_fts, 1.0, 0.4),
                           coalesce(s.label, s.title, s.first_prompt)
                    FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
                    LEFT JOIN sessions s ON s.id = f.session_id
                    WHERE {" AND ".join(clauses)} ORDER BY 7 LIMIT ?""",
                [*params, limit],
            ).fetchall()
        except sqlite3.OperationalError:
            return []  # an expression facts_fts cannot run (a CJK column filter) finds nothing
        found = []
        for fact_id, kind, content, context, fact_session, ts, rank, title in rows:
            score = score_from_rank(rank)
            text = content + (f" ({context})" if context else "")
            found.append(
                (
                    score,
                    {
                        "ref": str(FactRef(fact_id)),
                        "session_id": fact_session,
                        "session_title": answers.one_line(title),
                        "source": FACT_SOURCE,
                        "role": None,
                        "kind": kind,
                        "timestamp": ts,
                        "snippet": "",
                        "score": round(score, 4),
                        "found_by": "keyword",
                    },
                    text,
                )
            )
        return found

    # -- memory_get -------------------------------------------------------------------------

    def get(self, ref: str, *, context: int = 1) -> dict[str, Any]:
        """The message, memory chunk, fact or session outline ``ref`` names."""
        return answers.as_retrieved(self.reader.get(ref, context=max(0, min(int(context), 10))))


def _choice(name: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    if value is None or not value.strip():
        return None
    value = value.strip().lower()
    if value == "facts":
        value = FACT_SOURCE
    if value not in allowed:
        raise ToolInputError(f"{name}={value!r} is not one of: {', '.join(allowed)}.")
    return value
