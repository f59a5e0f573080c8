"""Turning what a person types into the search box into a safe FTS5 ``MATCH`` expression.

The grammar is the one search boxes have taught everyone, and nothing else:

* words are AND'ed: ``sqlite wal`` finds entries with both;
* ``"a quoted phrase"`` is a phrase (an unbalanced quote runs to the end);
* ``foo*`` is a prefix (at least one character before the ``*``), ``"a phr"*`` too;
* ``-word`` and ``-"a phrase"`` exclude.

Everything a person types is data: each term becomes a quoted FTS5 string, so ``AND``, ``OR``,
``NOT``, ``NEAR``, parentheses, ``:``, ``^``, ``text:foo``, stray quotes and emoji are searched
for (or dropped as punctuation by the tokenizer), never parsed as syntax. :func:`build_match`
must never produce an expression SQLite rejects; ``None`` means there is nothing to search for
(empty, only punctuation, a lone ``*``, or only exclusions, which FTS5 cannot express) and the
caller shows no results.

Columns: a term without CJK letters is left unqualified, so it matches the ``text`` column and
also the ``cjk`` column, which holds the letters glued to CJK text ("学习Python编程" is one
token in ``text``). A CJK run is matched in ``cjk`` as the phrase of its bigrams
(``cjk : "你好 好世 世界"``), a single CJK character as a prefix (``cjk : "世"*``); a mixed term
is split at script boundaries and its pieces AND'ed, the letters glued to a CJK run apart from
the rest ("CLAUDE.mdファイル": ``"CLAUDE." AND "md" AND cjk : "ファ ァイ イル"``). See
:mod:`clawback.core.text.cjk`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from clawback.core.text import query_bigrams, split_scripts

CJK_COLUMN = "cjk"  # the bigram column of entries_fts
MAX_TERMS = 32  # each side; a pasted paragraph is not a query, and FTS5 limits expression depth

_SURROGATES_AND_NUL = re.compile("[\ud800-\udfff\x00]")
_WORD = re.compile(r"[^\W_]+")
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
_GLUED_HEAD = re.compile(r"[^\W_]*")  # letters and digits glued to a CJK run before them
_GLUED_TAIL = re.compile(r"[^\W_]*$")  # ... and to one after them


@dataclass(frozen=True, slots=True)
class Term:
    """One thing the person typed: a word or a phrase, maybe a prefix, maybe excluded."""

    text: str
    prefix: bool = False
    exclude: bool = False
    phrase: bool = False


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A query ready to run: the MATCH expression (``None``: no results) and what to highlight."""

    match: str | None
    terms: tuple[str, ...]


def parse_query(query: str, *, cjk_column: str | None = CJK_COLUMN) -> ParsedQuery:
    """Parse ``query`` once for both the expression and the highlight terms.

    ``cjk_column`` names the column holding :func:`~clawback.core.text.cjk.cjk_bigrams`; pass
    ``None`` for a table without one (CJK runs are then matched as prefixes of the tokens
    ``unicode61`` made of whole runs, which finds a word only at the start of its run).
    """
    return parse_terms(split_terms(query), cjk_column=cjk_column)


def parse_terms(terms: list[Term], *, cjk_column: str | None = CJK_COLUMN) -> ParsedQuery:
    """:func:`parse_query` of terms already split (and maybe rewritten, see ``search.plan``)."""
    includes: list[str] = []
    excludes: list[str] = []
    highlights: list[str] = []
    for term in terms:
        expression = term_expression(term, cjk_column)
        if expression is None:
            continue
        if term.exclude:
            if len(excludes) < MAX_TERMS:
                excludes.append(expression)
            continue
        if len(includes) >= MAX_TERMS:
            continue
        includes.append(expression)
        for word in _highlight_words(term):
            if word.casefold() not in (h.casefold() for h in highlights):
                highlights.append(word)
    if not includes:
        return ParsedQuery(None, ())
    match = " AND ".join(includes)
    if excludes:
        match = f"({match})" + "".join(f" NOT ({e})" for e in excludes)
    return ParsedQuery(match, tuple(highlights))


def build_match(query: str, *, cjk_column: str | None = CJK_COLUMN) -> str | None:
    """The FTS5 MATCH expression for ``query``, or ``None`` when nothing is searchable.

    For a table without the bigram column (``facts_fts``), pass ``cjk_column=None``.
    """
    return parse_query(query, cjk_column=cjk_column).match


def terms(query: str) -> list[str]:
    """What to highlight, case-insensitively, where ``snippet()`` cannot (CJK bigrams).

    The included words and phrases as typed, without quotes and ``*``, mixed-script terms
    split at script boundaries; excluded terms are not highlighted.
    """
    return list(parse_query(query).terms)


def score_from_rank(rank: float) -> float:
    """Map FTS5 ``bm25()`` (negative, more negative is better) onto 0..1, higher is better.

    ``x / (1 + x)`` with ``x = -rank`` is monotonic, needs no corpus statistics and keeps
    scores comparable between queries; anything that is not a finite match score maps to 0.
    """
    if math.isnan(rank):
        return 0.0
    x = -rank
    if x <= 0:
        return 0.0
    if math.isinf(x):
        return 1.0
    return x / (1.0 + x)


def split_terms(query: str, *, exclusions: bool = True) -> list[Term]:
    """Split ``query`` into terms: whitespace-separated words and quoted phrases.

    ``-word`` excludes, unless ``exclusions`` is off (in a sentence, "-r" is a command-line
    flag someone asks about); ``--word`` is a flag either way, never an exclusion.
    """
    query = _SURROGATES_AND_NUL.sub(" ", query)
    found: list[Term] = []
    i, n = 0, len(query)
    while i < n:
        if query[i].isspace():
            i += 1
            continue
        exclude = False
        following = query[i + 1] if i + 1 < n else " "
        if query[i] == "-" and (following == '"' or (exclusions and following not in "- \t\n")):
            exclude = True
            i += 1
        if query[i] == '"':
            close = query.find('"', i + 1)
            end = n if close < 0 else close
            text = query[i + 1 : end]
            i = end + 1
            prefix = False
            while i < n and query[i] == "*":
                prefix = True
                i += 1
            found.append(Term(text, prefix=prefix, exclude=exclude, phrase=True))
            continue
        end = i
        while end < n and not query[end].isspace():
            end += 1
        word = query[i:end]
        i = end
        stem = word.rstrip("*")
        found.append(Term(stem, prefix=len(stem) < len(word), exclude=exclude))
    return found


def _highlight_words(term: Term) -> list[str]:
    """What of ``term`` shows up in the text: its words, a phrase as a whole, CJK runs."""
    words: list[str] = []
    for piece, cjk in split_scripts(term.text):
        if cjk:
            words.append(piece)
        elif term.phrase:
            stripped = _EDGE_PUNCTUATION.sub("", piece)
            if stripped:
                words.append(" ".join(stripped.split()))
        else:
            words.extend(_WORD.findall(piece))
    return words


def term_expression(term: Term, cjk_column: str | None = CJK_COLUMN) -> str | None:
    """The expression for one term, or ``None`` when it has nothing the tokenizer keeps."""
    scripts = split_scripts(term.text)
    if cjk_column is not None and len(scripts) > 1:
        scripts = _unglue(scripts)
    pieces = [(piece, cjk) for piece, cjk in scripts if _has_token(piece)]
    if not pieces:
        return None
    parts: list[str] = []
    for index, (piece, cjk) in enumerate(pieces):
        prefix = term.prefix and index == len(pieces) - 1
        if cjk and cjk_column is None:
            parts.append(_quote(piece) + "*")
        elif cjk:
            phrase = query_bigrams(piece)
            if not phrase:
                continue
            single = " " not in phrase and len(phrase) == 1
            star = "*" if prefix or single else ""
            parts.append(f"{cjk_column} : {_quote(phrase)}{star}")
        else:
            parts.append(_quote(piece) + ("*" if prefix else ""))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def _unglue(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """Latin pieces with the letters glued to a CJK neighbour split off as pieces of their own.

    ``unicode61`` makes "CLAUDE.mdファイル" the tokens ``claude`` and ``mdファイル`` in the
    ``text`` column, and the ``cjk`` column holds ``md`` (the glued letters) with the bigrams.
    The phrase "CLAUDE.md" is in neither column, but ``"CLAUDE." AND "md"`` (unqualified: any
    column) and the bigrams are. The glued letters are those :func:`cjk_bigrams` copies into
    the ``cjk`` column: letters and digits touching the run, up to the first other character.
    """
    out: list[tuple[str, bool]] = []
    for index, (piece, cjk) in enumerate(pieces):
        if cjk:
            out.append((piece, cjk))
            continue
        before = index > 0 and pieces[index - 1][1]
        after = index + 1 < len(pieces) and pieces[index + 1][1]
        head = _GLUED_HEAD.match(piece).group() if before else ""  # type: ignore[union-attr]
        rest = piece[len(head) :]
        tail = _GLUED_TAIL.search(rest).group() if after else ""  # type: ignore[union-attr]
        middle = rest[: len(rest) - len(tail)]
        out.extend((part, False) for part in (head, middle, tail) if part)
    return out


def _quote(text: str) -> str:
    """An FTS5 string: inside double quotes everything is tokenized text, ``"`` is doubled."""
    return '"' + text.replace('"', '""') + '"'


def _has_token(text: str) -> bool:
    """Whether the ``unicode61`` tokenizer keeps anything of ``text`` (letters, numbers).

    An empty phrase makes an AND match nothing, so such pieces must be dropped, not sent.
    """
    return any(char.isalnum() for char in text)
