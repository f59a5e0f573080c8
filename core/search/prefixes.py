"""Prefix expansion: ``"sear"*`` becomes an OR of the few indexed words that start so.

Kept apart from search so the rewrite, which reads the MATCH expression string by string, can
be read and tested on its own. It must accept any :func:`~clawback.core.search.query.build_match`
output, whatever a person typed (quotes, the last code point, the edge of the surrogate range),
and never produce an expression SQLite rejects.
"""

from __future__ import annotations

from clawback.core.db import Queryable

MAX_PREFIX_EXPANSION = 32


def expand_prefixes(db: Queryable, match: str) -> str:
    """Rewrite ``"sear"*`` as ``("search" OR "searched")`` when few indexed terms start so.

    FTS5 answers a prefix by merging the doclists of every matching term into memory before
    the first row comes out; an OR of the same terms is read lazily, newest first, so it stops
    at the score cap like any word. The term list comes from the index's own vocabulary
    (``temp.entries_vocab``, made by ``db.connect``: a B-tree range, no doclists read). Many
    terms, or none: the prefix stays as it was. ``match`` is :func:`build_match`'s output, read
    string by string (``""`` inside a string is a quote), so any typed text is safe.
    """
    if '"*' not in match:
        return match
    out: list[str] = []
    done = 0
    for start, end in _strings(match):
        if not match.startswith("*", end) or match[max(0, start - 2) : start] == ": ":
            continue  # not a prefix, or a CJK column's bigram prefix
        expanded = _expansion(db, match[start + 1 : end - 1].replace('""', '"').lower())
        if expanded is not None:
            out += [match[done:start], expanded]
            done = end + 1
    return "".join(out) + match[done:]


def _strings(match: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each FTS5 string in ``match``: ``end`` is just past its closing quote."""
    spans = []
    at = match.find('"')
    while at >= 0:
        close = match.find('"', at + 1)
        while close >= 0 and match.startswith('""', close):
            close = match.find('"', close + 2)
        if close < 0:
            break
        spans.append((at, close + 1))
        at = match.find('"', close + 1)
    return spans


def _expansion(db: Queryable, prefix: str) -> str | None:
    """``("term" OR ...)`` for the indexed terms starting with ``prefix``, if few."""
    if not prefix:
        return None
    last = ord(prefix[-1])
    bounds: tuple[str, ...] = (prefix,)
    if last < 0x10FFFF:  # the last code point has no successor: read on and filter below
        following = last + 1 if last + 1 not in range(0xD800, 0xE000) else 0xE000
        bounds = (prefix, prefix[:-1] + chr(following))  # never a lone surrogate for SQLite
    upper = " AND term < ?" if len(bounds) == 2 else ""
    found = [
        row[0]
        for row in db.execute(
            f"SELECT term FROM temp.entries_vocab WHERE term >= ?{upper} LIMIT ?",
            (*bounds, MAX_PREFIX_EXPANSION + 1),
        )
    ]
    found = [term for term in found if term.startswith(prefix)]
    if not found or len(found) > MAX_PREFIX_EXPANSION:
        return None
    return "(" + " OR ".join('"' + term.replace('"', '""') + '"' for term in found) + ")"
