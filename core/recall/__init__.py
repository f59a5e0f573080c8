"""Recall: what the archive remembers that is relevant to a turn, as one bounded block marked as
reference. The chat's prompt, the hooks' prompt recall and brief, and the facts all ask it here.

:func:`recall` builds the block for a turn (``gather.py``) from what the last user messages ask
(``query.py``), the hits and facts search finds for it (``finding.py``) and the budgets the block
is fitted into (``block.py``); ``records.py`` holds what they hand around. This is the room's
door: other rooms import from here, never from the modules behind it (an import-linter contract
holds it). Names load on first use, so a hook that only strips a block imports no search.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a door imports nothing until a name is asked for
if TYPE_CHECKING:
    from clawback.core.recall.block import (
        CLOSE_TAG,
        DETAIL_SHARE,
        KNOWLEDGE_SHARE,
        OPEN_TAG,
        RecallBlock,
        build_recall_block,
        recall_cap,
        strip_recalled,
    )
    from clawback.core.recall.finding import CANDIDATES, search_archive
    from clawback.core.recall.gather import recall
    from clawback.core.recall.query import Asked, asked, recall_query, recall_terms
    from clawback.core.recall.records import FactsProvider, RecalledFact, RecallHit

#: Each public name and the module behind the door that defines it.
_HOMES = {
    "FactsProvider": "records",
    "RecallHit": "records",
    "RecalledFact": "records",
    "CLOSE_TAG": "block",
    "DETAIL_SHARE": "block",
    "KNOWLEDGE_SHARE": "block",
    "OPEN_TAG": "block",
    "RecallBlock": "block",
    "build_recall_block": "block",
    "recall_cap": "block",
    "strip_recalled": "block",
    "Asked": "query",
    "asked": "query",
    "recall_query": "query",
    "recall_terms": "query",
    "CANDIDATES": "finding",
    "search_archive": "finding",
    "recall": "gather",
}

__all__ = [
    "CANDIDATES",
    "CLOSE_TAG",
    "DETAIL_SHARE",
    "KNOWLEDGE_SHARE",
    "OPEN_TAG",
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

if not TYPE_CHECKING:  # hidden from mypy, so a name the door does not export is an error there
    from clawback.core.doors import loader

    __getattr__ = loader(__name__, _HOMES)
    del loader  # the door's names are its own
