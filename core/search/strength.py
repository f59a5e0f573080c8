"""How strong a hit is, in one of three words that every client shows the same way.

A hit's ``score`` orders its list and says little on its own: BM25 shrinks with a message's
length, so a long message holding every word typed scored 0.00, and a hybrid score is relative to
the rest of its list. A hit's strength is the evidence itself: how much of what was typed the
message holds, or how close it is in meaning, against the floors search already answers by.
"""

from __future__ import annotations

STRONG, FAIR, WEAK = "strong", "fair", "weak"
TIERS = (STRONG, FAIR, WEAK)  # strongest first
STRONG_SHARE = 0.8  # of the query's words, rarity-weighted (search.coverage)
FAIR_SHARE = 0.5
# Where the nearest turn of a question the archive answers sits (0.58-0.65 in
# docs/search-quality.md); below the answer floor, meaning alone is only related.
STRONG_SIMILARITY = 0.6


def strength(
    share: float | None = None, similarity: float | None = None, *, answer_floor: float = 1.0
) -> str:
    """The stronger of the two kinds of evidence: ``share``, what the message holds of the
    words (1.0 when it holds every word typed), and ``similarity`` in meaning, fair from
    ``answer_floor`` (``hybrid.ANSWER_FLOOR``, passed by the vector search that knows it)."""
    tiers = [WEAK]
    if share is not None:
        tiers.append(STRONG if share >= STRONG_SHARE else FAIR if share >= FAIR_SHARE else WEAK)
    if similarity is not None:
        fair = similarity >= answer_floor
        tiers.append(STRONG if similarity >= STRONG_SIMILARITY and fair else FAIR if fair else WEAK)
    return min(tiers, key=TIERS.index)
