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
from clawback.core.search.plan import light_stem

_TOKEN = re.compile(r"[^\W_]+")
ABSENT_WEIGHT = 3.0
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
    if not words or not texts:  # the words' weights cost a read of the index each
        return [0.0 for _ in texts]
    weights = _weights(db, words)
    total = sum(weight for weight, _ in weights.values()) or 1.0
    found = []
    for text in texts:
        folded = _fold(text[:READ_CHARS])
        tokens = set(_TOKEN.findall(folded))
        held = sum(
            weight for key, (weight, how) in weights.items() if _holds(key, how, folded, tokens)
        )
        found.append(held / total)
    return found


def _holds(key: str, how: str, folded: str, tokens: set[str]) -> bool:
    if how == "stem":
        return any(token.startswith(key) for token in tokens)
    if how == "token":
        return key in tokens
    return key in folded  # a phrase, or a CJK run inside a longer token


def _weights(db: Queryable, words: Sequence[str]) -> dict[str, tuple[float, str]]:
    """Each word's idf, ``log(1 + (N - n + 0.5) / (n + 0.5))``, and how a text holds it: a plain
    English word by its stem ("pick" is held by "picked"), a phrase as a phrase, counted as
    rare as its rarest word."""
    size = db.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()[0] or 1
    weights: dict[str, tuple[float, str]] = {}
    for word in words:
        parts = _TOKEN.findall(_fold(word))
        if not parts:
            continue
        if len(parts) == 1 and parts[0].isascii() and parts[0].isalpha() and len(parts[0]) >= 4:
            key, how = light_stem(parts[0]), "stem"
            count = db.execute(
                "SELECT coalesce(max(doc), 0) FROM (SELECT doc FROM temp.entries_vocab"
                " WHERE term >= ? AND term < ? LIMIT 64)",
                (key, key + "\uffff"),
            ).fetchone()[0]
        else:
            key = " ".join(parts)
            how = "token" if len(parts) == 1 and key.isascii() else "phrase"
            count = min(_doc_count(db, part) for part in parts)
        weights[key] = (math.log(1 + (size - count + 0.5) / (count + 0.5)) if count else -1.0, how)
    # A word no message holds weighs ABSENT_WEIGHT times the rarest present word of the query (1
    # when none is): a typo must not sink every answer ("cache layer" still finds "cache"), and
    # nonsense with one real word in it must still hold too little (docs/search-quality.md).
    known = [weight for weight, _ in weights.values() if weight >= 0]
    absent = max(known, default=1.0) * ABSENT_WEIGHT
    return {key: (absent if weight < 0 else weight, how) for key, (weight, how) in weights.items()}


def _doc_count(db: Queryable, term: str) -> int:
    row = db.execute("SELECT doc FROM temp.entries_vocab WHERE term = ?", (term,)).fetchone()
    return row[0] if row else 0


def _fold(text: str) -> str:
    """Lower case, words separated by single spaces, so a phrase is a substring. Diacritics
    stay (``unicode61`` folds them): stripping them costs more than the rare miss is worth."""
    return " ".join(_TOKEN.findall(text.lower()))
