"""Query to ranked hits: reading a query, the keyword and vector sides, fusion and strength.

This is search's door: every other room imports from here, never from the modules behind it
(an import-linter contract holds it). :func:`find` is the one search every client asks; the rest
are the records it answers with and the few rules recall and the facts share with it. Names load
on first use, so importing the door costs nothing: the hooks and ``clawback ingest`` stay lean.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a door imports nothing until a name is asked for
if TYPE_CHECKING:
    from clawback.core.search.candidates import LOOSE_FLOOR
    from clawback.core.search.coverage import text_coverage
    from clawback.core.search.dates import date_window
    from clawback.core.search.engine import (
        MARK_END,
        MARK_START,
        MODES,
        RELATED,
        NearestChunks,
        SearchHit,
        SearchResults,
        highlight_window,
    )
    from clawback.core.search.facts import FactHit
    from clawback.core.search.filters import SearchFilters
    from clawback.core.search.front import (
        MIN_PREFIX,
        as_you_type,
        by_meaning,
        find,
        says_nothing,
        too_short,
        why_nothing,
    )
    from clawback.core.search.hybrid import ANSWER_FLOOR, above_floor
    from clawback.core.search.query import build_match, score_from_rank, terms
    from clawback.core.search.questions import split_questions
    from clawback.core.search.restatements import answers_to, restates
    from clawback.core.search.strength import FAIR, STRONG, TIERS, WEAK

#: Each public name and the module behind the door that defines it.
_HOMES = {
    "LOOSE_FLOOR": "candidates",
    "text_coverage": "coverage",
    "date_window": "dates",
    "MARK_END": "engine",
    "MARK_START": "engine",
    "MODES": "engine",
    "RELATED": "engine",
    "NearestChunks": "engine",
    "SearchHit": "engine",
    "SearchResults": "engine",
    "highlight_window": "engine",
    "FactHit": "facts",
    "SearchFilters": "filters",
    "MIN_PREFIX": "front",
    "as_you_type": "front",
    "by_meaning": "front",
    "find": "front",
    "says_nothing": "front",
    "too_short": "front",
    "why_nothing": "front",
    "ANSWER_FLOOR": "hybrid",
    "above_floor": "hybrid",
    "build_match": "query",
    "score_from_rank": "query",
    "terms": "query",
    "split_questions": "questions",
    "answers_to": "restatements",
    "restates": "restatements",
    "FAIR": "strength",
    "STRONG": "strength",
    "TIERS": "strength",
    "WEAK": "strength",
}

__all__ = [
    "ANSWER_FLOOR",
    "FAIR",
    "LOOSE_FLOOR",
    "MARK_END",
    "MARK_START",
    "MIN_PREFIX",
    "MODES",
    "RELATED",
    "STRONG",
    "TIERS",
    "WEAK",
    "FactHit",
    "NearestChunks",
    "SearchFilters",
    "SearchHit",
    "SearchResults",
    "above_floor",
    "answers_to",
    "as_you_type",
    "build_match",
    "by_meaning",
    "date_window",
    "find",
    "highlight_window",
    "restates",
    "says_nothing",
    "score_from_rank",
    "split_questions",
    "terms",
    "text_coverage",
    "too_short",
    "why_nothing",
]

if not TYPE_CHECKING:  # hidden from mypy, so a name the door does not export is an error there
    from clawback.core.doors import loader

    __getattr__ = loader(__name__, _HOMES)
    del loader  # the door's names are its own
