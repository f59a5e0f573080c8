"""The vector side of hybrid search, in SQL terms: which neighbours may be shown, each message
once, the sessions most hits come from, and recency.

Search asks a ``NearestChunks`` for the chunks nearest a query; this module keeps those that
pass the person's filters and whose text is still the text that was embedded (an index row id
can be reused for other text after a re-ingest), and applies the optional recency boost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from clawback.core.db import Queryable
from clawback.core.embeddings.chunks import entry_of, text_hash
from clawback.core.embeddings.coverage import chunk_texts
from clawback.core.formats.rendering import restated_tool
from clawback.core.search.dates import DateWindow
from clawback.core.search.fusion import RANK_BONUS, Fused, recency_factor
from clawback.core.search.plan import QueryPlan

# The honest floor (all-MiniLM-L6-v2; calibration in docs/embeddings.md): a query whose nearest
# neighbour is below QUERY_FLOOR is about nothing in the archive, so the vector side brings
# nothing; otherwise neighbours from HIT_FLOOR up count (a right answer can sit at 0.3).
QUERY_FLOOR = 0.33
HIT_FLOOR = 0.25
# Meaning alone (the words found nothing) answers only from this similarity: questions about things
# the archive never held come that close, so below it the vector side's hits are shown as related
# and recall leaves them out (docs/search-quality.md).
ANSWER_FLOOR = 0.45
SESSION_WEIGHT = 0.2  # what the session holding most of the first hits adds (favour_sessions)
SESSION_TOP = 20
PERSON_WEIGHT = 0.3  # what the person's own turn adds to a question about a decision
NARRATION_LENGTH = 120  # an assistant turn this short, just before a tool call, ...
NARRATION_FACTOR = 0.7  # ... keeps this share of its score for a question (discount_narration)
# The most a hybrid hit can score: all of both sides, both sides' rank bonus for a first place,
# and its session's (see ceiling()).
HYBRID_CEILING = 1.0 + 2 * RANK_BONUS + SESSION_WEIGHT


def above_floor(found: Sequence[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The neighbours that are results: none when even the nearest is below the query floor."""
    if not found or max(similarity for _, _, similarity in found) < QUERY_FLOOR:
        return []
    return [item for item in found if item[2] >= HIT_FLOOR]


def admit(
    db: Queryable,
    found: Sequence[tuple[int, int, float]],
    clauses: list[str],
    params: list[Any],
) -> list[tuple[int, float]]:
    """``(entry id, similarity)`` of the neighbours that pass the filters' SQL ``clauses`` and
    whose text is still what was embedded, nearest first. Facts (negative ids) are not hits."""
    wanted = {chunk: (digest, similarity) for chunk, digest, similarity in found if chunk > 0}
    if not wanted:
        return []
    texts = chunk_texts(db, list(wanted), clauses, params)
    nearest: dict[int, float] = {}
    for chunk, (digest, similarity) in wanted.items():  # nearest first
        if chunk in texts and text_hash(texts[chunk]) == digest:
            # A message found by its own words and by its window view counts once, as near as
            # the nearer of the two.
            nearest.setdefault(entry_of(chunk), similarity)
    return list(nearest.items())


def once_each(db: Queryable, fused: list[Fused]) -> list[Fused]:
    """Each message once, where it ranks best: the same turn in two files (a resumed or forked
    session carries its history into a new file; the same transcript copied twice) would show
    twice and push other answers off the first page (docs/search-quality.md).

    A todo list restated at every step (:data:`~clawback.core.formats.rendering.RESTATING_TOOLS`)
    counts as one message per session: otherwise its versions fill the first page."""
    ids = [item.id for item in fused]
    if not ids:
        return fused
    sql = (
        "SELECT id, role, kind, text, session_id FROM entries"
        f" WHERE id IN ({', '.join('?' * len(ids))})"
    )
    said: dict[int, tuple[str | None, ...]] = {}
    for entry_id, role, kind, text, session in db.execute(sql, ids):
        tool = restated_tool(text) if kind == "tool_use" else None
        said[entry_id] = (role, kind, text) if tool is None else (tool, session)
    seen: set[tuple[str | None, ...]] = set()
    kept = []
    for item in fused:
        message = said.get(item.id)
        if message is not None:
            if message in seen:
                continue
            seen.add(message)
        kept.append(item)
    return kept


def favour_sessions(db: Queryable, fused: list[Fused]) -> list[Fused]:
    """Scores plus :data:`SESSION_WEIGHT` times their session's share of the first
    :data:`SESSION_TOP` hits' scores (the session holding most of them: its whole weight).

    Why: a question often names what its session was about ("the bundler for the sound
    recorder"), and the answer, a turn inside it, does not repeat that; the turns that do hold
    it bring their session up, and the answer with it (docs/search-quality.md)."""
    ids = [item.id for item in fused]
    if not ids:
        return fused
    sql = f"SELECT id, session_id FROM entries WHERE id IN ({', '.join('?' * len(ids))})"
    session: dict[int, str | None] = dict(db.execute(sql, ids).fetchall())
    mass: dict[str, float] = {}
    for item in fused[:SESSION_TOP]:
        if (key := session.get(item.id)) is not None:
            mass[key] = mass.get(key, 0.0) + item.score
    heaviest = max(mass.values(), default=0.0)
    if heaviest <= 0:
        return fused
    return _rescored(
        fused,
        lambda item: (
            item.score + SESSION_WEIGHT * mass.get(session.get(item.id) or "", 0.0) / heaviest
        ),
    )


def favour_person(db: Queryable, fused: list[Fused]) -> list[Fused]:
    """The person's own text turns plus :data:`PERSON_WEIGHT`, for a question about what was
    decided (:attr:`~.plan.QueryPlan.asks_decision`).

    Why: in a conversation with Claude the assistant proposes and the person decides ("ok, let's do
    vite", "put it in handleGeminiSessionEnd", "skip 5, 7, 8"). The proposals hold the question's
    words and sit near its meaning, so they outrank the short turn that settled it
    (docs/search-quality.md)."""
    ids = [item.id for item in fused]
    if not ids:
        return fused
    sql = (
        f"SELECT id FROM entries WHERE id IN ({', '.join('?' * len(ids))})"
        " AND role = 'user' AND kind = 'text'"
    )
    person = {row[0] for row in db.execute(sql, ids)}
    return _rescored(fused, lambda item: item.score + PERSON_WEIGHT * (item.id in person))


# An assistant text turn whose next entry in its file (thinking aside) is a tool call.
_NARRATION = """
SELECT e.id FROM entries e
WHERE e.id IN ({ids}) AND e.role = 'assistant' AND e.kind = 'text' AND length(e.text) <= ?
  AND (SELECT n.kind FROM entries n
       WHERE n.file_id = e.file_id AND n.kind != 'thinking'
         AND (n.line, n.block, n.piece) > (e.line, e.block, e.piece)
       ORDER BY n.line, n.block, n.piece LIMIT 1) = 'tool_use'
"""


def discount_narration(db: Queryable, fused: list[Fused]) -> list[Fused]:
    """A question's hits times :data:`NARRATION_FACTOR` when they are the assistant narrating
    its next step ("All tests pass. Let me run the linter:", "Now let me check the config"):
    a short text turn right before a tool call.

    Why: such turns are most of what an assistant says in a coding session and hold the words
    and the meaning of its topic, so for a question they crowd out the turn that answers it;
    few answer one (docs/search-quality.md). Keywords typed as keywords keep their order: they
    ask for words.
    """
    ids = [item.id for item in fused]
    if not ids:
        return fused
    sql = _NARRATION.format(ids=", ".join("?" * len(ids)))
    narration = {row[0] for row in db.execute(sql, [*ids, NARRATION_LENGTH])}
    return _rescored(
        fused, lambda item: item.score * (NARRATION_FACTOR if item.id in narration else 1.0)
    )


def ceiling(plan: QueryPlan) -> float:
    """The most a hybrid hit can score for ``plan``. Shown scores are divided by it, so they
    stay within 0..1 as documented (a recency boost can still reach past it: shown as 1)."""
    return HYBRID_CEILING + (PERSON_WEIGHT if plan.asks_decision else 0.0)


def timestamps(db: Queryable, fused: list[Fused]) -> dict[int, str | None]:
    """Each fused hit's timestamp, read once for both re-orderings below."""
    ids = [item.id for item in fused]
    if not ids:
        return {}
    sql = f"SELECT id, ts FROM entries WHERE id IN ({', '.join('?' * len(ids))})"
    return dict(db.execute(sql, ids).fetchall())


def boost_recent(fused: list[Fused], stamps: dict[int, str | None]) -> list[Fused]:
    """Scores times ``1 + 0.25 * 2^(-age / 90 days)``; undated hits (memory files) unchanged."""
    now = datetime.now(UTC)
    return _rescored(
        fused, lambda item: item.score * recency_factor(_age_days(stamps.get(item.id), now))
    )


def _rescored(fused: list[Fused], score: Callable[[Fused], float]) -> list[Fused]:
    """``fused`` with each hit's score replaced by ``score(hit)``, best first (ties keep their
    order)."""
    order = {item.id: index for index, item in enumerate(fused)}
    rescored = [replace(item, score=score(item)) for item in fused]
    rescored.sort(key=lambda item: (-item.score, order[item.id]))
    return rescored


def _age_days(ts: str | None, now: datetime) -> float | None:
    if not ts:
        return None
    try:
        return (now - datetime.fromisoformat(ts.replace("Z", "+00:00"))).total_seconds() / 86400
    except (ValueError, OverflowError):
        return None


def by_window(
    fused: list[Fused],
    stamps: dict[int, str | None],
    window: DateWindow,
    says_date: set[int] | frozenset[int] = frozenset(),
) -> list[Fused]:
    """The hits from the time the query names first, then those saying the date's words as well
    as the query's (``says_date``, see ``search.candidates``), each part in its own order."""
    inside: list[Fused] = []
    saying: list[Fused] = []
    rest: list[Fused] = []
    for item in fused:
        if window.contains(stamps.get(item.id)):
            inside.append(item)
        else:
            (saying if item.id in says_date else rest).append(item)
    return inside + saying + rest
