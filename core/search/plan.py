"""Reading a query as people write it: a few keywords, or a question in plain words.

``fts5 tokenizer`` wants both words: the *strict* expression ANDs everything typed, as the
search box always has. "why did the colors look different in VS Code than in Ghostty?" wants
the message about VS Code, Ghostty and colors, not one that says "why", "did" and "the": a
question or a sentence (:func:`is_natural`) is also answered by a *loose* expression, its
content words (:mod:`~clawback.core.text.stopwords` dropped) OR-ed and ranked by BM25, and so is
any query whose strict expression finds too little (search decides that). What a person marked
as exact stays exact in both: a ``"quoted phrase"`` or ``prefix*`` is required, ``-word``
excluded. A date the question names ("last week", "on May 3") becomes a :class:`DateWindow`
search favours, and its words are not searched for; a question that names a time and nothing
else to look for ("what did we do last week?") is :attr:`QueryPlan.when_only`: what was said
then is its answer (:mod:`.when`).

The vector side reads :attr:`QueryPlan.meaning`: the query without quotes and operators, so a
quoted title does not switch meaning off. Only a prefix or an exclusion, which vectors cannot
honour, makes a query exact-only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from clawback.core.search.dates import DateWindow, date_window
from clawback.core.search.query import MAX_TERMS, Term, parse_terms, split_terms, term_expression
from clawback.core.search.sentence import is_natural
from clawback.core.text import STOPWORDS

#: Words that ask what went on rather than about a topic: with a date and nothing else, "what
#: happened on May 3?" and "what was I working on last week?" ask for that time itself.
ACTIVITY_WORDS = frozenset(
    """happen happened happening happens work worked working done going went busy talk talked
    discuss discussed chat chatted accomplish accomplished achieve achieved session sessions
    conversation conversations show recap summary summarize summarise""".split()  # noqa: SIM905
)
#: Words that ask what was chosen ("what did we decide about the cache?", "which bundler did we
#: pick?"): in a conversation with Claude, the person settles it, so their own turns answer it
#: (:attr:`QueryPlan.asks_decision`). "go with" / "went with" count too.
DECISION_WORDS = frozenset(
    """decide decided decides deciding decision decisions pick picked picking choose chose chosen
    choosing settle settled agree agreed want wanted prefer preferred""".split()  # noqa: SIM905
)
_GO_WITH = re.compile(r"\b(?:go|goes|going|gone|went)\s+with\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """What to run for one query; ``None`` expressions mean that side finds nothing."""

    query: str
    strict: str | None  # every typed term AND-ed (a question's stop words left out)
    loose: str | None  # content words OR-ed, exact parts required
    natural: bool  # a question or sentence: the loose expression always runs
    meaning: str  # what the vector side embeds
    exact_only: bool  # a prefix or an exclusion: keyword search alone
    required: bool  # a phrase or a prefix: every keyword hit holds what was asked for exactly
    highlight: tuple[str, ...]
    window: DateWindow | None
    when_only: bool = False  # a time and nothing to look for: what was said then answers it
    # The query with the date's own words required ("Tuesday" AND the keywords, or AND any of
    # a question's content words): a message saying them is found beside the window's, whenever
    # it was said (search.candidates). Read like ``strict`` for keywords, like ``loose`` for a
    # question.
    said: str | None = None
    asks_decision: bool = False  # a question about what was chosen: the person's turns answer


def plan_query(query: str, *, today: date | None = None) -> QueryPlan:
    """The plan for ``query``; never raises, whatever was typed."""
    window = date_window(query, today)
    # The date's words are not searched for ("on May 3" would OR in "may" and "3").
    searched = query if window is None else query[: window.span[0]] + query[window.span[1] :]
    terms = split_terms(searched)
    plain = [t for t in terms if not (t.phrase or t.prefix or t.exclude)]
    natural = is_natural(query, plain)
    if natural:
        # In a sentence, "-r" is the flag asked about ("what happened when I restarted with
        # -r?"), not a word to exclude; a quoted -"phrase" still excludes.
        terms = split_terms(searched, exclusions=False)
    typed = parse_terms(terms)
    kept = [_searched(t) for t in terms if t.exclude or t.phrase or t.prefix or _content(t)]
    content = parse_terms(kept)
    strict = content.match if natural else typed.match
    when_only = window is not None and all(_activity(t) for t in terms)
    said = None
    if window is not None and window.words and not when_only:
        dated = [Term(word, phrase=True) for word in window.words]
        said = _loose([*kept, *dated]) if natural else parse_terms([*terms, *dated]).match
    return QueryPlan(
        query=query,
        strict=strict,
        loose=_loose(kept),
        natural=natural,
        meaning=" ".join(query.replace('"', "").split()) or query,
        exact_only=any(t.prefix or t.exclude for t in terms),
        required=any((t.phrase or t.prefix) and not t.exclude for t in terms),
        highlight=content.terms or typed.terms,
        window=window,
        when_only=when_only,
        said=said,
        asks_decision=natural and _asks_decision(searched, plain),
    )


def _content(term: Term) -> bool:
    """Whether a plain word says something about the topic (not a stop word, not one letter)."""
    word = _word(term)
    return len(word) > 1 and word not in STOPWORDS


# What an English contraction's head is ("didn't" is "did", "we're" is "we"): with the head a
# stop word, so is the whole word, as in every stop list; "won't" and "can't" drop more.
_CONTRACTIONS = ("n't", "'s", "'re", "'ve", "'ll", "'d", "'m")
_IRREGULAR = {"won't": "will", "can't": "can", "shan't": "shall"}


def _word(term: Term) -> str:
    """A plain word as it counts for the topic: lower case, without the punctuation around it,
    a contraction or possessive as its head ("tokenizer's" is "tokenizer")."""
    word = term.text.lower().replace("’", "'").strip("?!.,;:'\"()[]").lstrip("-")
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    for ending in _CONTRACTIONS:
        if word.endswith(ending) and len(word) > len(ending):
            return word.removesuffix(ending)
    return word


def _searched(term: Term) -> Term:
    """A plain word as search looks for it: "tokenizer's" as ``tokenizer`` (FTS5 reads the
    text "tokenizer's" as the two tokens ``tokenizer s``, so the word as typed would match only
    messages that say it with the same ending); anything else as typed."""
    if term.phrase or term.prefix or term.exclude or "'" not in term.text.replace("’", "'"):
        return term
    return Term(_word(term))


def _asks_decision(query: str, plain: list[Term]) -> bool:
    """Whether a question asks what was chosen (:data:`DECISION_WORDS`, "go with")."""
    return any(_word(t) in DECISION_WORDS for t in plain) or _GO_WITH.search(query) is not None


def _activity(term: Term) -> bool:
    """A plain word that says nothing about what to look for, only that something went on (or
    no word at all: the star typing puts on the last word, when that word was the date's)."""
    if not any(char.isalnum() for char in term.text):
        return True
    if term.phrase or term.prefix or term.exclude:
        return False
    return not _content(term) or _word(term) in ACTIVITY_WORDS


def light_stem(word: str) -> str:
    """A word without its English inflection ("picked" and "picking" are "pick", "moved" is
    "move"), or the word itself; never shorter than 4 letters. Lower case ASCII words only.

    Used to tell whether a message holds a question's word (:mod:`.coverage`), not to search:
    ``code*`` and ``look*`` match too much for BM25 to rank well (docs/search-quality.md)."""
    word = word.lower()
    if not (word.isascii() and word.isalpha()):
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and not word.endswith("ss"):
            stem = word[: -len(suffix)]
            if len(stem) >= 4:
                return stem
            if suffix in ("ed", "es") and len(stem) + 1 >= 4:
                return word[:-1]  # "moved" -> "move", "makes" -> "make"
    return word


def _loose(kept: list[Term]) -> str | None:
    """``required AND (word OR word ...)``, minus the exclusions; ``None`` with no words."""
    required: list[str] = []
    optional: list[str] = []
    excluded: list[str] = []
    for term in kept:
        typed = term.phrase or term.prefix or term.exclude
        expression = term_expression(term)
        if expression is None:
            continue
        if term.exclude:
            excluded.append(expression)
        elif typed:
            required.append(expression)
        elif expression not in optional:
            optional.append(expression)
    required, optional = required[:MAX_TERMS], optional[:MAX_TERMS]
    if not optional:
        return None  # nothing to rank by: the strict expression is the whole query
    match = " OR ".join(optional)
    if required:
        # The words only rank: "a" AND ("b" OR "c" OR "a") holds every "a", with or without them.
        match = " AND ".join(required) + f" AND ({match} OR {required[0]})"
    if excluded:
        match = f"({match})" + "".join(f" NOT ({e})" for e in excluded[:MAX_TERMS])
    return match
