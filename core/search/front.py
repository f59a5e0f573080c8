"""The one search every client asks: the CLI, the app's live search, MCP ``memory_search``, the
chat's recall block and the hooks. Clients pass what the person asked; the rules live here.

* **Mode.** Hybrid when there is a vector side, keyword otherwise (:func:`default_mode`); a
  query asking for exact words only (a prefix, an exclusion) stays on keywords
  (:func:`by_meaning`).
* **As you type.** The last word is a prefix while a person is typing (:func:`as_you_type`), and
  a query of only short prefixes waits (:func:`too_short`): 1-3 letter prefixes take seconds on
  a big archive.
* **The floor.** Nothing above the floor says so: :data:`NOTHING` is the note every client shows
  (and the recall block injects nothing).
* **Facts.** Knowledge facts join the archive's hits in one list (:func:`find` with ``facts``).

Ranking itself is :func:`~.engine.search` and the modules it names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clawback.core.db import Queryable
from clawback.core.search.engine import (
    NearestChunks,
    SearchFilters,
    SearchHit,
    SearchResults,
    search,
)
from clawback.core.search.facts import FactHit, search_facts
from clawback.core.search.plan import plan_query
from clawback.core.text import has_cjk

NOTHING = "nothing in the archive matches this, by words or by meaning"
NOTHING_THEN = "nothing in the archive was said then"  # a question naming only a time
RELATED_ONLY = "nothing in the archive matches this closely; these are only related in meaning"
MIN_PREFIX = 3  # shorter prefixes match too much of a large archive to answer while typing
MIN_CJK = 2  # but two CJK characters are a word (世界), and the index has them as one bigram
FACT_SHARE = 4  # facts take at most a quarter of a mixed list


@dataclass
class Found:
    """What a search found: the archive's hits and, when asked for, the facts among them."""

    results: SearchResults
    facts: list[FactHit] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.results.hits and not self.facts

    def ranked(self, limit: int) -> list[SearchHit | FactHit]:
        """Hits and facts in one list, best score first, at most ``limit``."""
        mixed: list[SearchHit | FactHit] = [*self.results.hits, *self.facts]
        order = {id(item): index for index, item in enumerate(mixed)}
        mixed.sort(key=lambda item: (-item.score, order[id(item)]))
        return mixed[:limit]


def says_nothing(note: str | None) -> bool:
    """Whether ``note`` is the one :func:`find` gives a search that found nothing (not a note
    about how it ran, such as a keyword fallback): clients show it as the reason."""
    return note is not None and (note == NOTHING or note.startswith(NOTHING_THEN))


def why_nothing(results: SearchResults) -> str:
    """What to tell someone whose search found nothing: :data:`NOTHING`, or for a question naming
    only a time, the days it was read as."""
    note = results.note
    return note if note and says_nothing(note) else NOTHING


def default_mode(nearest: NearestChunks | None) -> str:
    """Hybrid once the home has vectors, else keyword."""
    return "hybrid" if nearest is not None else "keyword"


def by_meaning(query: str) -> bool:
    """Whether the vector side can serve ``query`` (not only a prefix or an exclusion)."""
    return not plan_query(query).exact_only


def as_you_type(query: str) -> str:
    """The query with its last word as a prefix (``comp`` finds "compaction") while typing.

    A trailing space, a closing quote or an explicit ``*`` means the word is finished, and an
    exclusion (``-word``) stays exact.
    """
    stripped = query.rstrip()
    if not stripped or stripped != query or stripped[-1] in '*"':
        return query
    if stripped.split()[-1].startswith("-") or stripped.count('"') % 2:
        return query  # an exclusion, or inside an open "phrase"
    return stripped + "*"


def too_short(query: str) -> bool:
    """Only prefixes, each shorter than ``MIN_PREFIX`` letters: not searched as you type."""
    terms = as_you_type(query).split()
    return bool(terms) and all(t.endswith("*") and _short(t.strip('*"-()')) for t in terms)


def _short(word: str) -> bool:
    return len(word) < (MIN_CJK if has_cjk(word) else MIN_PREFIX)


def find(
    db: Queryable,
    query: str,
    filters: SearchFilters | None = None,
    *,
    limit: int = 20,
    offset: int = 0,
    mode: str | None = None,
    nearest: NearestChunks | None = None,
    recency: bool = False,
    typing: bool = False,
    count: bool = False,
    facts: bool = False,
    archive: bool = True,
    meaning: str | None = None,
    **options: Any,
) -> Found:
    """Search as every client does.

    ``mode`` ``None`` is :func:`default_mode`. ``typing``: the person is still typing, so the
    last word is a prefix and only keywords run (a pause runs it again without ``typing``).
    ``facts``: knowledge facts that match join the list (at most a quarter of ``limit``
    unless the archive found none); ``archive`` ``False`` searches the facts alone.
    ``meaning``: what the vector side reads, when it is not the query (recall reads the recent
    messages). A result with nothing carries :data:`NOTHING` as its note (:data:`NOTHING_THEN`
    and the days for a question naming only a time), one with only related hits
    :data:`RELATED_ONLY`.
    """
    mode = mode or default_mode(nearest)
    if typing:
        query, mode = as_you_type(query), "keyword"
    if archive:
        results = search(
            db, query, filters, limit=limit, offset=offset, count=count, mode=mode,
            nearest=nearest, recency=recency, meaning=meaning, **options,
        )  # fmt: skip
    else:
        results = SearchResults(query=query, mode=mode)
    found = Found(results)
    if facts:
        cap = max(1, limit // FACT_SHARE) if results.hits else limit
        found.facts = search_facts(db, query, filters or SearchFilters(), cap)
    if found.empty and query.strip() and not results.note:
        # A question naming only a time found no session then: say which days were read.
        then = results.window
        results.note = f"{NOTHING_THEN} ({then.described()})" if then is not None else NOTHING
    elif results.related_only:
        results.note = results.note or RELATED_ONLY
    return found
