"""Which update rule a machine fact meets, read against the facts already stored.

:mod:`.rules` compares two texts; this picks which stored fact a new one is compared with (the
most similar active fact of its type first) and adds what only the store knows: a person's
edit is never superseded, contradicted or rewritten by extraction, and what a person replaced
is not added again. Nothing here writes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from clawback.core.memory.facts.records import (
    COLUMNS,
    Decision,
    Fact,
    NewFact,
    as_stored,
    fact_from_row,
    same_source,
)
from clawback.core.memory.facts.rules import (
    Action,
    Comparison,
    FactTerms,
    compare_tokens,
    jaccard,
    tokenize,
)


def decide(db: Any, new: NewFact) -> Decision:
    """Which rule applies to ``new`` (nothing is written)."""
    incoming = tokenize(as_stored(new.content))
    rows = db.execute(
        f"SELECT {COLUMNS} FROM facts WHERE superseded_by IS NULL AND type = ?",
        (new.type,),
    ).fetchall()
    scored: list[tuple[float, int, Fact, FactTerms]] = []
    for row in rows:
        fact = fact_from_row(row)
        tokens = tokenize(fact.content)
        scored.append((jaccard(tokens.all, incoming.all), fact.id, fact, tokens))
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    for _score, _id, fact, tokens in scored:
        comparison = compare_tokens(tokens, incoming)
        if comparison.action is Action.ADD:
            continue
        if fact.edited and same_source(fact, new) and comparison.action is not Action.NONE:
            corrected = replace(comparison, action=Action.NONE, reason="corrected by hand")
            return Decision(Action.NONE, fact, corrected)
        if comparison.action is Action.SUPERSEDE and fact.edited:
            # Extraction never contradicts a person: their edit stands until they change it.
            kept = replace(comparison, action=Action.NONE, reason="a person's edit stands")
            return Decision(Action.NONE, fact, kept)
        if comparison.action is Action.UPDATE and fact.edited:
            # A person's wording is never rewritten by a machine: keep both.
            return Decision(Action.ADD, fact, comparison)
        return Decision(comparison.action, fact, comparison)
    removed = _replaced_by_hand(db, new.type, incoming)
    if removed is not None:
        return removed
    if incoming.all:
        for row in db.execute(
            f"SELECT {COLUMNS} FROM facts WHERE superseded_by IS NULL AND type != ?",
            (new.type,),
        ):
            fact = fact_from_row(row)
            tokens = tokenize(fact.content)
            if tokens.all == incoming.all and tokens.negated == incoming.negated:
                comparison = Comparison(Action.NONE, 1.0, 1.0, 1.0, "known under another type")
                return Decision(Action.NONE, fact, comparison)
    return Decision(Action.ADD)


def _replaced_by_hand(db: Any, kind: str, incoming: FactTerms) -> Decision | None:
    """NONE when ``incoming`` says again what a person replaced (``facts supersede``):
    extraction never re-adds knowledge a person took out."""
    for row in db.execute(
        f"""SELECT {", ".join(f"old.{c.strip()}" for c in COLUMNS.split(","))}
            FROM facts old JOIN facts new ON new.id = old.superseded_by
            WHERE old.type = ? AND new.edited = 1 ORDER BY old.id DESC""",
        (kind,),
    ):
        fact = fact_from_row(row)
        comparison = compare_tokens(tokenize(fact.content), incoming)
        if comparison.action in (Action.NONE, Action.UPDATE):
            return Decision(
                Action.NONE,
                fact,
                replace(comparison, action=Action.NONE, reason="removed by hand"),
            )
    return None
