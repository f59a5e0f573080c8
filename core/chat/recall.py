"""Recall: what the archive remembers that is relevant to this turn, as one bounded block.

Each chat turn may carry a ``<recalled-context source="memory">`` block: a ``<knowledge>`` part
(facts, from a ``facts_provider`` the memory lifecycle supplies; none by default) and a
``<detail>`` part (fragments of past messages, with their time, role and session). The block is
built from the last 2-3 user messages, each question in them asked on its own (:func:`asked`;
a query under 3 characters recalls nothing) and searched by the one search every client uses
(``search.front``): its words by BM25, what is close in meaning to the messages, above the same
floor, so a turn about nothing in the archive recalls nothing.

Budgets, in :func:`~clawback.core.tokens.estimate_tokens` tokens: the whole block never exceeds
``min(chat.recall_hard_cap_tokens, 10% of the context window)`` (:func:`recall_cap`); knowledge
gets at most 30% of that and details 70%. Over budget, the lowest-scored details go first, then
the lowest-scored knowledge. Hits already present in the context (the same message, or text the
prompt already holds) are left out.

This module only reads the index. It must never write recalled text anywhere: a recalled block
lives in one prompt and dies with it. :func:`strip_recalled` removes such blocks from text
before the chat engine stores it, so old recalled blocks are never fed back into the archive.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from clawback.core.archive.refs import entry_ref, fact_ref
from clawback.core.db import Queryable
from clawback.core.embeddings.chunks import fact_text, text_hash
from clawback.core.errors import ClawbackError
from clawback.core.search import (
    ANSWER_FLOOR,
    NearestChunks,
    SearchFilters,
    above_floor,
    answers_to,
    date_window,
    find,
    restates,
    split_questions,
    text_coverage,
)
from clawback.core.text.cjk import has_cjk
from clawback.core.text.fields import prompt_field
from clawback.core.text.stopwords import STOPWORDS
from clawback.core.text.wrappers import neutralise_wrappers
from clawback.core.tokens import estimate_tokens

__all__ = [
    "DETAIL_SHARE",
    "KNOWLEDGE_SHARE",
    "Asked",
    "FactsProvider",
    "RecallBlock",
    "RecallHit",
    "RecalledFact",
    "asked",
    "build_recall_block",
    "recall",
    "recall_cap",
    "recall_query",
    "recall_terms",
    "search_archive",
    "strip_recalled",
]

KNOWLEDGE_SHARE = 0.30
DETAIL_SHARE = 0.70
MIN_QUERY_CHARS = 3
QUERY_MESSAGES = 3
MAX_TERMS = 24
CANDIDATES = 24
FRAGMENT_CHARS = 600
MEANING_CHARS = 1_000  # the tail of the recent user messages that the vector side reads
NEAREST = 100
#: a hit from the asker's own project (the session's working folder) counts this much more: a
#: tie-breaker, not a filter (larger factors cost the questions asked from another project their
#: first places: docs/search-quality.md, "Recall from a project")
PROJECT_FACTOR = 1.1
#: what a past turn that only restates the question keeps of its score, below its answer
RESTATED_SHARE = 0.8
REF_CHARS = 240
FIELD_CHARS = 40  # a hit's role or source, a fact's kind: short words, at most this long
OPEN_TAG = '<recalled-context source="memory">'
CLOSE_TAG = "</recalled-context>"
_BLOCK = re.compile(r"<recalled-context\b[^>]*>.*?</recalled-context>\s*", re.DOTALL)
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class RecalledFact:
    """One piece of knowledge a facts provider returns; higher ``score`` is more relevant."""

    text: str
    score: float = 0.0
    kind: str | None = None
    id: int | str | None = None


FactsProvider = Callable[[str, int], Sequence[RecalledFact]]
"""``(query, limit) -> facts``, best first. Supplied by the memory lifecycle (``core/facts.py``)."""


@dataclass(frozen=True)
class RecallHit:
    """A message fragment found in the archive."""

    entry_id: int
    session_id: str | None
    source: str
    role: str
    timestamp: str | None
    text: str
    score: float
    uuid: str | None = None
    file_key: str | None = None
    line: int | None = None

    @property
    def ref(self) -> str | None:
        """What ``memory_get`` takes to read the whole message (``None``: its place unknown)."""
        if self.file_key is None or self.line is None:
            return None
        return entry_ref(self.source, self.file_key, self.line)


@dataclass
class RecallBlock:
    """The block as it goes into the prompt, and what it was made of."""

    query: str
    cap: int
    knowledge: list[RecalledFact] = field(default_factory=list)
    details: list[RecallHit] = field(default_factory=list)

    @property
    def text(self) -> str:
        return render_block(self.knowledge, self.details)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def __bool__(self) -> bool:
        return bool(self.knowledge or self.details)


# -------------------------------------------------------------------------------------- query


def recall_terms(user_messages: Sequence[str]) -> list[str]:
    """Keywords of the last 2-3 user messages, newest first, deduplicated, stopwords out.

    Nothing at all (``[]``) when the messages hold fewer than 3 characters of text.
    """
    recent = [strip_recalled(text) for text in list(user_messages)[-QUERY_MESSAGES:]]
    if sum(len(text.strip()) for text in recent) < MIN_QUERY_CHARS:
        return []
    seen: set[str] = set()
    found: list[str] = []
    for text in reversed(recent):
        for word in _WORD.findall(text):
            lowered = word.lower()
            if lowered in seen or lowered in STOPWORDS or lowered.isdigit():
                continue
            if len(lowered) < 3 and not has_cjk(lowered):
                continue
            seen.add(lowered)
            found.append(lowered)
            if len(found) >= MAX_TERMS:
                return found
    return found


def recall_query(user_messages: Sequence[str]) -> str:
    """The recall query as text (its terms, space-separated); ``""`` means no recall."""
    return " ".join(recall_terms(user_messages))


@dataclass(frozen=True)
class Asked:
    """One question of the recent messages: its text, asked of search as written (so the chat
    and the hooks get the ranked answer every client gets for it), and its keywords, which the
    recall floor and the fragments measure hits against."""

    text: str
    terms: list[str]


def asked(user_messages: Sequence[str]) -> list[Asked]:
    """What the last user messages ask, newest message first, a question each
    (:func:`~clawback.core.search.questions.split_questions`); a part with no keyword and no
    time in it asks nothing."""
    found = []
    for message in reversed(list(user_messages)[-QUERY_MESSAGES:]):
        for question in split_questions(strip_recalled(message)):
            window = date_window(question)
            start, end = window.span if window else (0, 0)
            terms = recall_terms([question[:start] + " " + question[end:]])
            if terms or window:
                found.append(Asked(question, terms))
    return found


# ------------------------------------------------------------------------------------- search


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
            db, question.text, filters, limit=limit,
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


# -------------------------------------------------------------------------------------- block


def recall_cap(hard_cap_tokens: int, context_window: int) -> int:
    """The most tokens a recalled block may take: ``min(hard cap, 10% of the window)``."""
    return max(0, min(hard_cap_tokens, context_window // 10))


def strip_recalled(text: str) -> str:
    """``text`` without any ``<recalled-context>...</recalled-context>`` block."""
    if "<recalled-context" not in text:
        return text
    return _BLOCK.sub("", text)


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def fragment(text: str, terms: Sequence[str], width: int = FRAGMENT_CHARS) -> str:
    """At most ``width`` characters of ``text`` on one line, around the first matching term."""
    flat = " ".join(strip_recalled(text).split())
    if len(flat) <= width:
        return flat
    lowered = flat.lower()
    found = [pos for pos in (lowered.find(term) for term in terms) if pos >= 0]
    start = max(0, min(found) - width // 4) if found else 0
    start = min(start, len(flat) - width)
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


def _fact_line(fact: RecalledFact) -> str:
    stamp = [prompt_field(fact.kind, FIELD_CHARS)]
    if isinstance(fact.id, int):
        stamp.append(f"ref: {fact_ref(fact.id)}")
    label = " · ".join(part for part in stamp if part)
    flat = " ".join(fact.text.split())
    return neutralise_wrappers(f"- [{label}] {flat}" if label else f"- {flat}")


def _detail_line(hit: RecallHit) -> str:
    """One fragment on one line: when, who, and the ref ``memory_get`` reads it whole by (its
    session's short id where the hit has no place to name), every field one bounded line."""
    when = prompt_field((hit.timestamp or "")[:16].replace("T", " "), 16)
    stamp = [when, prompt_field(hit.role, FIELD_CHARS)]
    if hit.ref is not None:
        stamp.append(f"ref: {prompt_field(hit.ref, REF_CHARS)}")
    else:
        stamp.append(prompt_field(f"{hit.source} {(hit.session_id or '')[:8]}", FIELD_CHARS))
    label = " · ".join(part for part in stamp if part)
    return neutralise_wrappers(f"- [{label}] {' '.join(hit.text.split())}")


def render_block(knowledge: Sequence[RecalledFact], details: Sequence[RecallHit]) -> str:
    """The block's text (empty when there is nothing to recall)."""
    if not knowledge and not details:
        return ""
    lines = [OPEN_TAG]
    if knowledge:
        lines += ["<knowledge>", *(_fact_line(fact) for fact in knowledge), "</knowledge>"]
    if details:
        lines += ["<detail>", *(_detail_line(hit) for hit in details), "</detail>"]
    lines.append(CLOSE_TAG)
    return "\n".join(lines)


def _lines_tokens(lines: Iterable[str]) -> int:
    return sum(estimate_tokens(line + "\n") for line in lines)


_Scored = TypeVar("_Scored", RecalledFact, RecallHit)


def _drop_lowest(items: list[_Scored]) -> None:
    """Remove the lowest-scored item; among equals, the one ranked last."""
    worst = min(range(len(items)), key=lambda i: (items[i].score, -i))
    del items[worst]


def build_recall_block(
    query: str,
    knowledge: Sequence[RecalledFact],
    details: Sequence[RecallHit],
    cap: int,
) -> RecallBlock:
    """Fit facts and fragments into ``cap`` tokens: 30% knowledge, 70% details, then the whole.

    Over a budget the lowest-scored details are dropped first, then the lowest-scored facts.
    """
    facts = sorted(knowledge, key=lambda f: -f.score)
    hits = sorted(details, key=lambda h: -h.score)
    knowledge_budget = int(cap * KNOWLEDGE_SHARE)
    detail_budget = int(cap * DETAIL_SHARE)
    while facts and _lines_tokens(map(_fact_line, facts)) > knowledge_budget:
        _drop_lowest(facts)
    while hits and _lines_tokens(map(_detail_line, hits)) > detail_budget:
        _drop_lowest(hits)
    while (facts or hits) and estimate_tokens(render_block(facts, hits)) > cap:
        if hits:
            _drop_lowest(hits)
        else:
            _drop_lowest(facts)
    return RecallBlock(query=query, cap=cap, knowledge=facts, details=hits)


def recall(
    db: Queryable,
    user_messages: Sequence[str],
    *,
    cap: int,
    present_ids: Iterable[str] = (),
    present_texts: Iterable[str] = (),
    facts_provider: FactsProvider | None = None,
    limit: int = CANDIDATES,
    nearest: NearestChunks | None = None,
    exclude_session: str | None = None,
    min_coverage: float = 0.0,
    project: str | None = None,
) -> RecallBlock:
    """The recalled block for a turn whose last user messages are ``user_messages``.

    ``present_ids`` (message ids) and ``present_texts`` are what the prompt already carries;
    hits among them are excluded, as is a past turn saying just what a user message says, and
    every line of ``exclude_session`` (a session whose own lines are already in the context).
    ``project``: the asker's working folder, whose sessions come first at equal relevance.
    Ids and the session are left out by the search itself, so they spend none of the
    ``limit * 2`` candidates: a turn's own message, indexed before its prompt is assembled,
    must not cost the block a fragment that a dry run (which indexes nothing) would show. An
    empty block (falsy) means nothing to add. With ``nearest`` (embeddings), fragments and
    facts close in meaning join the keyword hits.

    ``min_coverage`` is the relevance floor for what only the words found: a fragment or fact
    must hold at least that share of the query's words, each weighted by its rarity (search's
    :func:`~clawback.core.search.coverage.coverage`), because a fragment sharing one common word
    of a sentence is noise in a prompt, where no memory beats a wrong one.
    """
    terms = recall_terms(user_messages)
    query = " ".join(terms)
    questions = asked(user_messages)  # a date alone ("on 2026-05-03?") asks something
    if cap <= 0 or not questions:
        return RecallBlock(query=query, cap=cap)
    ids = {i for i in present_ids if i}
    texts = [_normal(text) for text in present_texts if text.strip()]
    # The messages being answered are in the prompt too: the same words said before (a question
    # asked again, its first asking indexed by the hooks) are nothing to recall.
    repeated = {_normal(strip_recalled(text)) for text in user_messages}
    details: list[RecallHit] = []
    seen: set[str] = set()
    present = SearchFilters(exclude_session=exclude_session, exclude_uuids=tuple(sorted(ids)))
    found, close_facts = search_archive(
        db, questions, limit=limit * 2, nearest=nearest, min_coverage=min_coverage,
        filters=present, project=project,
    )  # fmt: skip
    for hit in found:
        body = _normal(strip_recalled(hit.text))
        if not body or body in seen or body in repeated or any(body in t for t in texts):
            continue
        seen.add(body)
        details.append(replace(hit, text=fragment(hit.text, terms)))
        if len(details) >= limit:
            break
    facts: list[RecalledFact] = list(close_facts)
    if facts_provider is not None:
        provided = list(facts_provider(query, limit))
        texts_of = [fact.text for fact in provided]
        shares = [0.0] * len(provided)
        for question in questions if min_coverage > 0 else ():
            shares = list(map(max, shares, text_coverage(db, question.terms, texts_of)))
        facts += [
            fact
            for i, fact in enumerate(provided)
            if min_coverage <= 0 or shares[i] >= min_coverage
        ]
    unique = {(fact.id if fact.id is not None else fact.text): fact for fact in reversed(facts)}
    facts = [
        fact
        for fact in reversed(unique.values())
        if fact.text.strip() and not any(_normal(fact.text) in text for text in texts)
    ]
    return build_recall_block(query, facts, details, cap)
