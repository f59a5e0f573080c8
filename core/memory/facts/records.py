"""The records of the knowledge facts: a stored fact, a fact to store, what the rules decided
and what was done, and the text form every stored fact goes through.

Apart from the store so the rules (:mod:`.decide`), recall (:mod:`.recall`) and the clients that
only show facts share them without the writing code. Stored text must always have been through
:func:`as_stored` (secrets masked).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from clawback.core.errors import UsageError
from clawback.core.memory.facts.rules import FACT_TYPES, Action, Comparison
from clawback.core.text import mask_secrets


@dataclass
class Fact:
    id: int
    type: str
    content: str
    context: str | None
    session_id: str | None
    message_id: str | None
    conversation_id: int | None
    created_at: str
    updated_at: str
    superseded_by: int | None
    edited: bool
    source_ts: str | None

    @property
    def active(self) -> bool:
        return self.superseded_by is None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS = (
    "id, type, content, context, session_id, message_id, conversation_id, created_at, "
    "updated_at, superseded_by, edited, source_ts"
)


def fact_from_row(row: Sequence[Any]) -> Fact:
    fact = Fact(*row)
    fact.edited = bool(fact.edited)
    return fact


@dataclass(frozen=True)
class NewFact:
    """A fact to store; where it came from travels with it."""

    type: str
    content: str
    context: str = ""
    session_id: str | None = None
    message_id: str | None = None
    conversation_id: int | None = None
    source_ts: str | None = None


@dataclass(frozen=True)
class Decision:
    """What the update rules make of a new fact; ``match`` is the existing fact it concerns."""

    action: Action
    match: Fact | None = None
    comparison: Comparison | None = None

    @property
    def reason(self) -> str:
        return self.comparison.reason if self.comparison else "no similar fact"


@dataclass(frozen=True)
class FactChange:
    """One applied decision. ``fact_id`` is the fact now holding the knowledge (the new one
    for ADD and SUPERSEDE, the updated or already-known one for UPDATE and NONE);
    ``previous_id`` the superseded fact, for SUPERSEDE."""

    action: Action
    fact_id: int
    previous_id: int | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "fact_id": self.fact_id,
            "previous_id": self.previous_id,
            "reason": self.reason,
        }


def as_stored(text: str | None) -> str:
    """Masked, on one line, trimmed: what gets stored and indexed."""
    return " ".join(mask_secrets(text or "").split())


def same_source(fact: Fact, new: NewFact) -> bool:
    """Both were drawn from the same message (facts without a message never match)."""
    return fact.message_id is not None and fact.message_id == new.message_id


def check_type(kind: str) -> str:
    if kind not in FACT_TYPES:
        raise UsageError(f"unknown fact type {kind!r} (use {', '.join(FACT_TYPES)})")
    return kind
