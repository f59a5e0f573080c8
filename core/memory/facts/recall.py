"""Knowledge facts as recall's ``<knowledge>`` lines: the active facts a message is about, each
with how old the knowledge is.
"""

from __future__ import annotations

import functools

from clawback.core.db import Queryable
from clawback.core.memory.facts.records import Fact
from clawback.core.memory.facts.rules import recall_words
from clawback.core.memory.facts.store import ranked_facts
from clawback.core.recall import FactsProvider, RecalledFact
from clawback.core.search import score_from_rank

RECALL_LIMIT = 8
_RECALL_TERMS = 32  # most query words sent to FTS5 for recall


def facts_for_recall(db: Queryable, query: str, limit: int = RECALL_LIMIT) -> list[RecalledFact]:
    """Active facts sharing any meaningful word with ``query``, best first, as recall's
    ``<knowledge>`` lines. Reads only: the recall hook passes a plain read connection.

    A chat message is prose, so its words are OR-ed (each quoted, so nothing in it is FTS5
    syntax); bm25 ranks facts matching more and rarer words first.
    """
    words = recall_words(query)
    if not words or limit <= 0:
        return []
    match = " OR ".join(f'"{w}"' for w in words[:_RECALL_TERMS])
    ranked = ranked_facts(db, match, limit=limit, type=None, include_superseded=False)
    return [
        RecalledFact(
            text=_recall_text(fact), score=score_from_rank(rank), kind=fact.type, id=fact.id
        )
        for fact, rank in ranked
    ]


def facts_provider(db: Queryable) -> FactsProvider:
    """:func:`facts_for_recall` bound to ``db``: the ``facts_provider`` recall takes."""
    return functools.partial(facts_for_recall, db)


def _recall_text(fact: Fact) -> str:
    """``content (context; 2026-11-20)``: the date says how old the knowledge is."""
    extra = [part for part in (fact.context, (fact.source_ts or fact.created_at)[:10]) if part]
    return fact.content + (f" ({'; '.join(extra)})" if extra else "")
