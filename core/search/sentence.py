"""Whether a query is a question or a sentence rather than a few keywords.

Search reads the two apart (:mod:`.plan`: a question is also answered by its content words), and
so does the date reading (:mod:`.dates`: a weekday named alone is a time in "what did we do
Tuesday?", a word in the keywords "zebracorn Tuesday"): both ask here.
"""

from __future__ import annotations

from clawback.core.search.query import Term, split_terms
from clawback.core.text import STOPWORDS

QUESTION_STARTS = frozenset(
    """who whom whose what when where which why how did do does is are was were can could should
    would will have has had shall may might""".split()  # noqa: SIM905
)
NATURAL_WORDS = 5  # this many plain words read as a sentence even without a question mark
NATURAL_STOPWORDS = 2  # ... and so do this many stop words


def is_natural(query: str, plain: list[Term] | None = None) -> bool:
    """A question or a sentence rather than a few keywords. ``plain``: the query's plain words
    (no phrase, prefix or exclusion), when the caller has split it already."""
    if plain is None:
        plain = [t for t in split_terms(query) if not (t.phrase or t.prefix or t.exclude)]
    if not plain:
        return False
    words = [t.text.lower().strip("?!.,;:") for t in plain]
    return (
        query.rstrip().endswith("?")
        or words[0] in QUESTION_STARTS
        or len(words) >= NATURAL_WORDS
        or sum(word in STOPWORDS for word in words) >= NATURAL_STOPWORDS
    )
