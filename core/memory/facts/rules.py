"""The rules that decide what a new fact does to the known ones: ADD, UPDATE, SUPERSEDE, NONE.

Pure functions over text, no storage, so the outcome is deterministic and testable; the model
only proposes facts. The thresholds and the reasoning behind them: ``docs/facts.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

FACT_TYPES = ("decision", "implementation", "config", "issue", "task_state", "architecture")

SIMILAR = 0.4  # least jaccard for UPDATE and NONE: the two facts are about the same thing
COVER = 0.8  # share of one fact's tokens found in the other
CONTRADICTION_OVERLAP = 0.5  # least jaccard for a negation flip, a changed number, a swapped value
SWAP_MAX = 2  # most tokens on each side of a swapped value


_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just let me more most my myself now of on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves us via per should
    shall may might must instead still already using use used uses
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_NEGATION_TEXT = (
    "not no never none nothing nobody neither nor cannot without dont doesnt didnt isnt arent "
    "wasnt werent wont cant couldnt shouldnt wouldnt hasnt havent hadnt"
)
_NEGATIONS = frozenset(_NEGATION_TEXT.split())
_TOKEN = re.compile(r"\w[\w'’.:/@#+-]*")
_TRIM = ".:/'’-+#@"
_QUERY_WORD = re.compile(r"\w+")


# --------------------------------------------------------------------------------- similarity


@dataclass(frozen=True)
class FactTerms:
    """A fact's comparable form: content words, its numbers, and whether it is negated."""

    words: frozenset[str]
    numbers: frozenset[str]
    negated: bool

    @property
    def all(self) -> frozenset[str]:
        return self.words | self.numbers


def tokenize(text: str) -> FactTerms:
    """The tokens the update rules compare (see the module docstring)."""
    words: set[str] = set()
    numbers: set[str] = set()
    negated = False
    for raw in _TOKEN.findall(text.lower()):
        word = raw.rstrip(_TRIM).replace("’", "'")
        if not word:
            continue
        bare = word.replace("'", "")
        if bare in _NEGATIONS or word.endswith("n't"):
            negated = True
            continue
        if bare in _STOPWORDS:
            continue
        if word[0].isdigit():
            numbers.add(word)
            continue
        if len(word) > 4 and word.isalpha() and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return FactTerms(frozenset(words), frozenset(numbers), negated)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


class Action(StrEnum):
    ADD = "add"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    NONE = "none"


@dataclass(frozen=True)
class Comparison:
    """How a new fact relates to one existing fact; ``action`` is ADD when they are unrelated."""

    action: Action
    jaccard: float
    old_cover: float
    new_cover: float
    reason: str


def compare(old: str, new: str) -> Comparison:
    """Apply the update rules to one pair of fact texts (``old`` existing, ``new`` incoming)."""
    a, b = tokenize(old), tokenize(new)
    return compare_tokens(a, b)


def compare_tokens(a: FactTerms, b: FactTerms) -> Comparison:
    old_all, new_all = a.all, b.all
    shared = old_all & new_all
    overlap = jaccard(old_all, new_all)
    old_cover = len(shared) / len(old_all) if old_all else 1.0
    new_cover = len(shared) / len(new_all) if new_all else 1.0

    def result(action: Action, reason: str) -> Comparison:
        return Comparison(action, overlap, old_cover, new_cover, reason)

    if a.negated != b.negated and overlap >= CONTRADICTION_OVERLAP:
        return result(Action.SUPERSEDE, "negation differs")
    if (
        a.numbers - b.numbers
        and b.numbers - a.numbers
        and jaccard(a.words, b.words) >= CONTRADICTION_OVERLAP
    ):
        return result(Action.SUPERSEDE, "a number changed")
    only_old, only_new = old_all - new_all, new_all - old_all
    if (
        0 < len(only_old) <= SWAP_MAX
        and 0 < len(only_new) <= SWAP_MAX
        and overlap >= CONTRADICTION_OVERLAP
    ):
        return result(
            Action.SUPERSEDE, f"{', '.join(sorted(only_old))} -> {', '.join(sorted(only_new))}"
        )
    if overlap >= SIMILAR and old_cover >= COVER and len(new_all) > len(old_all):
        return result(Action.UPDATE, "more detailed")
    if overlap >= SIMILAR and new_cover >= COVER:
        return result(Action.NONE, "already known")
    return result(Action.ADD, "unrelated")


def recall_words(query: str) -> list[str]:
    """The meaningful words of ``query`` (no stopwords, no single letters), in order, once each."""
    words: list[str] = []
    for word in _QUERY_WORD.findall(query.lower()):
        if word not in _STOPWORDS and word not in words and (len(word) > 1 or word.isdigit()):
            words.append(word)
    return words
