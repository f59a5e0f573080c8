"""Knowledge facts: the rules that decide what a new fact does, and the store that keeps them.

``records`` (what a fact is), ``rules`` (two texts compared), ``decide`` (a new fact against
the stored ones), ``store`` (the table), ``recall`` (facts as recall's knowledge lines).
"""

from clawback.core.memory.facts.recall import facts_for_recall, facts_provider
from clawback.core.memory.facts.records import Decision, Fact, FactChange, NewFact
from clawback.core.memory.facts.rules import (
    CONTRADICTION_OVERLAP,
    COVER,
    FACT_TYPES,
    SIMILAR,
    SWAP_MAX,
    Action,
    Comparison,
    compare,
    tokenize,
)
from clawback.core.memory.facts.store import FactStore

__all__ = [
    "CONTRADICTION_OVERLAP",
    "COVER",
    "FACT_TYPES",
    "SIMILAR",
    "SWAP_MAX",
    "Action",
    "Comparison",
    "Decision",
    "Fact",
    "FactChange",
    "FactStore",
    "NewFact",
    "compare",
    "facts_for_recall",
    "facts_provider",
    "tokenize",
]
