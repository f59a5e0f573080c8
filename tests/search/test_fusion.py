"""Fusion: hand-checked scores, exact matches kept, a recency boost that never punishes age."""

from __future__ import annotations

import pytest
from clawback.core.search.fusion import (
    RANK_BONUS,
    VECTOR_WEIGHT,
    Fused,
    first_page,
    fuse,
    fuse_rrf,
    fuse_weighted,
    min_max,
    recency_factor,
    similarity_shown,
)


def test_min_max_maps_each_list_onto_zero_to_one() -> None:
    assert min_max([(1, 0.9), (2, 0.5), (3, 0.1)]) == pytest.approx({1: 1.0, 2: 0.5, 3: 0.0})
    assert min_max([(7, 0.3), (8, 0.3)]) == {7: 1.0, 8: 1.0}
    assert min_max([]) == {}


def test_weighted_fusion_scores_by_hand() -> None:
    keyword = [(1, 0.8), (2, 0.6), (3, 0.4)]  # normalised: 1.0, 0.5, 0.0
    vector = [(3, 0.9), (4, 0.7), (1, 0.5)]  # normalised: 1.0, 0.5, 0.0
    fused = fuse_weighted(keyword, vector, vector_weight=0.4)
    scores = {f.id: f.score for f in fused}
    assert scores == pytest.approx({1: 0.6, 2: 0.3, 3: 0.4, 4: 0.2})
    assert [f.id for f in fused] == [1, 3, 2, 4]
    assert [f.found_by for f in fused] == ["both", "both", "keyword", "semantic"]
    assert fused[0].keyword == 0.8 and fused[0].vector == 0.5


def test_ties_keep_keyword_order() -> None:
    fused = fuse_weighted([(5, 1.0), (6, 1.0)], [], vector_weight=0.4)
    assert [f.id for f in fused] == [5, 6]


def test_what_one_side_ranks_first_is_not_buried_by_middling_hits_of_both() -> None:
    # Four hits both sides found, the vector side half-heartedly, and the vector side's clear
    # first (keyword search did not find it): a plain weighted sum put it fourth.
    keyword = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    vector = [(9, 0.8), (1, 0.5), (2, 0.5), (3, 0.5), (4, 0.45)]
    held = {1: 0.9, 2: 0.9, 3: 0.9, 4: 0.9}
    fused = fuse(keyword, vector, held)
    scores = {f.id: f.score for f in fused}
    assert scores[9] == pytest.approx(VECTOR_WEIGHT * 1.0 + RANK_BONUS)
    assert scores[2] == pytest.approx(
        0.5 * 0.9 + 0.5 * (0.05 / 0.35) + RANK_BONUS * (1 / 2 + 1 / 3)
    )
    assert [f.id for f in fused][:2] == [1, 9]
    # With one side empty, the other's evidence is the score, in its own order.
    assert [f.id for f in fuse([], vector, {})] == [9, 1, 2, 3, 4]
    assert [f.score for f in fuse(keyword, [], held)] == [0.9] * 4


def test_rrf_by_hand() -> None:
    fused = fuse_rrf([(1, 9.0), (2, 8.0)], [(2, 0.9), (3, 0.8)], k=60)
    scores = {f.id: f.score for f in fused}
    assert scores == pytest.approx({1: 1 / 61, 2: 1 / 62 + 1 / 61, 3: 1 / 62})
    assert [f.id for f in fused] == [2, 1, 3]


def test_first_page_pulls_the_best_strict_hits_onto_the_page() -> None:
    strict = [(100, 0.1)]
    fused = [Fused(i, 1.0 - i / 100, vector=0.9) for i in range(1, 6)] + [
        Fused(100, 0.01, keyword=0.1)
    ]
    kept = first_page(fused, strict, strict, page=3)
    assert [f.id for f in kept[:3]] == [1, 2, 100]
    assert [f.id for f in kept[3:]] == [3, 4, 5]
    assert sorted(f.id for f in kept) == sorted(f.id for f in fused)


def test_first_page_keeps_the_keyword_sides_best_loose_hit() -> None:
    """A question's keyword side is loose (no strict hits): its best hit still stays on the
    page, so fusion never loses what keyword search alone shows first; its second may go."""
    keyword = [(100, 0.9), (101, 0.8)]
    fused = [Fused(i, 1.0 - i / 100, vector=0.9) for i in range(1, 6)] + [
        Fused(100, 0.02, keyword=0.9),
        Fused(101, 0.01, keyword=0.8),
    ]
    kept = first_page(fused, [], keyword, page=3)
    assert [f.id for f in kept[:3]] == [1, 2, 100]
    assert [f.id for f in kept[3:]] == [3, 4, 5, 101]


def test_first_page_leaves_a_page_that_already_holds_them() -> None:
    fused = fuse_weighted([(1, 0.9), (2, 0.1)], [(3, 0.9)])
    assert first_page(fused, [(1, 0.9), (2, 0.1)], [(1, 0.9), (2, 0.1)], page=10) == fused


def test_a_list_found_by_meaning_alone_shows_similarities_in_its_own_order() -> None:
    # Re-scoring (a session's weight, narration) put a 0.7-similar turn below a 0.6 one: it
    # shows 0.6, never more than the hit above it, so sorting by score keeps the order.
    ordered = [Fused(1, 0.9, vector=0.6), Fused(2, 0.8, vector=0.7), Fused(3, 0.1, vector=0.5)]
    assert similarity_shown(ordered) == pytest.approx({1: 0.6, 2: 0.6, 3: 0.5})
    assert similarity_shown([Fused(4, 0.5, keyword=0.5)]) == {}


def test_recency_boost_is_gentle_and_never_below_one() -> None:
    assert recency_factor(0) == pytest.approx(1.25)
    assert recency_factor(90) == pytest.approx(1.125)
    assert recency_factor(10_000) == pytest.approx(1.0, abs=1e-9)
    assert recency_factor(10_000) >= 1.0
    assert recency_factor(None) == 1.0
    assert recency_factor(-5) == pytest.approx(1.25)
