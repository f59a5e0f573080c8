"""The prompt-cache replay behind ``bench/chat_cost.py``, on cases whose answer is known from
the caching rules: a prefix up to a breakpoint, 20 blocks of lookback, 1,024 tokens at least,
five minutes of life, reads at 0.1x and writes at 1.25x."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from clawback.core.tokens import CHARS_PER_TOKEN

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from cache_replay import (
    MIN_CACHEABLE,
    PromptCache,
    Replayed,
    Totals,
    blocks_of,
    replay_all,
)

MARK = {"type": "ephemeral"}


def text(tokens: int, tag: str, *, mark: bool = False) -> dict[str, Any]:
    """A text block of exactly ``tokens`` estimated tokens (clawback's estimator's size)."""
    size = CHARS_PER_TOKEN * tokens
    block: dict[str, Any] = {"type": "text", "text": (tag + "x" * size)[:size]}
    if mark:
        block["cache_control"] = MARK
    return block


def request(*turns: list[dict[str, Any]], system: int = 0) -> dict[str, Any]:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": blocks}
        for i, blocks in enumerate(turns)
    ]
    body: dict[str, Any] = {"messages": messages}
    if system:
        body["system"] = [text(system, "sys", mark=True)]
    return body


def test_blocks_come_in_cache_order_and_markers_change_no_content() -> None:
    body = {
        "tools": [{"name": "memory_search", "input_schema": {}}],
        "system": "be brief",
        "messages": [{"role": "user", "content": "hello"}],
    }
    tool, system, message = blocks_of(body)
    assert "memory_search" in tool.key and "be brief" in system.key
    assert message.key == 'user:{"text": "hello", "type": "text"}'
    marked = blocks_of({"messages": [{"role": "user", "content": [text(5, "a", mark=True)]}]})
    plain = blocks_of({"messages": [{"role": "user", "content": [text(5, "a")]}]})
    assert marked[0].key == plain[0].key and marked[0].breakpoint and not plain[0].breakpoint


def test_claude_codes_billing_header_is_no_prompt_text() -> None:
    """It differs per process; one-shot calls still read the system prompt from the cache."""

    def call(suffix: str) -> dict[str, Any]:
        header = {"type": "text", "text": f"x-anthropic-billing-header: cc_version=2.1.{suffix};"}
        return {"system": [header, text(1100, "sys", mark=True)],
                "messages": [{"role": "user", "content": [text(50, suffix, mark=True)]}]}  # fmt: skip

    assert replay_all([call("daf"), call("712")])[1].cache_read == 1100


def test_a_first_request_writes_its_prefix_and_the_same_again_reads_it() -> None:
    body = request([text(2000, "a", mark=True)])
    first, second = replay_all([body, body])
    assert first == Replayed(0, 0, 2000)
    assert second == Replayed(0, 2000, 0)


def test_a_conversation_that_extends_its_last_request_reads_all_of_it() -> None:
    one = request([text(1500, "q1", mark=True)])
    two = request([text(1500, "q1")], [text(300, "r1")], [text(200, "q2", mark=True)])
    replayed = replay_all([one, two])
    assert replayed[1] == Replayed(0, 1500, 500)
    totals = Totals.of(replayed[1:])
    assert totals.read_share == 1500 / 2000
    assert totals.relative_cost == (0.1 * 1500 + 1.25 * 500) / 2000


def test_the_whole_conversation_as_one_new_block_each_time_is_never_read() -> None:
    """clawback's one-shot turn: summary, recall, history and message in one new block."""
    one = request([text(1500, "everything up to q1", mark=True)], system=1100)
    two = request([text(2000, "everything up to q2", mark=True)], system=1100)
    replayed = replay_all([one, two])
    assert replayed[1] == Replayed(0, 1100, 2000)  # only the system prompt is read back


def test_a_change_in_the_middle_reads_only_what_comes_before_it() -> None:
    base = [[text(500, "q1")], [text(500, "r1")], [text(500, "q2", mark=True)]]
    changed = [[text(500, "q1")], [text(500, "R1!")], [text(500, "q2", mark=True)]]
    replayed = replay_all([request(*base, system=1100), request(*changed, system=1100)])
    assert replayed[1] == Replayed(0, 1100, 1500)


def test_less_than_the_minimum_is_never_cached() -> None:
    small = request([text(MIN_CACHEABLE - 1, "a", mark=True)])
    assert replay_all([small, small]) == [Replayed(MIN_CACHEABLE - 1, 0, 0)] * 2


def test_the_lookback_reaches_twenty_block_boundaries() -> None:
    def grown(extra: int) -> dict[str, Any]:
        return request([text(1200, "start"), *(text(10, f"b{i}") for i in range(extra - 1)),
                        text(10, "last", mark=True)])  # fmt: skip

    start = request([text(1200, "start", mark=True)])
    near = replay_all([start, grown(19)])[1]  # the cached boundary 19 blocks back
    far = replay_all([start, grown(20)])[1]  # 20 back: out of reach
    assert near.cache_read == 1200 and far.cache_read == 0


def test_an_entry_lives_five_minutes_after_its_last_use() -> None:
    body = request([text(2000, "a", mark=True)])
    cache = PromptCache()
    cache.replay(body, at=0.0)
    assert cache.replay(body, at=299.0).cache_read == 2000
    assert cache.replay(body, at=598.0).cache_read == 2000  # the read renewed it
    assert cache.replay(body, at=1000.0).cache_read == 0
