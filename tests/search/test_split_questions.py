"""A message asking several things is asked as several questions; one question stays whole."""

from __future__ import annotations

import pytest
from clawback.core.search.questions import MAX_QUESTIONS, split_questions
from hypothesis import given
from hypothesis import strategies as st


def test_a_new_question_after_and_starts_a_question() -> None:
    prompt = "remind me what we decided about the cache layer and when the quarterly offsite is"
    assert split_questions(prompt) == [
        "remind me what we decided about the cache layer",
        "when the quarterly offsite is",
    ]


def test_sentences_are_questions_of_their_own() -> None:
    assert split_questions("Why did the build fail on CI? Which commit fixed the flaky test?") == [
        "Why did the build fail on CI",
        "Which commit fixed the flaky test",
    ]
    assert split_questions("first the parser rewrite\nthen the cache eviction bug") == [
        "first the parser rewrite",
        "then the cache eviction bug",
    ]


@pytest.mark.parametrize(
    "one",
    [
        "explain the osi network layer model to me",
        "what about redis and postgres",  # "and" joins two things of one question
        "the cache layer. Thanks!",  # a part without two content words stays with its neighbour
        "which tomatoes? and the pelican",
        "bump v1.2.3 and what now",  # a dot inside a word ends nothing
        "hi",
        "",
    ],
)
def test_one_question_stays_whole(one: str) -> None:
    assert split_questions(one) == [one]


def test_a_long_message_is_asked_as_its_last_few_questions() -> None:
    many = " ".join(f"Where is the config file number {n}?" for n in range(10))
    questions = split_questions(many)
    assert len(questions) == MAX_QUESTIONS
    assert questions[-1] == "Where is the config file number 9"


@given(st.text(max_size=200))
def test_every_question_comes_from_the_text(text: str) -> None:
    questions = split_questions(text)
    assert 1 <= len(questions) <= MAX_QUESTIONS
    for question in questions:
        for word in question.split():
            assert word in text
