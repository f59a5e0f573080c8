"""How much of what a question asks for a message holds: the keyword side's evidence in 0..1.

BM25 ranks messages against each other, but its scores do not say whether the best of them is
any good: min-max normalised, the top keyword hit of a paraphrase that shares only "working"
and "pages" with the archive scores 1, as high as a message holding every word of the question.
Fusion needs the difference. The coverage of a hit is the share of the query's words it holds,
each word weighted by its rarity in the index (inverse document frequency from FTS5's own
vocabulary): "ghostty" counts for more than "colors".
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from clawback.core.db import Queryable

_TOKEN = re.compile(r"[^\W_]+")
READ_CHARS = 3_000  # of a long message, what is read for its words (a snippet's neighbourhood)


def coverage(db: Queryable, words: Sequence[str], ids: Sequence[int]) -> dict[int, float]:
    """``{id: share of the idf-weighted words its text holds}`` for the entries ``ids``.

    ``words`` are the query's highlight terms: words, phrases (held when the text holds them as
    a phrase) and CJK runs (held as a substring).
    """
    if not ids or not words:
        return {}
    rows = db.execute(
        f"SELECT id, substr(text, 1, {READ_CHARS}) FROM entries"
        f" WHERE id IN ({', '.join('?' * len(ids))})",
        list(ids),
    ).fetchall()
    shares = text_coverage(db, words, [text or "" for _, text in rows])
    return {entry_id: share for (entry_id, _), share in zip(rows, shares, strict=True)}


def text_coverage(db: Queryable, words: Sequence[str], texts: Sequence[str]) -> list[float]:
    """:func:`coverage` of texts that are not entries (a knowledge fact), weighted by the
    entries' vocabulary all the same."""
    if not words:
        return [0.0 for _ in texts]
    weights = _weights(db, words)
    total = sum(weights.values()) or 1.0
    found = []
    for text in texts:
        folded = _fold(text[:READ_CHARS])
        tokens = set(_TOKEN.findall(folded))
        held = sum(
            weight
            for word, weight in weights.items()
            if (word in tokens if word.isascii() and _TOKEN.fullmatch(word) else word in folded)
        )
        found.append(held / total)
    return found


def _weights(db: Queryable, words: Sequence[str]) -> dict[str, float]:
    """Each word's idf, ``log(1 + (N - n + 0.5) / (n + 0.5))``; phrases count as their rarest
    word would (unknown to the vocabulary: as rare as can be)."""
    size = db.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()[0] or 1
    weights: dict[str, float] = {}
    for word in words:
        folded = _fold(word)
        parts = _TOKEN.findall(folded)
        if not parts:
            continue
        counts = [
            (row[0] if row else 0)
            for row in (
                db.execute("SELECT doc FROM temp.entries_vocab WHERE term = ?", (part,)).fetchone()
                for part in parts
            )
        ]
        rarest = min(counts)
        weights[" ".join(parts) if len(parts) > 1 else parts[0]] = math.log(
            1 + (size - rarest + 0.5) / (rarest + 0.5)
        )
    return weights


def _fold(text: str) -> str:
    """Lower case, words separated by single spaces, so a phrase is a substring. Diacritics
    stay (``unicode61`` folds them): stripping them costs more than the rare miss is worth."""
    return " ".join(_TOKEN.findall(text.lower()))
