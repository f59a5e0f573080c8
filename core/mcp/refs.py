"""Refs: the opaque strings ``memory_search`` hands out and ``memory_get`` accepts.

A ref names a row of the index, never a path. Its forms:

* ``<source>:<file key>#L<line>``: the message on that line of an indexed transcript, or for
  ``memory:`` the chunk of a memory file that starts on that line (``memory:MEMORY.md#L12``);
  ``@<offset>`` after it continues a message too long for one answer;
* ``fact:<id>``: a knowledge fact;
* anything else is a session id (or id prefix, or session key): the session's outline.

Refs are resolved only through the index, so no ref can make the server read a file; a ref whose
file key could climb out of its folder (``..``, an absolute path, a backslash) is refused here,
before any lookup, so the answer says why instead of "not found".

Every ref handed out must be taken back: a long file key appears in a ref as its head, ``…`` and
a digest of the whole key (``sources.short_key``), one that reads like a path the check above
refuses as the digest alone (:func:`ref_key`); refs stay short and answers within their budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clawback.core.archive import FACT_PREFIX, entry_ref, fact_ref, refusal
from clawback.core.errors import UsageError
from clawback.core.records import Source

MAX_REF_CHARS = 1_000
MAX_ID = 2**63 - 1  # SQLite's largest integer: a bigger fact id names nothing
_ENTRY = re.compile(
    r"^(?P<source>[a-z-]+):(?P<key>.+)#L(?P<line>\d{1,9})(?:@(?P<offset>\d{1,12}))?$"
)
_FACT = re.compile(r"^[0-9]{1,30}$")
_SHORTENED = re.compile(r"^(?P<head>.*)…(?P<digest>[0-9a-f]{16})$", re.DOTALL)
_SOURCES = frozenset(source.value for source in Source)


class ToolInputError(UsageError):
    """A tool was called with input that cannot be answered as asked; one sentence for a model."""


class RefError(ToolInputError):
    """A ref that cannot name anything in the index."""


@dataclass(frozen=True)
class EntryRef:
    """One line of an indexed file (a message, or a memory chunk's first line)."""

    source: str
    file_key: str
    line: int
    offset: int = 0

    def __str__(self) -> str:
        return entry_ref(self.source, self.file_key, self.line, self.offset)

    def at(self, offset: int) -> EntryRef:
        return EntryRef(self.source, self.file_key, self.line, offset)


@dataclass(frozen=True)
class FactRef:
    id: int

    def __str__(self) -> str:
        return fact_ref(self.id)


@dataclass(frozen=True)
class SessionRef:
    session: str

    def __str__(self) -> str:
        return self.session


Ref = EntryRef | FactRef | SessionRef


def shortened(key: str) -> tuple[str, str] | None:
    """``(head, digest)`` of a key as :func:`ref_key` shortens it, or ``None``."""
    found = _SHORTENED.match(key)
    return (found["head"], found["digest"]) if found else None


def parse_ref(text: str) -> Ref:
    """The ref ``text`` stands for, or :class:`RefError` saying in one sentence what is wrong."""
    ref = (text or "").strip()
    if not ref:
        raise RefError("The ref is empty: pass a ref from memory_search results, or a session id.")
    if len(ref) > MAX_REF_CHARS or "\x00" in ref:
        raise RefError("That is not a ref: refs come from memory_search results.")
    if ref.startswith(FACT_PREFIX):
        number = ref[len(FACT_PREFIX) :]
        if not _FACT.match(number):
            raise RefError(f"{ref!r} is not a fact ref: fact refs look like 'fact:12'.")
        if int(number) > MAX_ID:
            raise RefError(f"Nothing in the index has the ref {ref!r}: no fact has that number.")
        return FactRef(int(number))
    found = _ENTRY.match(ref)
    if found and found["source"] in _SOURCES:
        key = found["key"]
        _check_key(ref, key)
        return EntryRef(found["source"], key, int(found["line"]), int(found["offset"] or 0))
    head = ref.split(":", 1)[0]
    if head in _SOURCES and "#L" not in ref:
        raise RefError(
            f"{ref!r} is not a complete ref: message refs end in '#L<line>', as memory_search "
            "returns them."
        )
    if "/" in ref or "\\" in ref:
        raise RefError(
            f"{ref!r} looks like a path: memory_get reads only what the index holds, through refs "
            "from memory_search or a session id."
        )
    return SessionRef(ref)


def _check_key(ref: str, key: str) -> None:
    why = refusal(key)
    if why:
        raise RefError(f"{ref!r} is refused: {why}.")
