"""What a turn asks recall: the keywords of the last user messages, and each question in them
on its own (a query under 3 characters recalls nothing)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from clawback.core.recall.block import strip_recalled
from clawback.core.search import date_window, split_questions
from clawback.core.text import STOPWORDS, has_cjk

MIN_QUERY_CHARS = 3
QUERY_MESSAGES = 3
MAX_TERMS = 24
_WORD = re.compile(r"\w+", re.UNICODE)


def recall_terms(user_messages: Sequence[str]) -> list[str]:
    """Keywords of the last 2-3 user messages, newest first, deduplicated, stopwords out.

    Nothing at all (``[]``) when the messages hold fewer than 3 characters of text.
    """
    recent = [strip_recalled(text) for text in list(user_messages)[-QUERY_MESSAGES:]]
    if sum(len(text.strip()) for text in recent) < MIN_QUERY_CHARS:
        return []
    seen: set[str] = set()
    found: list[str] = []
    for text in reversed(recent):
        for word in _WORD.findall(text):
            lowered = word.lower()
            if lowered in seen or lowered in STOPWORDS or lowered.isdigit():
                continue
            if len(lowered) < 3 and not has_cjk(lowered):
                continue
            seen.add(lowered)
            found.append(lowered)
            if len(found) >= MAX_TERMS:
                return found
    return found


def recall_query(user_messages: Sequence[str]) -> str:
    """The recall query as text (its terms, space-separated); ``""`` means no recall."""
    return " ".join(recall_terms(user_messages))


@dataclass(frozen=True)
class Asked:
    """One question of the recent messages: its text, asked of search as written (so the chat
    and the hooks get the ranked answer every client gets for it), and its keywords, which the
    recall floor and the fragments measure hits against."""

    text: str
    terms: list[str]


def asked(user_messages: Sequence[str]) -> list[Asked]:
    """What the last user messages ask, newest message first, a question each
    (:func:`~clawback.core.search.questions.split_questions`); a part with no keyword and no
    time in it asks nothing."""
    found = []
    for message in reversed(list(user_messages)[-QUERY_MESSAGES:]):
        for question in split_questions(strip_recalled(message)):
            window = date_window(question)
            start, end = window.span if window else (0, 0)
            terms = recall_terms([question[:start] + " " + question[end:]])
            if terms or window:
                found.append(Asked(question, terms))
    return found
