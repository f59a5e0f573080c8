"""What recall hands around: a fact it recalls, a fragment of a past message, and the provider
the memory lifecycle supplies facts through. Plain records, no rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clawback.core.archive import entry_ref


@dataclass(frozen=True)
class RecalledFact:
    """One piece of knowledge a facts provider returns; higher ``score`` is more relevant."""

    text: str
    score: float = 0.0
    kind: str | None = None
    id: int | str | None = None


FactsProvider = Callable[[str, int], Sequence[RecalledFact]]
"""``(query, limit) -> facts``, best first. Supplied by the memory lifecycle
(``memory/facts/recall.py``)."""


@dataclass(frozen=True)
class RecallHit:
    """A message fragment found in the archive."""

    entry_id: int
    session_id: str | None
    source: str
    role: str
    timestamp: str | None
    text: str
    score: float
    uuid: str | None = None
    file_key: str | None = None
    line: int | None = None

    @property
    def ref(self) -> str | None:
        """What ``memory_get`` takes to read the whole message (``None``: its place unknown)."""
        if self.file_key is None or self.line is None:
            return None
        return entry_ref(self.source, self.file_key, self.line)
