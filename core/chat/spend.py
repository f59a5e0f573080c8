"""What a chat costs: each turn's tokens, and a session's so far, read from its transcript.

Every reply line of a native transcript keeps the usage ``claude`` reported for its turn
(``input_tokens``: the uncached part of the prompt, ``cache_read_input_tokens``,
``cache_creation_input_tokens``, ``output_tokens``, and ``cost_usd``, Claude Code's own price of
the turn). The transcript being the source of truth, a session's totals are the sum of its
reply lines: no counter to drift or to lose in a rebuild. The JSON names are the archive's
(``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``).

A memory flush or a compaction is not a chat turn and stores no reply line, so its tokens are
not in these figures (the flush's notice says what share of its request the cache read).

This module only reads and adds up; it must never write anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawback.core.chat.transcript import Transcript
from clawback.core.claude import Usage

__all__ = ["SessionSpend", "describe_session", "describe_turn", "usage_json", "usage_of"]


def usage_json(usage: Usage, cost: float | None = None) -> dict[str, Any]:
    """A reply line's ``usage`` object: the API's own names, and the turn's cost."""
    line: dict[str, Any] = {
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "cache_read_input_tokens": usage.cache_read,
        "cache_creation_input_tokens": usage.cache_write,
    }
    if cost is not None:
        line["cost_usd"] = round(cost, 6)
    return line


def usage_of(raw: Mapping[str, Any] | None) -> tuple[Usage, float]:
    """A reply line's ``usage`` object read back (anything missing or odd counts 0)."""
    if not raw:
        return Usage(), 0.0
    cost = raw.get("cost_usd")
    number = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0
    return Usage.from_api(raw), max(0.0, number) if number == number else 0.0


@dataclass(frozen=True)
class SessionSpend:
    """A session's turns so far: how many answered, their tokens added up, their cost."""

    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0

    def plus(self, usage: Usage, cost: float = 0.0) -> SessionSpend:
        return SessionSpend(self.turns + 1, self.usage + usage, self.cost_usd + cost)

    @property
    def cache_read_share(self) -> float:
        return self.usage.cache_read_share

    @classmethod
    def of_transcript(cls, path: str | Path) -> SessionSpend:
        """Every reply's usage in the transcript at ``path``, added up."""
        spend = cls()
        for message in Transcript(path).read().messages:
            if message.role == "assistant" and message.usage:
                spend = spend.plus(*usage_of(message.usage))
        return spend

    def to_json(self) -> dict[str, Any]:
        usage = self.usage
        return {
            "turns": self.turns,
            "input_tokens": usage.input,
            "output_tokens": usage.output,
            "cache_read_tokens": usage.cache_read,
            "cache_write_tokens": usage.cache_write,
            "cache_read_share": round(self.cache_read_share, 4),
            "cost_usd": round(self.cost_usd, 6),
        }


def _count(tokens: int, short: bool) -> str:
    if short and tokens >= 10_000:
        return f"{tokens / 1000:.1f}k" if tokens < 100_000 else f"{tokens / 1000:.0f}k"
    return f"{tokens:,}"


def _price(cost: float) -> str:
    """``$0.0210``, or nothing when the turns carried no price (older transcripts)."""
    return f"${cost:.4f}" if cost > 0 else ""


def describe_session(session: SessionSpend) -> str:
    """``session: 12 turns, 92% from the cache, $0.3100``."""
    turns = "turn" if session.turns == 1 else "turns"
    text = f"session: {session.turns} {turns}, {session.cache_read_share:.0%} from the cache"
    price = _price(session.cost_usd)
    return f"{text}, {price}" if price else text


def describe_turn(
    usage: Usage, cost: float, session: SessionSpend | None = None, *, short: bool = False
) -> str:
    """``turn: 1,204 in · 45,310 cache read (97%) · 850 cache write · 312 out · $0.0210 ·
    session: 12 turns, 92% from the cache, $0.3100`` (``short``: counts as 45.3k)."""
    text = (
        f"turn: {_count(usage.input, short)} in · {_count(usage.cache_read, short)} cache read"
        f" ({usage.cache_read_share:.0%}) · {_count(usage.cache_write, short)} cache write"
        f" · {_count(usage.output, short)} out"
    )
    if price := _price(cost):
        text += f" · {price}"
    if session is not None and session.turns:
        text += " · " + describe_session(session)
    return text
