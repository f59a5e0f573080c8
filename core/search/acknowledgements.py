"""A turn that only acknowledges ("yo", "ok", "thanks!", "yes do it", "👍") is never a hit on its
own: it says nothing a person searching could read, and whatever made it near a question is the
turn it answers.

Why it came up at all: a short turn is embedded with the turn it answers
(``embeddings/chunks.py``), so "ok" after a long explanation sits as near a question as the
explanation does, and a question's keyword side brings the person's reply to an assistant hit
along (``candidates._replies``). Both are right for "ok, let's do vite", which settles
something in its own words, and wrong for "ok": hybrid lists showed "yo" and "ok" as hits, and
for one question dropped the answer keyword search found at #4 for "yo". So in the vector modes
an acknowledgement stands aside for the turn it answers (that turn takes its place, when the
person's filters allow it and it is not in the list already), and the keyword side never brings
one as a reply.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from clawback.core.db import Queryable
from clawback.core.search.filters import passing
from clawback.core.search.fusion import Fused
from clawback.core.text import STOPWORDS

MAX_CHARS = 40  # longer text says something, whatever its words
MAX_WORDS = 4
ACKNOWLEDGING = frozenset(
    """yo ok okay k kk yes yeah yep yup ya sure thanks thank thx ty cool great nice good fine
    perfect awesome lgtm done hi hello hey right alright np lol continue proceed go ahead agreed
    correct exactly cheers wow gotcha ack noted understood sounds works bye later see""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[^\W_]+")

# The turn an acknowledgement answers: the nearest earlier conversational text turn by the other
# speaker in its file, on its side of a sidechain (what embeddings/chunks.py reads it with).
_ANSWERED = """
SELECT e.id, (
    SELECT p.id FROM entries p
    WHERE p.file_id = e.file_id AND p.kind = 'text' AND p.conversational = 1
      AND p.role IN ('user', 'assistant') AND p.role != e.role AND p.sidechain = e.sidechain
      AND p.line <= e.line AND (p.line < e.line OR p.id < e.id)
    ORDER BY p.line DESC, p.id DESC LIMIT 1)
FROM entries e WHERE e.id IN ({ids})
"""


def is_acknowledgement(text: str) -> bool:
    """Whether ``text`` only acknowledges: at most :data:`MAX_WORDS` words, each an
    acknowledging word or a stop word ("yes do it", "ok thanks"), or no word at all ("👍")."""
    flat = text.strip()
    if not flat or len(flat) > MAX_CHARS:
        return False
    words = _WORD.findall(flat.lower())
    return len(words) <= MAX_WORDS and all(w in ACKNOWLEDGING or w in STOPWORDS for w in words)


def acknowledgements(db: Queryable, ids: list[int]) -> set[int]:
    """The entries among ``ids`` that are text turns only acknowledging."""
    if not ids:
        return set()
    rows = db.execute(
        f"SELECT id, text FROM entries WHERE id IN ({', '.join('?' * len(ids))})"
        f" AND kind = 'text' AND role IN ('user', 'assistant') AND length(text) <= {MAX_CHARS}",
        ids,
    ).fetchall()
    return {entry_id for entry_id, text in rows if is_acknowledgement(text or "")}


def instead_of_acknowledgements(
    db: Queryable, fused: list[Fused], clauses: list[str], params: list[Any]
) -> list[Fused]:
    """``fused`` with each acknowledgement replaced, in its place, by the turn it answers when
    that turn passes the filters' SQL ``clauses`` and is not ranked above it already; dropped
    otherwise."""
    acks = acknowledgements(db, [item.id for item in fused])
    if not acks:
        return fused
    marks = ", ".join("?" * len(acks))
    answered: dict[int, int | None] = dict(
        db.execute(_ANSWERED.format(ids=marks), sorted(acks)).fetchall()
    )
    targets = sorted({target for target in answered.values() if target is not None})
    allowed = passing(db, targets, clauses, params)
    shown: set[int] = set()
    kept: list[Fused] = []
    for item in fused:
        entry = answered.get(item.id) if item.id in acks else item.id
        if entry is None or entry in shown or (item.id in acks and entry not in allowed):
            continue
        shown.add(entry)
        kept.append(item if entry == item.id else replace(item, id=entry))
    return kept
