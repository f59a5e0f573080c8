"""Fusing keyword and vector rankings into one list. Pure functions: no IO, no numpy.

Each side brings its top candidates. :func:`fuse` (what search uses) scores a keyword hit by
the share of the question it holds (:mod:`.coverage`: BM25 scores say how hits compare, not
whether the best is any good), a vector hit by its similarity min-max normalised within its
list, weighted ``(1 - w)`` and ``w`` (:data:`VECTOR_WEIGHT`), and adds a small bonus for each
side's first places (:data:`RANK_BONUS`). A candidate missing from a side scores 0 there.
:func:`fuse_weighted` (min-max of both sides' scores, the fusion before issue 20) and
:func:`fuse_rrf` (reciprocal rank fusion) are what it was chosen against: the question bench
prints all three.

Exact matches are never pushed out: the best :data:`KEEP_KEYWORD` keyword hits holding every
typed word always stay in the first page (:func:`first_page`), so a query that quotes a message
still finds it first or near it, whatever the vectors think; and so does the keyword side's best
hit of any kind, so fusion never loses what keyword search alone ranks first. The optional
recency boost multiplies, by at most ``1 + RECENCY_WEIGHT``, and never takes anything away
from an old result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

VECTOR_WEIGHT = 0.5
RRF_K = 60
KEEP_KEYWORD = 3
KEEP_BEST = 1  # the keyword side's best hits (strict or loose) kept on the first page
RANK_BONUS = 0.2  # what each side's first hit adds to its fused score (its second half that)
KEEP_PAGE = 10  # the best KEEP_KEYWORD keyword hits are always among this many (any --limit)
RECENCY_WEIGHT = 0.25
RECENCY_HALF_LIFE_DAYS = 90.0


@dataclass(frozen=True, slots=True)
class Fused:
    """One fused candidate: its id, fused score, and what each side said (``None``: absent)."""

    id: int
    score: float
    keyword: float | None = None
    vector: float | None = None

    @property
    def found_by(self) -> str:
        """``keyword``, ``semantic`` or ``both``: which side found this hit."""
        if self.keyword is not None and self.vector is not None:
            return "both"
        return "keyword" if self.keyword is not None else "semantic"


def min_max(scored: Sequence[tuple[int, float]]) -> dict[int, float]:
    """Scores mapped onto 0..1 within their list; all-equal scores all become 1."""
    if not scored:
        return {}
    values = [score for _, score in scored]
    low, high = min(values), max(values)
    span = high - low
    return {key: (score - low) / span if span > 0 else 1.0 for key, score in scored}


def fuse_weighted(
    keyword: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    *,
    vector_weight: float = VECTOR_WEIGHT,
    scale: dict[int, float] | None = None,
) -> list[Fused]:
    """Weighted sum of min-max normalised scores, best first (ties: keyword order, then id).

    Each input is ``(id, score)`` with higher scores better; raw scores are kept on the result.
    ``scale`` multiplies the normalised keyword score of the ids it names.
    """
    kw, vec = min_max(keyword), min_max(vector)
    for key, factor in (scale or {}).items():
        if key in kw:
            kw[key] *= factor
    return _blend(keyword, vector, kw, vec, vector_weight)


def fuse(
    keyword: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    held: dict[int, float],
) -> list[Fused]:
    """The fusion search uses. A keyword hit counts for the share of the query it holds
    (``held``, see :mod:`.coverage`), a vector hit for its min-max normalised similarity; the
    fused score is ``(1 - w) * held + w * similarity`` plus, for each side that has it at
    0-based ``rank``, ``RANK_BONUS / (1 + rank)``. With nothing from one side, the other's
    evidence is all there is and gets full weight. Ties keep keyword order.

    Why the rank bonus: a sum of scores lets a pair of middling hits found by both sides bury
    what one side is sure of (its first hit, found by the other side not at all). The bonus is
    reciprocal rank fusion's idea, kept small: a side's first places weigh, its long tail not
    (measured: docs/embeddings.md).
    """
    if not (keyword and vector):
        weight = float(not keyword)
        return _blend(keyword, vector, held, min_max(vector), weight)
    bonus = {key: RANK_BONUS / (1 + rank) for rank, (key, _) in enumerate(keyword)}
    for rank, (key, _) in enumerate(vector):
        bonus[key] = bonus.get(key, 0.0) + RANK_BONUS / (1 + rank)
    return _blend(keyword, vector, held, min_max(vector), VECTOR_WEIGHT, bonus)


def fuse_rrf(
    keyword: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]], *, k: int = RRF_K
) -> list[Fused]:
    """Reciprocal rank fusion, ``sum 1 / (k + rank)``: the bench's point of comparison."""
    scores: dict[int, float] = {}
    for ranked in (keyword, vector):
        for rank, (key, _) in enumerate(ranked, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    raw_kw, raw_vec = dict(keyword), dict(vector)
    order = {key: i for i, key in enumerate(_union(keyword, vector))}
    fused = [Fused(key, scores[key], raw_kw.get(key), raw_vec.get(key)) for key in order]
    fused.sort(key=lambda f: (-f.score, order[f.id]))
    return fused


def similarity_shown(ordered: Sequence[Fused]) -> dict[int, float]:
    """The score each hit of a list found by meaning alone shows: its similarity, never above
    the hit before it, so the scores read in the list's order (which session, person and
    narration re-scorings set) and sorting by them keeps it (recall merges questions so).

    Why not the fused score: normalised within its list, the best of a list of weak neighbours
    ("fts5 tokenizer" near "these new tokens", 0.48 similar) showed 1.00 in semantic mode and
    0.75 in hybrid, as sure as a perfect match."""
    shown: dict[int, float] = {}
    ceiling = 1.0
    for item in ordered:
        if item.vector is not None:
            ceiling = min(ceiling, item.vector)
            shown[item.id] = ceiling
    return shown


def first_page(
    fused: Sequence[Fused],
    strict: Sequence[tuple[int, float]],
    keyword: Sequence[tuple[int, float]],
    page: int = KEEP_PAGE,
) -> list[Fused]:
    """``fused`` reordered so the first ``page`` holds the :data:`KEEP_KEYWORD` best ``strict``
    hits (every typed word) and the :data:`KEEP_BEST` best of the whole ``keyword`` list.

    Why the keyword side's best hit, loose or strict: a question's keyword side is loose, and
    a hit holding a good share of the question could sink below the page under a vector side
    that liked other messages better; keyword search alone would have shown it first. The
    vector side's best is seldom far down the fused list, so it needs no such place
    (docs/search-quality.md).
    """
    protected = [key for key, _ in strict[:KEEP_KEYWORD]]
    protected += [key for key, _ in keyword[:KEEP_BEST] if key not in protected]
    return _keep_on_page(fused, protected, page)


def _keep_on_page(fused: Sequence[Fused], keep: Sequence[int], page: int) -> list[Fused]:
    """A protected hit (in ``keep``) below the first ``page`` takes the place of the
    lowest-ranked unprotected hit on the page, which moves down to head the rest; nothing else
    moves."""
    protected = set(keep)
    head, tail = list(fused[:page]), list(fused[page:])
    for item in [f for f in tail if f.id in protected]:
        demote = next(
            (i for i in range(len(head) - 1, -1, -1) if head[i].id not in protected), None
        )
        if demote is None:
            break
        tail.insert(0, head.pop(demote))
        tail.remove(item)
        head.append(item)
    return head + tail


def recency_factor(age_days: float | None, *, weight: float = RECENCY_WEIGHT) -> float:
    """``1 + weight * 2^(-age / 90 days)``: at most ``1 + weight``, never below 1.

    ``None`` (undated, or a memory file that is always current, like ``MEMORY.md``) is 1.
    """
    if age_days is None or weight <= 0:
        return 1.0
    return 1.0 + weight * 2.0 ** (-max(age_days, 0.0) / RECENCY_HALF_LIFE_DAYS)


def _blend(
    keyword: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    kw: dict[int, float],
    vec: dict[int, float],
    weight: float,
    bonus: dict[int, float] | None = None,
) -> list[Fused]:
    """``(1 - weight) * kw + weight * vec`` (plus ``bonus``) for every id either side found,
    best first (ties: keyword order, then the vector side's), raw scores kept on each result."""
    bonus = bonus or {}
    raw_kw, raw_vec = dict(keyword), dict(vector)
    order = {key: i for i, key in enumerate(_union(keyword, vector))}
    fused = [
        Fused(
            id=key,
            score=(1 - weight) * kw.get(key, 0.0)
            + weight * vec.get(key, 0.0)
            + bonus.get(key, 0.0),
            keyword=raw_kw.get(key),
            vector=raw_vec.get(key),
        )
        for key in order
    ]
    fused.sort(key=lambda f: (-f.score, order[f.id]))
    return fused


def _union(*lists: Iterable[tuple[int, float]]) -> list[int]:
    """Ids in first-seen order across the lists (keyword first)."""
    seen: dict[int, None] = {}
    for ranked in lists:
        for key, _ in ranked:
            seen.setdefault(key, None)
    return list(seen)
