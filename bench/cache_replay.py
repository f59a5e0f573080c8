"""The Messages API's prompt caching, replayed over logged request bodies.

A loopback stand-in answers every request with fixed token counts, so what a conversation would
have cost has to be worked out from the requests themselves. This applies the caching rules
Anthropic documents for the Messages API:

* a request is a sequence of blocks in prefix order: every tool definition, every system
  block, then each message's content blocks (a string content is one block);
* a block marked ``cache_control`` is a breakpoint: the prefix ending there is written to the
  cache (when it holds at least :data:`MIN_CACHEABLE` tokens), unless it is already there;
* at each breakpoint the API looks for a cached prefix ending at that block or at one of the
  :data:`LOOKBACK` block boundaries before it; the longest found is read from the cache;
* a cache entry lives :data:`TTL_SECONDS` after its last use;
* cached reads cost :data:`READ_PRICE` of the input price, writes :data:`WRITE_PRICE`.

A block's tokens are estimated as clawback estimates prompt sizes (``estimate_tokens``); the markers
themselves are not part of a block's content (moving a breakpoint changes no prefix). Claude
Code's first system block, ``x-anthropic-billing-header: cc_version=...``, is attribution the
API reads as a header, not prompt text: it differs between processes (a per-process suffix), so
counting it would make every one-shot call miss even the system prompt, which it does not.
Tested on known cases in ``tests/test_cache_replay.py``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawback.core.tokens import estimate_tokens

MIN_CACHEABLE = 1024
LOOKBACK = 20
TTL_SECONDS = 300.0
READ_PRICE = 0.1
WRITE_PRICE = 1.25
BILLING_HEADER = "x-anthropic-billing-header:"


@dataclass(frozen=True)
class Block:
    tokens: int
    key: str  # the content, without its cache marker
    breakpoint: bool


@dataclass(frozen=True)
class Replayed:
    """One request's input tokens as the API would have counted them."""

    input: int
    cache_read: int
    cache_write: int

    @property
    def total(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @property
    def cost(self) -> float:
        """Its input cost in units of the uncached input price per token."""
        return self.input + WRITE_PRICE * self.cache_write + READ_PRICE * self.cache_read


def _without_marker(obj: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in obj.items() if k != "cache_control"}, sort_keys=True)


def _tokens(obj: Mapping[str, Any]) -> int:
    text = obj.get("text")
    if isinstance(text, str) and obj.get("type", "text") == "text":
        return max(1, estimate_tokens(text))
    return max(1, estimate_tokens(_without_marker(obj)))


def blocks_of(request: Mapping[str, Any]) -> list[Block]:
    """A request's blocks in the order the cache reads them: tools, system, messages."""
    found: list[Block] = []
    for tool in request.get("tools") or []:
        found.append(Block(_tokens(tool), _without_marker(tool), bool(tool.get("cache_control"))))
    system = request.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system:
        if str(block.get("text", "")).startswith(BILLING_HEADER):
            continue
        found.append(
            Block(_tokens(block), _without_marker(block), bool(block.get("cache_control")))
        )
    for message in request.get("messages") or []:
        content = message.get("content")
        role = str(message.get("role"))
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            key = role + ":" + _without_marker(block)
            found.append(Block(_tokens(block), key, bool(block.get("cache_control"))))
    return found


@dataclass
class PromptCache:
    """The cache entries of one account, by prefix: when each was last used."""

    entries: dict[str, float] = field(default_factory=dict)

    def replay(self, request: Mapping[str, Any], at: float = 0.0) -> Replayed:
        """What ``request``, sent at ``at`` seconds, reads and writes; the cache follows."""
        blocks = blocks_of(request)
        prefixes: list[str] = []
        ends: list[int] = []
        running, digest = 0, hashlib.sha256()
        for block in blocks:
            digest.update(block.key.encode())
            digest.update(b"\x00")
            prefixes.append(digest.copy().hexdigest())
            running += block.tokens
            ends.append(running)
        breakpoints = [i for i, block in enumerate(blocks) if block.breakpoint]
        self.entries = {k: t for k, t in self.entries.items() if at - t <= TTL_SECONDS}
        hit = -1
        for point in breakpoints:
            for i in range(point, max(-1, point - LOOKBACK), -1):
                if prefixes[i] in self.entries:
                    hit = max(hit, i)
                    break
        read = ends[hit] if hit >= 0 else 0
        if hit >= 0:
            self.entries[prefixes[hit]] = at
        last = breakpoints[-1] if breakpoints else -1
        written = 0
        if last >= 0 and ends[last] > read and ends[last] >= MIN_CACHEABLE:
            written = ends[last] - read
        for point in breakpoints:
            if ends[point] >= MIN_CACHEABLE and ends[point] > read:
                self.entries[prefixes[point]] = at
        total = ends[-1] if ends else 0
        return Replayed(total - read - written, read, written)


def replay_all(
    requests: Sequence[Mapping[str, Any]], times: Iterable[float] | None = None
) -> list[Replayed]:
    """Every request of one account, in order, through one cache."""
    cache = PromptCache()
    moments = list(times) if times is not None else [0.0] * len(requests)
    return [cache.replay(request, at) for request, at in zip(requests, moments, strict=True)]


@dataclass(frozen=True)
class Totals:
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @classmethod
    def of(cls, replayed: Iterable[Replayed]) -> Totals:
        items = list(replayed)
        return cls(
            sum(r.input for r in items),
            sum(r.cache_read for r in items),
            sum(r.cache_write for r in items),
            sum(r.cost for r in items),
        )

    @property
    def total(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @property
    def read_share(self) -> float:
        """The share of input tokens read from the cache."""
        return self.cache_read / self.total if self.total else 0.0

    @property
    def relative_cost(self) -> float:
        """Input cost relative to sending every token uncached."""
        return self.cost / self.total if self.total else 0.0
