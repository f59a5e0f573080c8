"""The recalled block as it goes into a prompt: its tags, its budgets and how facts and
fragments are fitted into them, one bounded line each, marked as reference.

Budgets, in :func:`~clawback.core.tokens.estimate_tokens` tokens: the whole block never exceeds
``min(chat.recall_hard_cap_tokens, 10% of the context window)`` (:func:`recall_cap`); knowledge
gets at most 30% of that and details 70%. Over budget, the lowest-scored details go first, then
the lowest-scored knowledge.

A recalled block lives in one prompt and dies with it: :func:`strip_recalled` removes such blocks
from text before the chat engine stores it, so old recalled blocks are never fed back into the
archive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from clawback.core.archive import fact_ref
from clawback.core.recall.records import RecalledFact, RecallHit
from clawback.core.text import neutralise_wrappers, prompt_field
from clawback.core.tokens import estimate_tokens

KNOWLEDGE_SHARE = 0.30
DETAIL_SHARE = 0.70
FRAGMENT_CHARS = 600
REF_CHARS = 240
FIELD_CHARS = 40  # a hit's role or source, a fact's kind: short words, at most this long
OPEN_TAG = '<recalled-context source="memory">'
CLOSE_TAG = "</recalled-context>"
_BLOCK = re.compile(r"<recalled-context\b[^>]*>.*?</recalled-context>\s*", re.DOTALL)


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


def recall_cap(hard_cap_tokens: int, context_window: int) -> int:
    """The most tokens a recalled block may take: ``min(hard cap, 10% of the window)``."""
    return max(0, min(hard_cap_tokens, context_window // 10))


def strip_recalled(text: str) -> str:
    """``text`` without any ``<recalled-context>...</recalled-context>`` block."""
    if "<recalled-context" not in text:
        return text
    return _BLOCK.sub("", text)


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


_Scored = TypeVar("_Scored", RecalledFact, RecallHit)


def _drop_lowest(items: list[_Scored]) -> int:
    """Remove the lowest-scored item (among equals, the one ranked last); returns where it was."""
    worst = min(range(len(items)), key=lambda i: (items[i].score, -i))
    del items[worst]
    return worst


def _within(items: list[_Scored], line: Callable[[_Scored], str], budget: int) -> list[_Scored]:
    """``items`` less the lowest-scored (:func:`_drop_lowest`, one at a time) until their lines
    fit ``budget`` tokens; each line is rendered and counted once, not once per drop."""
    costs = [estimate_tokens(line(item) + "\n") for item in items]
    total = sum(costs)
    while items and total > budget:
        total -= costs.pop(_drop_lowest(items))
    return items


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
    facts = _within(facts, _fact_line, knowledge_budget)
    hits = _within(hits, _detail_line, detail_budget)
    while (facts or hits) and estimate_tokens(render_block(facts, hits)) > cap:
        if hits:
            _drop_lowest(hits)
        else:
            _drop_lowest(facts)
    return RecallBlock(query=query, cap=cap, knowledge=facts, details=hits)
