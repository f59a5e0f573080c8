"""JSON from sources clawback does not control (transcripts, the ``claude`` CLI), made safe to use.

Two things in valid JSON break a program far from where they were read: a ``\\ud83d`` escape
without its pair decodes to a lone surrogate, which only fails later, when the string is encoded
for SQLite, a file or the terminal; and deep nesting (``[[[[...]]]]``) raises ``RecursionError``,
which is not a ``ValueError`` and slips past every ``except ValueError`` around ``json.loads``.
:func:`loads` turns the second into a ``ValueError`` and replaces lone surrogates with U+FFFD,
so what it returns can be stored and printed anywhere. Valid pairs (an escaped emoji) are joined
by the decoder and stay as they are.

It must stay cheap on clean input: the cleaning walk runs only when the text holds a
``\\uD8..``-``\\uDF..`` escape, which a ``str.find`` tells.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_DECODER = json.JSONDecoder()


class NestedTooDeep(ValueError):
    """The JSON nests deeper than Python's decoder can follow."""

    def __init__(self) -> None:
        super().__init__("JSON nested too deeply")


# A high surrogate escape not followed by a low one, or a low one not after a high one. An
# escaped backslash before "u" makes this match too, which only costs a needless walk.
_LONE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def may_hold_lone_surrogate(text: str) -> bool:
    """Whether decoding ``text`` could give a lone surrogate (a pair escaped whole cannot).

    Text written with ``ensure_ascii`` is full of escaped pairs (every emoji), so the cheap
    ``in`` tests come first and the regex only runs where a surrogate escape is.
    """
    return ("\\ud" in text or "\\uD" in text) and _LONE_ESCAPE.search(text) is not None


def loads(text: str, *, escapes: bool = True) -> Any:
    """``json.loads`` that raises only ``ValueError`` and returns only encodable strings.

    ``escapes=False`` promises that ``text`` holds no ``\\u`` at all (a caller that has the
    bytes can tell that faster than a search of the decoded text).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestedTooDeep() from None
    return clean(value) if escapes and may_hold_lone_surrogate(text) else value


def raw_decode(text: str, pos: int) -> tuple[Any, int]:
    """``JSONDecoder.raw_decode`` with the same guarantees as :func:`loads`."""
    try:
        value, end = _DECODER.raw_decode(text, pos)
    except RecursionError:
        raise NestedTooDeep() from None
    return (clean(value) if may_hold_lone_surrogate(text) else value), end


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text)


def clean(value: Any) -> Any:
    """``value`` (decoded JSON) with lone surrogates replaced in every string and key.

    Iterative, so it copes with any depth the decoder accepted.
    """
    if isinstance(value, str):
        return clean_text(value)
    if not isinstance(value, dict | list):
        return value
    stack: list[dict[Any, Any] | list[Any]] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    if _SURROGATE.search(item):
                        node[index] = clean_text(item)
                elif isinstance(item, dict | list):
                    stack.append(item)
            continue
        for key in [k for k in node if _SURROGATE.search(k)]:
            node[clean_text(key)] = node.pop(key)
        for key, item in node.items():
            if isinstance(item, str):
                if _SURROGATE.search(item):
                    node[key] = clean_text(item)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value
