"""The memory tools' logic, without the MCP SDK: what ``memory_search`` and ``memory_get`` answer.

:class:`MemoryTools` takes an open index and returns plain dicts (the JSON the tools return), so
it is tested directly; :mod:`.server` only wires it to the protocol. Input the model got wrong
raises :class:`ToolInputError` with one sentence the model can act on.

This module only reads: it never writes to the index or the workspace, and never opens a file
(refs are resolved through the index, see :mod:`.refs`).
"""

from __future__ import annotations

from typing import Any

from clawback.core.archive import entry_ref
from clawback.core.db import Queryable
from clawback.core.errors import ClawbackError
from clawback.core.mcp import answers
from clawback.core.mcp.reader import Reader
from clawback.core.mcp.refs import FactRef, ToolInputError
from clawback.core.records import KIND_FILTERS, Source
from clawback.core.search import (
    MODES,
    FactHit,
    NearestChunks,
    SearchFilters,
    SearchHit,
    build_match,
    find,
    says_nothing,
    terms,
    why_nothing,
)
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
        mode = _choice("mode", mode, MODES)
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
        filters = SearchFilters(
            source=source if source != FACT_SOURCE else None,
            session_id=session_id,
            kind=kind,
            since=since,
            until=until,
        )
        try:
            found = find(
                self.db, query, filters, limit=limit, mode=mode, nearest=self.nearest,
                facts=source in (None, FACT_SOURCE) and kind in ("all", "text"),
                archive=source != FACT_SOURCE,
            )  # fmt: skip
        except ClawbackError as exc:
            raise ToolInputError(" ".join(str(exc).split())) from None
        ranked = found.ranked(limit)
        hits, texts = self._answers(ranked)
        answer["results"] = hits
        answers.fit_snippets(answer, hits, texts, terms(query))
        if not hits:
            answer["note"] = (
                f"No matches: {why_nothing(found.results)}. Try other words, a prefix (word*),"
                " or no filters."
            )
        elif len(hits) == limit:
            answer["note"] = (
                "Snippets are cut: memory_get(ref) returns a whole message. More may match: "
                f"raise max_results (up to {MAX_RESULTS}) or narrow with since/until/source."
            )
        else:
            answer["note"] = "Snippets are cut: memory_get(ref) returns a whole message."
        fallback = found.results.note  # how it ran: a keyword fallback, only related hits
        if fallback and not says_nothing(fallback):
            answer["note"] = f"{fallback}. {answer['note']}"
        return answer

    def _answers(self, ranked: list[SearchHit | FactHit]) -> tuple[list[dict[str, Any]], list[str]]:
        """Each hit as the tool returns it, and the whole text its snippet is cut from."""
        ids = [item.entry_id for item in ranked if isinstance(item, SearchHit)]
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT id, text, end_line, display FROM entries WHERE id IN ({marks})", ids
        ).fetchall()
        details = {row[0]: row[1:] for row in rows}
        hits: list[dict[str, Any]] = []
        texts: list[str] = []
        for item in ranked:
            if isinstance(item, FactHit):
                hits.append(
                    {
                        "ref": str(FactRef(item.id)),
                        "session_id": item.session_id,
                        "session_title": answers.one_line(item.session_title),
                        "source": FACT_SOURCE,
                        "role": None,
                        "kind": item.kind,
                        "timestamp": item.timestamp,
                        "snippet": "",
                        "score": round(item.score, 4),
                        "found_by": "keyword",
                    }
                )
                texts.append(item.text)
                continue
            text, end_line, heading = details.get(item.entry_id, ("", None, None))
            title = item.session_title
            if item.source == Source.MEMORY:
                lines = (
                    f"{item.line}-{end_line}" if end_line and end_line != item.line else item.line
                )
                title = f"{item.file} lines {lines}" + (f": {heading}" if heading else "")
            hits.append(
                {
                    "ref": entry_ref(item.source, item.file, item.line),
                    "session_id": item.session_id,
                    "session_title": answers.one_line(title),
                    "source": item.source,
                    "role": item.role,
                    "kind": item.kind,
                    "timestamp": item.timestamp,
                    "snippet": "",
                    "score": round(item.score, 4),
                    "found_by": item.found_by,
                }
            )
            texts.append(text)
        return hits, texts

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
