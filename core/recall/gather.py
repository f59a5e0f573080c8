"""Recall for one turn: what the archive remembers that is relevant to it, as one bounded block.

Each chat turn may carry a ``<recalled-context source="memory">`` block: a ``<knowledge>`` part
(facts, from a ``facts_provider`` the memory lifecycle supplies; none by default) and a
``<detail>`` part (fragments of past messages, with their time, role and session). The block is
built from the last 2-3 user messages, each question in them asked on its own
(:func:`~.query.asked`) and searched by the one search every client uses (``search.front``): its
words by BM25, what is close in meaning to the messages, above the same floor, so a turn about
nothing in the archive recalls nothing. Hits already present in the context (the same message,
or text the prompt already holds) are left out.

This only reads the index. It must never write recalled text anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from clawback.core.db import Queryable
from clawback.core.recall.block import RecallBlock, build_recall_block, fragment, strip_recalled
from clawback.core.recall.finding import CANDIDATES, search_archive
from clawback.core.recall.query import asked, recall_terms
from clawback.core.recall.records import FactsProvider, RecalledFact, RecallHit
from clawback.core.search import NearestChunks, SearchFilters, text_coverage


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


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
