"""Recall: what the archive remembers that is relevant to this turn, as one bounded block.

Each chat turn may carry a ``<recalled-context source="memory">`` block: a ``<knowledge>`` part
(facts, from a ``facts_provider`` the memory lifecycle supplies; none by default) and a
``<detail>`` part (fragments of past messages, with their time, role and session). The block is
built from a query made of the last 2-3 user messages (:func:`recall_terms`; a query under 3
characters recalls nothing) and searched as *any* of its words, ranked by FTS5's BM25.

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

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from clawback.core.db import Queryable
from clawback.core.embeddings.chunks import fact_text, text_hash
from clawback.core.errors import ClawbackError
from clawback.core.search.coverage import coverage, text_coverage
from clawback.core.search.engine import NearestChunks
from clawback.core.search.fusion import fuse_weighted, keep_exact
from clawback.core.search.hybrid import admit
from clawback.core.search.query import build_match, score_from_rank
from clawback.core.text.cjk import has_cjk
from clawback.core.text.stopwords import STOPWORDS
from clawback.core.text.wrappers import neutralise_wrappers
from clawback.core.tokens import estimate_tokens

__all__ = [
    "DETAIL_SHARE",
    "KNOWLEDGE_SHARE",
    "Fact",
    "FactsProvider",
    "RecallBlock",
    "RecallHit",
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
MIN_SIMILARITY = 0.3  # below this a neighbour is noise in a prompt (a list for a person shows it)
SCORE_CAP = 20_000  # rank at most this many of the newest matches (as search does)
OPEN_TAG = '<recalled-context source="memory">'
CLOSE_TAG = "</recalled-context>"
_BLOCK = re.compile(r"<recalled-context\b[^>]*>.*?</recalled-context>\s*", re.DOTALL)
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Fact:
    """One piece of knowledge a facts provider returns; higher ``score`` is more relevant."""

    text: str
    score: float = 0.0
    kind: str | None = None
    id: int | str | None = None


FactsProvider = Callable[[str, int], Sequence[Fact]]
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


@dataclass
class RecallBlock:
    """The block as it goes into the prompt, and what it was made of."""

    query: str
    cap: int
    knowledge: list[Fact] = field(default_factory=list)
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


def _any_of(terms: Iterable[str]) -> str | None:
    """An FTS5 expression matching any of ``terms`` (each made safe by :func:`build_match`)."""
    parts = [match for match in (build_match(term) for term in terms) if match]
    if not parts:
        return None
    return " OR ".join(f"({part})" for part in parts)


# ------------------------------------------------------------------------------------- search


_HITS = """
SELECT e.id, e.session_id, f.source, e.role, e.ts, e.text, e.uuid, m.rank
FROM (SELECT rowid, rank FROM (SELECT rowid, rank FROM entries_fts WHERE entries_fts MATCH :q
      ORDER BY rowid DESC LIMIT :cap) ORDER BY rank LIMIT :n) AS m
JOIN entries e ON e.id = m.rowid
JOIN files f ON f.id = e.file_id
WHERE e.kind IN ('text', 'compaction') AND (e.conversational = 1 OR f.source = 'memory')
ORDER BY m.rank, e.id
"""


def search_archive(
    db: Queryable, terms: Sequence[str], *, limit: int = CANDIDATES
) -> list[RecallHit]:
    """Entries matching any of ``terms``, best BM25 first (conversational text and memory)."""
    match = _any_of(terms)
    if match is None or limit <= 0:
        return []
    rows = db.execute(_HITS, {"q": match, "cap": SCORE_CAP, "n": limit * 3}).fetchall()
    hits = [
        RecallHit(
            entry_id=row[0], session_id=row[1], source=row[2], role=row[3], timestamp=row[4],
            text=row[5], uuid=row[6], score=score_from_rank(row[7]),
        )
        for row in rows
    ]  # fmt: skip
    return hits[:limit] if len(hits) > limit else hits


_RECALLED_KINDS = (
    "e.kind IN ('text', 'compaction') AND (e.conversational = 1 OR f.source = 'memory')"
)


def _with_meaning(
    db: Queryable,
    nearest: NearestChunks,
    user_messages: Sequence[str],
    keyword: list[RecallHit],
    limit: int,
) -> tuple[list[RecallHit], list[Fact]]:
    """Keyword hits fused with the fragments and facts nearest the recent user messages.

    A vector side that cannot answer changes nothing: recall is a bonus, never a failure.
    """
    recent = " ".join(strip_recalled(text) for text in list(user_messages)[-QUERY_MESSAGES:])
    try:
        found = nearest.nearest(" ".join(recent.split())[-MEANING_CHARS:], NEAREST)
    except ClawbackError:
        return keyword, []
    close = [item for item in found if item[2] >= MIN_SIMILARITY]
    ranked = [(hit.entry_id, hit.score) for hit in keyword]
    fused = fuse_weighted(ranked, admit(db, close, [_RECALLED_KINDS], []))
    fused = keep_exact(fused, ranked, limit)[:limit]
    known = {hit.entry_id: hit for hit in keyword}
    wanted = [item.id for item in fused if item.id not in known]
    if wanted:
        rows = db.execute(
            "SELECT e.id, e.session_id, f.source, e.role, e.ts, e.text, e.uuid FROM entries e"
            f" JOIN files f ON f.id = e.file_id WHERE e.id IN ({', '.join('?' * len(wanted))})",
            wanted,
        ).fetchall()
        for entry_id, session_id, source, role, ts, text, uuid in rows:
            known[entry_id] = RecallHit(
                entry_id=entry_id, session_id=session_id, source=source, role=role,
                timestamp=ts, text=text, score=0.0, uuid=uuid,
            )  # fmt: skip
    hits = [replace(known[item.id], score=item.score) for item in fused if item.id in known]
    return hits, _close_facts(db, close)


def _close_facts(db: Queryable, close: Sequence[tuple[int, int, float]]) -> list[Fact]:
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
        Fact(text=content, score=wanted[fact_id][1], kind=kind, id=fact_id)
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


def _fact_line(fact: Fact) -> str:
    kind = f"[{fact.kind}] " if fact.kind else ""
    return f"- {kind}{neutralise_wrappers(' '.join(fact.text.split()))}"


def _detail_line(hit: RecallHit) -> str:
    when = (hit.timestamp or "")[:16].replace("T", " ")
    where = hit.source + (f" {hit.session_id[:8]}" if hit.session_id else "")
    stamp = " · ".join(part for part in (when, hit.role, where) if part)
    return f"- [{stamp}] {neutralise_wrappers(hit.text)}"


def render_block(knowledge: Sequence[Fact], details: Sequence[RecallHit]) -> str:
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


_Scored = TypeVar("_Scored", Fact, RecallHit)


def _drop_lowest(items: list[_Scored]) -> None:
    """Remove the lowest-scored item; among equals, the one ranked last."""
    worst = min(range(len(items)), key=lambda i: (items[i].score, -i))
    del items[worst]


def build_recall_block(
    query: str,
    knowledge: Sequence[Fact],
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
) -> RecallBlock:
    """The recalled block for a turn whose last user messages are ``user_messages``.

    ``present_ids`` (message ids) and ``present_texts`` are what the prompt already carries;
    hits among them are excluded, and so is every line of ``exclude_session`` (a session whose
    own lines are already in the context). An empty block (falsy) means nothing to add. With
    ``nearest`` (embeddings), fragments and facts close in meaning join the keyword hits.

    ``min_coverage`` is the relevance floor for what only the words found: a fragment or fact
    must hold at least that share of the query's words, each weighted by its rarity (search's
    :func:`~clawback.core.search.coverage.coverage`), because a fragment sharing one common word
    of a sentence is noise in a prompt, where no memory beats a wrong one.
    """
    terms = recall_terms(user_messages)
    query = " ".join(terms)
    if not terms or cap <= 0:
        return RecallBlock(query=query, cap=cap)
    ids = {i for i in present_ids if i}
    texts = [_normal(text) for text in present_texts if text.strip()]
    details: list[RecallHit] = []
    seen: set[str] = set()
    found = search_archive(db, terms, limit=limit * 2)
    by_words = {hit.entry_id for hit in found}
    close_facts: list[Fact] = []
    if nearest is not None:
        found, close_facts = _with_meaning(db, nearest, user_messages, found, limit * 2)
        meant = {hit.entry_id for hit in found} - by_words
    else:
        meant = set()
    held = (
        coverage(db, terms, [hit.entry_id for hit in found if hit.entry_id not in meant])
        if min_coverage > 0
        else {}
    )
    for hit in found:
        if hit.uuid and hit.uuid in ids:
            continue
        if exclude_session and hit.session_id == exclude_session:
            continue
        if hit.entry_id not in meant and held.get(hit.entry_id, 1.0) < min_coverage:
            continue
        body = _normal(strip_recalled(hit.text))
        if not body or body in seen or any(body in text for text in texts):
            continue
        seen.add(body)
        details.append(
            RecallHit(
                entry_id=hit.entry_id, session_id=hit.session_id, source=hit.source,
                role=hit.role, timestamp=hit.timestamp, text=fragment(hit.text, terms),
                score=hit.score, uuid=hit.uuid,
            )
        )  # fmt: skip
        if len(details) >= limit:
            break
    facts: list[Fact] = list(close_facts)
    if facts_provider is not None:
        provided = list(facts_provider(query, limit))
        shares = (
            text_coverage(db, terms, [fact.text for fact in provided]) if min_coverage > 0 else []
        )
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
