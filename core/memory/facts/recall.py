"""Knowledge facts as recall's ``<knowledge>`` lines: the active facts a message is about, each
with how old the knowledge is.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from clawback.core.chat.recall import Fact as RecallFact
from clawback.core.chat.recall import FactsProvider
from clawback.core.memory.facts.records import Fact
from clawback.core.memory.facts.store import RECALL_LIMIT, FactStore

if TYPE_CHECKING:  # annotations only: recall in a Claude Code hook must not pay ~90 ms for it
    import sqlite_utils


def facts_for_recall(
    db: sqlite_utils.Database, query: str, limit: int = RECALL_LIMIT
) -> list[RecallFact]:
    """Active facts relevant to ``query``, best first, as recall's ``<knowledge>`` lines."""
    return [
        RecallFact(text=_recall_text(fact), score=score, kind=fact.type, id=fact.id)
        for fact, score in FactStore(db).for_recall(query, limit)
    ]


def facts_provider(db: sqlite_utils.Database) -> FactsProvider:
    """:func:`facts_for_recall` bound to ``db``: the ``facts_provider`` recall takes."""
    return functools.partial(facts_for_recall, db)


def _recall_text(fact: Fact) -> str:
    """``content (context; 2026-11-20)``: the date says how old the knowledge is."""
    extra = [part for part in (fact.context, (fact.source_ts or fact.created_at)[:10]) if part]
    return fact.content + (f" ({'; '.join(extra)})" if extra else "")
