"""How a message of the index is named where it must be named back: the ref ``memory_get``
takes, ``<source>:<file key>#L<line>`` (``fact:<id>`` for a fact), written here for every place
that hands one out (the MCP server's answers, the recall block's lines), and a file key
shortened where it must stay short.

A long key appears as its head, ``…`` and a digest of the whole key (:func:`short_key`); a key
that reads like a path out of its folder (``..``, absolute, a drive) as the digest alone
(:func:`ref_key`), since ``memory_get`` refuses such a ref before any lookup
(``core/mcp/refs.py`` parses refs). Pure functions: no IO.
"""

from __future__ import annotations

import hashlib
import re

FACT_PREFIX = "fact:"
KEY_CHARS = 160  # longer keys (deep folders, long names) are shortened where shown as ids
HEAD_CHARS = 48
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


def key_digest(key: str) -> str:
    """16 hex digits telling one key from another, where a key cannot be stored or shown whole."""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def short_key(key: str) -> str:
    """``key``, or past ``KEY_CHARS`` its head, ``…`` and its digest: what stands for a key
    where it must stay short (an MCP ref, a session id made from a file's key)."""
    return key if len(key) <= KEY_CHARS else f"{key[:HEAD_CHARS]}…{key_digest(key)}"


def refusal(key: str) -> str | None:
    """Why a file key in a ref is refused (it reads like a path out of its folder), or ``None``."""
    parts = re.split(r"[\\/]", key)
    if key.startswith(("/", "\\", "~")) or _WINDOWS_DRIVE.match(key) or ".." in parts:
        return (
            "a ref names a file inside the archive or the memory workspace, never an absolute "
            "path or '..'"
        )
    return None


def ref_key(file_key: str) -> str:
    """How ``file_key`` is written in a ref: whole, or shortened to a head and a digest."""
    short = short_key(file_key)
    return short if refusal(short) is None else f"…{key_digest(file_key)}"


def entry_ref(source: str, file_key: str, line: int, offset: int = 0) -> str:
    """The ref of the message on ``line`` of an indexed file (``@offset``: a continuation)."""
    tail = f"@{offset}" if offset else ""
    return f"{source}:{ref_key(file_key)}#L{line}{tail}"


def fact_ref(fact_id: int) -> str:
    """The ref of a knowledge fact: ``fact:<id>``."""
    return f"{FACT_PREFIX}{fact_id}"
