"""What kind of answer a question wants, and lifting the hits of that kind.

Search finds the turns that talk about what a question names; in a long session that is dozens
of turns, and the one that answers is often not the one that repeats the question's words. Two
kinds of question say what their answer looks like:

- **A decision** ("what did we decide about the cache?", "which bundler did we pick?", "which
  dev server did we go with?"): in a conversation with Claude the assistant proposes and the
  person settles it ("ok, fine, let's do vite", "put it in handleGeminiSessionEnd"). The
  person's own text turns are lifted.
- **A cause** ("why did the tests break?", "how come CI was red?"): the answer says what went
  wrong ("The tests are failing because...", "There's the bug!", "I see the issue - ..."),
  usually in its first sentences. Text turns that state a cause in their first
  :data:`CAUSE_HEAD` characters are lifted.

Each lifts its hits by :data:`KIND_WEIGHT` in hybrid search, after fusion: a hit must already be
a candidate by words or by meaning; the kind only reorders what was found. Measured on the
question set's 224 questions (docs/embeddings.md): decisions 37 of 42 answered by the person's
turn, six more questions found in the first 10 and none lost; causes three more, recall@5 +4.
English only, as the stop words are.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # query reading imports this module: keep the keyword path's imports lean
    from clawback.core.db import Queryable
    from clawback.core.search.fusion import Fused

DECISION = "decision"
CAUSE = "cause"
KIND_WEIGHT = 0.3  # weights 0.3-0.5 measured alike, 0.1-0.2 about half the gain
CAUSE_HEAD = 300  # a cause is stated this early in the turn that answers "why"

#: Words that ask what was chosen; "go with" / "went with" count too.
DECISION_WORDS = frozenset(
    """decide decided decides deciding decision decisions pick picked picking choose chose chosen
    choosing settle settled agree agreed want wanted prefer preferred""".split()  # noqa: SIM905
)
_GO_WITH = re.compile(r"\b(?:go|goes|going|gone|went)\s+with\b", re.IGNORECASE)
_ASKS_CAUSE = re.compile(r"^\W*(?:why|how come)\b|\bwhat (?:went wrong|caused)\b", re.IGNORECASE)
_STATES_CAUSE = re.compile(
    r"\b(?:because|the (?:issue|problem|bug|reason|cause)|root cause|caused by|due to"
    r"|that's why|which is why)\b|\bis (?:failing|broken|wrong)\b",
    re.IGNORECASE,
)


def answer_kind(query: str, words: list[str]) -> str | None:
    """:data:`CAUSE`, :data:`DECISION` or ``None`` for a question (``words``: its plain words,
    lower case). "why did we pick vite?" asks for the reason: a cause."""
    if _ASKS_CAUSE.search(query):
        return CAUSE
    if any(word in DECISION_WORDS for word in words) or _GO_WITH.search(query):
        return DECISION
    return None


def favour_kind(db: Queryable, fused: list[Fused], kind: str) -> list[Fused]:
    """``fused`` with the hits of ``kind`` plus :data:`KIND_WEIGHT`, re-sorted (ties keep
    their order)."""
    ids = [item.id for item in fused]
    if not ids:
        return fused
    marks = ", ".join("?" * len(ids))
    if kind == DECISION:
        sql = f"SELECT id FROM entries WHERE id IN ({marks}) AND role = 'user' AND kind = 'text'"
        lifted = {row[0] for row in db.execute(sql, ids)}
    else:
        sql = f"SELECT id, substr(text, 1, {CAUSE_HEAD}) FROM entries WHERE id IN ({marks})"
        rows = db.execute(sql + " AND kind = 'text'", ids)
        lifted = {entry for entry, head in rows if _STATES_CAUSE.search(head or "")}
    order = {item.id: index for index, item in enumerate(fused)}
    boosted = [
        replace(item, score=item.score + KIND_WEIGHT) if item.id in lifted else item
        for item in fused
    ]
    boosted.sort(key=lambda item: (-item.score, order[item.id]))
    return boosted
