"""The archive's hits and the facts near them for a turn's questions, through the one search
every client uses (``search.front``), with recall's own two rules on top: an answer ranks above
a turn that only restates its question, and the asker's project wins ties. Reads the index only."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from clawback.core.db import Queryable
from clawback.core.embeddings.chunks import fact_text, text_hash
from clawback.core.errors import ClawbackError
from clawback.core.recall.query import Asked
from clawback.core.recall.records import RecalledFact, RecallHit
from clawback.core.search import (
    ANSWER_FLOOR,
    NearestChunks,
    SearchFilters,
    above_floor,
    answers_to,
    find,
    restates,
)

CANDIDATES = 24
MEANING_CHARS = 1_000  # the tail of the recent user messages that the vector side reads
NEAREST = 100
#: a hit from the asker's own project (the session's working folder) counts this much more: a
#: tie-breaker, not a filter (larger factors cost the questions asked from another project their
#: first places: docs/search-quality.md, "Recall from a project")
PROJECT_FACTOR = 1.1
#: what a past turn that only restates the question keeps of its score, below its answer
RESTATED_SHARE = 0.8


def search_archive(
    db: Queryable,
    questions: Sequence[Asked],
    *,
    limit: int = CANDIDATES,
    nearest: NearestChunks | None = None,
    min_coverage: float = 0.0,
    filters: SearchFilters | None = None,
    project: str | None = None,
) -> tuple[list[RecallHit], list[RecalledFact]]:
    """The best ``limit`` hits for a turn's ``questions`` (:func:`asked`), through the one
    search every client uses (``search.front``), and the facts near them in meaning.

    Each question is asked on its own (their words pooled would make every answer hold too
    little of the pool to pass the search's floor), by its keywords and, with ``nearest``, by
    its meaning. Conversational text and memory only; the best score of a hit wins. Nothing
    above the floor: nothing at all. A vector side that cannot answer leaves the keyword hits:
    recall is a bonus, never a failure.

    ``min_coverage``: of those hits, the ones found by words alone must hold that share of one
    question's words, as search measured it (``SearchHit.held``: a reply found through the turn
    it replies to holds half of that turn's); a hit found otherwise (by meaning, or as what the
    person asked in the time a question names: "what did we do yesterday?" holds no word to
    measure) passes. A hit search calls only related (meaning alone, below its answer floor)
    never enters a prompt.

    ``filters`` narrow the search (always to conversational text); recall's name what the asker
    already holds (``exclude_session``, ``exclude_uuids``), so that SQLite leaves it out before
    the cut and it takes none of the ``limit`` (left out after the cut, a turn's own just-typed
    message cost its block a line its dry run showed).

    Two rules of a recall block, not of search: a past turn that only restates a question gives
    its place to the turn that answered it and stays below it
    (:mod:`~clawback.core.search.restatements`), and
    with ``project`` (the asker's working folder) a hit from a session there counts
    :data:`PROJECT_FACTOR` times its score, so at equal relevance the project's own come first
    and another project's still win when they are clearly better.
    """
    filters = replace(filters or SearchFilters(), conversational=True)
    scored: dict[int, float] = {}
    held: dict[int, float] = {}
    facts: dict[int | str | None, RecalledFact] = {}
    for question in questions:
        meaning = " ".join(question.text.split())[-MEANING_CHARS:]
        results = find(
            db, question.text, filters, limit=limit, snippets=False,  # rows are read below
            nearest=nearest, meaning=meaning if nearest is not None else None,
        ).results  # fmt: skip
        for hit in results.hits:
            if hit.related:
                continue  # meaning alone, not sure enough to be an answer: not for a prompt
            # Search's own measure of the words, for what the words alone found: what meaning
            # found too passes as what meaning alone found does (a reply found by both holds
            # half its proposal's words, and was dropped where meaning alone would have kept it).
            share = 1.0
            if hit.held is not None and hit.found_by not in ("semantic", "both"):
                share = hit.held
            held[hit.entry_id] = max(share, held.get(hit.entry_id, 0.0))
            scored[hit.entry_id] = max(hit.score, scored.get(hit.entry_id, 0.0))
        if nearest is not None:
            # The question's vector is cached: asking again costs only the product.
            with contextlib.suppress(ClawbackError):
                close = above_floor(nearest.nearest(meaning, NEAREST))
                if not results.hits or results.related_only:
                    # Nothing found that answers: a fact needs what an answer by meaning needs.
                    close = [item for item in close if item[2] >= ANSWER_FLOOR]
                for fact in _close_facts(db, close):
                    facts.setdefault(fact.id, fact)
    ranked = sorted(scored, key=lambda entry_id: -scored[entry_id])[:limit]
    rows = _hit_rows(db, ranked)
    _answer_restated(db, questions, rows, ranked, scored, held, filters)
    if project:
        for entry_id in ranked:
            if rows[entry_id][-1] == project:
                scored[entry_id] *= PROJECT_FACTOR
    order = {entry_id: index for index, entry_id in enumerate(ranked)}
    ranked.sort(key=lambda entry_id: (-scored[entry_id], order[entry_id]))
    hits = [
        RecallHit(
            entry_id=entry_id, session_id=row[1], source=row[2], role=row[3], timestamp=row[4],
            text=row[5], score=scored[entry_id], uuid=row[6], file_key=row[7], line=row[8],
        )
        for entry_id in ranked[:limit]
        if (min_coverage <= 0 or held[entry_id] >= min_coverage)
        and (row := rows.get(entry_id)) is not None
    ]  # fmt: skip
    return hits, list(facts.values())


_HIT_ROWS = """
SELECT e.id, e.session_id, f.source, e.role, e.ts, e.text, e.uuid, f.file_key, e.line, s.cwd
FROM entries e JOIN files f ON f.id = e.file_id LEFT JOIN sessions s ON s.id = e.session_id
WHERE e.id IN ({ids})
"""


def _hit_rows(db: Queryable, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    if not ids:
        return {}
    sql = _HIT_ROWS.format(ids=", ".join("?" * len(ids)))
    return {row[0]: tuple(row) for row in db.execute(sql, list(ids))}


def _answer_restated(
    db: Queryable,
    questions: Sequence[Asked],
    rows: dict[int, tuple[Any, ...]],
    ranked: list[int],
    scored: dict[int, float],
    held: dict[int, float],
    filters: SearchFilters,
) -> None:
    """Each hit in ``ranked`` that only restates one of ``questions`` keeps
    :data:`RESTATED_SHARE` of its score, and the turn that answered it gets at least the whole
    (and its share of the words), joining ``ranked`` if it was not there: the answer takes the
    restatement's place, the restatement stays below it (when and where it was asked). Changes
    ``ranked``, ``rows``, ``scored`` and ``held``."""
    restating = [
        entry_id
        for entry_id in ranked
        if entry_id in rows
        and any(restates(rows[entry_id][5] or "", question.text) for question in questions)
    ]
    if not restating:
        return
    answers = answers_to(db, restating, *filters.where())
    for entry_id in restating:
        answer = answers.get(entry_id)
        if answer is not None and answer not in restating:
            if scored.get(answer, 0.0) < scored[entry_id]:
                scored[answer] = scored[entry_id]
                held[answer] = max(held.get(answer, 0.0), held[entry_id])
            if answer not in ranked:
                ranked.append(answer)
        scored[entry_id] *= RESTATED_SHARE
    rows.update(_hit_rows(db, [entry_id for entry_id in ranked if entry_id not in rows]))


def _close_facts(db: Queryable, close: Sequence[tuple[int, int, float]]) -> list[RecalledFact]:
    """Current facts among the neighbours whose text is still what was embedded."""
    wanted = {-chunk: (digest, similarity) for chunk, digest, similarity in close if chunk < 0}
    if not wanted:
        return []
    rows = db.execute(
        "SELECT id, type, content, context FROM facts WHERE superseded_by IS NULL"
        f" AND id IN ({', '.join('?' * len(wanted))})",
        list(wanted),
    ).fetchall()
    return [
        RecalledFact(text=content, score=wanted[fact_id][1], kind=kind, id=fact_id)
        for fact_id, kind, content, context in rows
        if text_hash(fact_text(kind, content, context)) == wanted[fact_id][0]
    ]
