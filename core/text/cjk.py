"""CJK search support: overlapping bigrams for the ``cjk`` column of the full-text index.

What goes into the column and why (runs, glued letters, NFKC) is in ``docs/formats.md``; the
query side is :mod:`clawback.core.search.query`.

This module must stay cheap for the text that has no CJK at all (nearly all of it): one
``isascii`` check, then one regex search. It never raises.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Letters of CJK scripts. Punctuation in their blocks (、。「」・ and the full-width forms) is
# left out on purpose: it separates words.
_CJK_CLASS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005-\u3007"  # 々 〆 〇
    "\u3041-\u3096\u309d-\u309f"  # Hiragana (without the spacing voiced sound marks)
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana (without the middle dot)
    "\u3105-\u312f\u31a0-\u31bf"  # Bopomofo
    "\u3131-\u318e"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # Han extension A
    "\u4e00-\u9fff"  # Han
    "\ua960-\ua97f"  # Hangul Jamo extended A
    "\uac00-\ud7a3"  # Hangul syllables
    "\ud7b0-\ud7ff"  # Hangul Jamo extended B
    "\uf900-\ufaff"  # Han compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\uffa0-\uffdc"  # half-width Hangul
    "\U00020000-\U0003134f"  # Han extensions B-G
)


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(any CJK letter, a run of them, a glued non-CJK tail), compiled on first non-ASCII text.

    Compiling these classes costs ~10 ms, which an ASCII-only ``clawback search`` never pays.
    The tail is letters and digits that are not CJK, as ``unicode61`` sees them (it splits at
    "_").
    """
    return (
        re.compile(f"[{_CJK_CLASS}]"),
        re.compile(f"[{_CJK_CLASS}]+"),
        re.compile(rf"[^\W_{_CJK_CLASS}]+"),
    )


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds any CJK letter."""
    return not text.isascii() and _patterns()[0].search(text) is not None


def cjk_bigrams(text: str) -> str | None:
    """The ``cjk`` column value for ``text``, or ``None`` when it has no CJK letters."""
    if text.isascii():
        return None
    first = _patterns()[0].search(text)
    if first is None:
        return None
    out: list[str] = []
    done = 0  # end of what was already emitted, so a fragment between two runs appears once
    for m in _patterns()[1].finditer(text, first.start()):
        start, end = m.span()
        glued = start
        while glued > done and _is_glued_char(text[glued - 1]):
            glued -= 1
        if glued < start:
            out.append(_normalize(text[glued:start]))
        out.extend(_run_tokens(_normalize(m.group())))
        tail = _patterns()[2].match(text, end)
        if tail is not None:
            out.append(_normalize(tail.group()))
            done = tail.end()
        else:
            done = end
    return " ".join(out)


def query_bigrams(term: str) -> str:
    """The phrase to match in the ``cjk`` column for a query term made of one CJK run.

    Bigrams only, without the trailing single character the index adds: the indexed run may go
    on after the term. Characters that are not CJK letters are ignored, and a term with several
    runs gives them one after another, so the caller should split terms at script boundaries
    (:func:`split_scripts`) and match each run on its own.
    """
    tokens: list[str] = []
    for m in _patterns()[1].finditer(_normalize(term)):
        run = m.group()
        tokens.extend(_bigrams(run) if len(run) > 1 else [run])
    return " ".join(tokens)


def split_scripts(term: str) -> list[tuple[str, bool]]:
    """Split ``term`` into ``(piece, is_cjk)`` pieces at the edges of its CJK runs.

    ``"Python编程"`` gives ``[("Python", False), ("编程", True)]``. Pieces keep their text as
    typed (not normalised); empty pieces are left out.
    """
    if not has_cjk(term):
        return [(term, False)] if term else []
    pieces: list[tuple[str, bool]] = []
    pos = 0
    for m in _patterns()[1].finditer(term):
        if m.start() > pos:
            pieces.append((term[pos : m.start()], False))
        pieces.append((m.group(), True))
        pos = m.end()
    if pos < len(term):
        pieces.append((term[pos:], False))
    return pieces


def _run_tokens(run: str) -> list[str]:
    # NFKC may have turned a CJK character into something else ("㍿" -> "株式会社" stays CJK,
    # but a compatibility form can become punctuation), so split the run again.
    tokens: list[str] = []
    for m in _patterns()[1].finditer(run):
        part = m.group()
        if len(part) == 1:
            tokens.append(part)
        else:
            tokens.extend(_bigrams(part))
            tokens.append(part[-1])
    return tokens


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _is_glued_char(char: str) -> bool:
    return char.isalnum() and char != "_"


def _normalize(text: str) -> str:
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)
