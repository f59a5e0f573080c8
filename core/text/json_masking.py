"""Masking a decoded JSON value (a Claude Code line, for its kept copy) as the index masks text.

The index masks what it stores with :func:`~clawback.core.text.masking.mask_secrets`: an
entry's text, where a tool call's arguments are rendered as ``key: value`` lines and masked
whole. A kept copy holds the line itself, so its strings are masked one by one, each as the
index would see it: a value under a key that names a secret (``password``, ``api_key``,
``Authorization``...) is masked with its key before it (``password: hunter2hunter2``, which
the value alone would not give away); every dictionary key is masked too (a key can hold a
token); a list of lines (an edit's ``structuredPatch``) that holds a private key block has the
block's lines masked whole. Nothing is kept as it was for its key's name alone: only a thinking
block's ``signature`` and a redacted thinking block's ``data``, opaque values the API made,
which Claude Code must send back unchanged and the index never holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice
from typing import Any

from clawback.core.text.token_runs import MASK

Mask = Callable[[str], str]

#: The shortest string :func:`~clawback.core.text.masking.mask_secrets` may change.
SHORTEST = 8
_RUN = 20  # mask_secrets' shortest token run (an AWS key id): shorter plain text stays
# The words that make a key's value a secret in mask_secrets' keyword assignments (kept in step
# with masking._ASSIGN and _AUTH_HEADER): "password: x" masks x where "x" alone stays.
_NAMES_A_SECRET = re.compile(
    r"token|secret|passw(?:or)?d|passphrase|(?:api|access|secret|private)[_\-]?key|authorization",
    re.IGNORECASE,
)
# Opaque values the API made that Claude Code must send back as they were, per block type.
_VERBATIM = {"thinking": frozenset({"signature"}), "redacted_thinking": frozenset({"data"})}
_NOTHING: frozenset[str] = frozenset()
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_LINES_MAX = 1000  # a key block's lines, at most; an unterminated one is masked this far

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_KEYS: dict[str, tuple[str, bool]] = {}  # a key -> (masked key, names a secret); few distinct


def _key(key: str, mask: Mask) -> tuple[str, bool]:
    known = _KEYS.get(key)
    if known is None:
        known = (mask(key) if len(key) >= SHORTEST else key, bool(_NAMES_A_SECRET.search(key)))
        if len(_KEYS) < 10_000:
            _KEYS[key] = known
    return known


def _with_key(key: str, masked_key: str, value: str, mask: Mask) -> str:
    """``value`` masked as the index masks the line ``key: value``."""
    line = f"{key}: {value}"
    masked = mask(line)
    if masked == line:
        return value
    head = masked_key + ": "
    return masked[len(head) :] if masked.startswith(head) else MASK


def mask_json(value: Any, mask: Mask) -> tuple[Any, bool]:
    """``value`` with every string and key masked as the index would; and whether anything
    changed. Nothing is copied unless something changed: this runs for every string of every
    Claude Code line, so strings are masked in the loops, not by a call each."""
    if isinstance(value, str):
        masked = mask(value)
        return masked, masked != value
    if isinstance(value, dict):
        return _mask_dict(value, mask)
    if isinstance(value, list):
        return _mask_list(value, mask)
    return value, False


def _mask_dict(value: dict[str, Any], mask: Mask) -> tuple[dict[str, Any], bool]:
    # The hot loop of every kept line: one cache lookup per key, mask() only where it may act.
    kind = value.get("type")
    verbatim = _VERBATIM.get(kind, _NOTHING) if kind.__class__ is str else _NOTHING
    known = _KEYS.get
    uuid = _UUID.fullmatch
    out: dict[str, Any] | None = None
    at = -1
    for key, item in value.items():
        at += 1
        seen = known(key)
        new_key, secret_name = seen if seen is not None else _key(key, mask)
        new: Any = item
        if isinstance(item, str):
            if secret_name:
                if item and key not in verbatim:
                    new = _with_key(key, new_key, item, mask)
            elif (
                # what mask_secrets returns unread: under 20 characters with nothing a keyword
                # or a URL hangs on, or a UUID (ids are searched for, never masked); both
                # checked in tests/text/test_json_masking.py
                (len(item) >= _RUN or "=" in item or ":" in item)
                and len(item) >= SHORTEST
                and not (len(item) == 36 and uuid(item))
                and key not in verbatim
            ):
                new = mask(item)
                if new == item:
                    new = item
        elif isinstance(item, dict):
            new, _ = _mask_dict(item, mask)
        elif isinstance(item, list):
            new, _ = _mask_list(item, mask)
        if out is None:
            if new is item and new_key == key:
                continue
            out = dict(islice(value.items(), at))  # everything before was kept as it was
        out[_free(out, new_key)] = new
    return (out if out is not None else value), out is not None


def _free(out: dict[str, Any], key: str) -> str:
    """``key``, or ``key #2``... when masking made two keys one (both values are kept)."""
    if key not in out:
        return key
    n = 2
    while f"{key} #{n}" in out:
        n += 1
    return f"{key} #{n}"


def _mask_list(value: list[Any], mask: Mask) -> tuple[list[Any], bool]:
    items: list[Any] | None = None
    pem_until = -1
    for at, item in enumerate(value):
        if isinstance(item, str):
            if at <= pem_until:
                new: Any = MASK if item.strip() else item
            elif "PRIVATE KEY" in item and _starts_a_key_block(item):
                pem_until = _key_block_end(value, at)
                new = mask(item)
            elif len(item) < SHORTEST:
                continue
            else:
                new = mask(item)
        elif isinstance(item, (dict, list)):
            new, _ = mask_json(item, mask)
        else:
            continue
        if new is not item and new != item:
            if items is None:
                items = list(value)
            items[at] = new
    return (items if items is not None else value), items is not None


def _starts_a_key_block(line: str) -> bool:
    """Whether ``line`` opens a private key block that does not close in the same string
    (one that does is masked whole by ``mask_secrets`` itself)."""
    begin = _PEM_BEGIN.search(line)
    return begin is not None and not _PEM_END.search(line, begin.end())


def _key_block_end(lines: list[Any], begin: int) -> int:
    """The index of the last line of the key block whose first line is ``lines[begin]``: the
    line before its END line (which ``mask_secrets`` leaves as it is), else as far as a block
    can go."""
    last = min(len(lines), begin + _PEM_LINES_MAX) - 1
    for at in range(begin + 1, last + 1):
        line = lines[at]
        if not isinstance(line, str):
            return at - 1
        if _PEM_END.search(line):
            return at - 1
    return last
