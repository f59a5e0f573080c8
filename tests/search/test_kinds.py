"""The kind of answer a question wants: a decision is settled by the person's own turn, a cause
is stated early in the turn that answers "why"; hybrid search lifts hits of that kind."""

from __future__ import annotations

import pytest
from clawback.core.search.engine import search
from clawback.core.search.fusion import Fused
from clawback.core.search.kinds import CAUSE, DECISION, KIND_WEIGHT, favour_kind
from clawback.core.search.plan import plan_query

from tests.search_doubles import FixedNearest, small_index


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("what did we decide about the deploy target?", DECISION),
        ("which bundler did we pick for the recorder?", DECISION),
        ("which dev server did we go with", DECISION),
        ("what names did I want for the tokens?", DECISION),
        ("why did the deploy to heroku fail?", CAUSE),
        ("how come CI was red on the explain PR?", CAUSE),
        ("what went wrong with the migration?", CAUSE),
        ("why did we pick vite?", CAUSE),  # the reason, not the choice
        ("when did we move the cache to redis?", None),
        ("decision redis", None),  # a few keywords rank as typed
        ("why vite", CAUSE),  # a question all the same
    ],
)
def test_a_question_says_what_kind_of_answer_it_wants(query: str, kind: str | None) -> None:
    assert plan_query(query).asks == kind


def test_a_decision_lifts_the_persons_text_turns() -> None:
    db = small_index(
        [
            {"role": "assistant", "text": "for the sound recorder's dev server: vite or webpack?"},
            {"role": "user", "text": "ok, fine, let's do vite"},
            {"role": "tool", "text": "dev server for the sound recorder started on :5173"},
        ]
    )
    fused = [Fused(1, 0.9), Fused(3, 0.8), Fused(2, 0.7)]
    lifted = favour_kind(db, fused, DECISION)
    assert [(item.id, item.score) for item in lifted] == pytest.approx(
        [(2, 0.7 + KIND_WEIGHT), (1, 0.9), (3, 0.8)]
    )  # not the assistant's turn, not a tool's output
    assert favour_kind(db, [], DECISION) == []


def test_a_cause_lifts_turns_that_state_one_early() -> None:
    late = "ran the suite again. " * 20 + "it fails because the mock is stale"
    db = small_index(
        [
            {"role": "assistant", "text": "Only one browser test is still failing, investigating"},
            {
                "role": "assistant",
                "text": "There's the bug! We read `message` but it is `content`.",
            },
            {"role": "assistant", "text": "The tests are failing because the mock is stale."},
            {"role": "assistant", "text": late},
        ]
    )
    fused = [Fused(1, 0.9), Fused(4, 0.8), Fused(2, 0.7), Fused(3, 0.6)]
    lifted = favour_kind(db, fused, CAUSE)
    assert [item.id for item in lifted] == [2, 1, 3, 4]  # a cause stated past the head: not one


def test_hybrid_search_lifts_the_kind_asked_for_and_only_then() -> None:
    db = small_index(
        [
            {"role": "assistant", "text": "the sound recorder could use vite or webpack"},
            {"role": "user", "text": "ok, fine, let's do vite"},
            {"role": "assistant", "text": "webpack needs more config for the recorder"},
            {"role": "user", "text": "what about the weather in Lisbon"},
        ]
    )
    nearest = FixedNearest(db, {1: 0.62, 3: 0.6, 2: 0.58, 4: 0.4})

    def ranked(query: str) -> list[tuple[int, float]]:
        hits = search(db, query, mode="hybrid", nearest=nearest).hits
        return [(h.entry_id, h.score) for h in hits]

    decided = ranked("which bundler did we pick for the sound recorder?")
    assert [entry for entry, _ in decided][:3] == [2, 1, 3]
    assert all(0.0 <= score <= 1.0 for _, score in decided)  # shown within 0..1 still
    asked = ranked("which bundler suits the sound recorder?")
    assert [entry for entry, _ in asked][:3] == [1, 3, 2]
