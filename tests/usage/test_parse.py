"""Each format's usage lines read into ``TokenUsage`` (issue 36 item 1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from clawback.core.formats import PARSERS, detect_line
from clawback.core.formats.native import message_event
from clawback.core.formats.token_usage import claude_code_usage
from clawback.core.records import Source
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import cc_assistant


def _assistant(usage: dict[str, Any], **line: Any) -> dict[str, Any]:
    obj = cc_assistant("s1", "u1", [{"type": "text", "text": "hi"}])
    obj["message"]["usage"] = usage
    obj["requestId"] = "req_1"
    obj.update(line)
    return obj


def test_a_claude_code_reply_carries_its_usage_model_time_and_ids() -> None:
    usage = {
        "input_tokens": 3,
        "output_tokens": 120,
        "cache_read_input_tokens": 40_000,
        "cache_creation_input_tokens": 900,
        "cache_creation": {"ephemeral_5m_input_tokens": 600, "ephemeral_1h_input_tokens": 300},
        "service_tier": "standard",
    }
    parsed = PARSERS[Source.CLAUDE_CODE](_assistant(usage))
    assert [e.text for e in parsed.entries] == ["hi"]
    got = parsed.usage
    assert got is not None
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens) == (3, 120, 40_000)
    assert (got.cache_write_tokens, got.cache_write_1h_tokens) == (900, 300)
    assert (got.model, got.message_id, got.request_id) == ("claude-sonnet-4-5", "msg_u1", "req_1")
    assert got.timestamp == "2026-11-20T10:00:00.000Z" and not got.fast and not got.sidechain


def test_the_cache_breakdown_is_the_write_count_when_given() -> None:
    """ccusage counts the 5-minute and 1-hour parts when a line has them."""
    usage = {
        "input_tokens": 1,
        "output_tokens": 2,
        "cache_creation_input_tokens": 999,
        "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 20},
    }
    got = claude_code_usage(_assistant(usage))
    assert got is not None and (got.cache_write_tokens, got.cache_write_1h_tokens) == (30, 20)


def test_fast_mode_synthetic_model_and_sidechain() -> None:
    fast = claude_code_usage(_assistant({"input_tokens": 1, "output_tokens": 1, "speed": "fast"}))
    assert fast is not None and fast.fast
    synthetic = _assistant({"input_tokens": 0, "output_tokens": 0})
    synthetic["message"]["model"] = "<synthetic>"
    got = claude_code_usage(synthetic)
    assert got is not None and got.model is None
    side = claude_code_usage(_assistant({"input_tokens": 1, "output_tokens": 1}, isSidechain=True))
    assert side is not None and side.sidechain


@pytest.mark.parametrize(
    ("usage", "line"),
    [
        ({"output_tokens": 5}, {}),  # no input count
        ({"input_tokens": -1, "output_tokens": 5}, {}),
        ({"input_tokens": 1.5, "output_tokens": 5}, {}),
        ({"input_tokens": True, "output_tokens": 5}, {}),
        ({"input_tokens": 1, "output_tokens": 5, "cache_read_input_tokens": None}, {}),
        ({"input_tokens": 1, "output_tokens": 5, "speed": "warp"}, {}),
        ({"input_tokens": 1, "output_tokens": 5, "cache_creation": 7}, {}),
        ({"input_tokens": 1, "output_tokens": 5}, {"requestId": ""}),
        ({"input_tokens": 1, "output_tokens": 5}, {"requestId": None}),
        ({"input_tokens": 1, "output_tokens": 5}, {"sessionId": ""}),
        ({"input_tokens": 1, "output_tokens": 5}, {"version": "next"}),
        ({"input_tokens": 1, "output_tokens": 5}, {"costUSD": "1"}),
        ({"input_tokens": 1, "output_tokens": 5}, {"costUSD": float("inf")}),
        ({"input_tokens": 1, "output_tokens": 5}, {"costUSD": float("nan")}),
        ({"input_tokens": 1, "output_tokens": 5}, {"timestamp": None}),
        ({"input_tokens": 1, "output_tokens": 5}, {"cwd": None}),
    ],
)
def test_a_malformed_line_counts_nothing_rather_than_a_guess(
    usage: dict[str, Any], line: dict[str, Any]
) -> None:
    """ccusage's rules: a line whose counts or identifying fields are malformed is dropped;
    its text is still indexed."""
    parsed = PARSERS[Source.CLAUDE_CODE](_assistant(usage, **line))
    assert parsed.usage is None
    if line.get("timestamp", "") is not None:
        assert parsed.entries


def test_an_empty_model_or_message_id_drops_the_usage() -> None:
    for field in ("model", "id"):
        obj = _assistant({"input_tokens": 1, "output_tokens": 1})
        obj["message"][field] = ""
        assert claude_code_usage(obj) is None


def test_a_reply_without_text_still_counts_its_usage() -> None:
    obj = _assistant({"input_tokens": 7, "output_tokens": 1})
    obj["message"]["content"] = [{"type": "text", "text": "   "}]
    parsed = PARSERS[Source.CLAUDE_CODE](obj)
    assert not parsed.entries
    assert parsed.usage is not None and parsed.usage.input_tokens == 7
    assert parsed.meta is not None and parsed.meta.session_id == "s1"


def test_a_sub_agent_message_relayed_in_a_progress_line_counts() -> None:
    """Claude Code 2.x relays a sub-agent's messages in its parent's ``progress`` lines; the
    sub-agent's own file repeats them (the index counts the response once)."""
    relayed = {
        "type": "progress",
        "sessionId": "s1",
        "timestamp": "2026-03-10T06:00:01.001Z",
        "data": {
            "message": {
                "type": "assistant",
                "timestamp": "2026-03-10T06:00:01.000Z",
                "requestId": "req_haiku",
                "isSidechain": True,
                "message": {
                    "model": "claude-haiku-4-5-20251001",
                    "id": "msg_haiku",
                    "role": "assistant",
                    "content": [],
                    "usage": {"input_tokens": 20, "output_tokens": 2},
                },
            }
        },
    }
    parsed = PARSERS[Source.CLAUDE_CODE](relayed)
    assert parsed.usage is not None and parsed.unknown is None and not parsed.entries
    assert (parsed.usage.message_id, parsed.usage.request_id) == ("msg_haiku", "req_haiku")
    assert parsed.usage.timestamp == "2026-03-10T06:00:01.000Z" and parsed.usage.sidechain


def test_an_untyped_usage_line_is_read_for_its_usage_alone() -> None:
    line = {
        "timestamp": "2026-01-09T10:00:00.000Z",
        "sessionId": "session-alpha",
        "message": {
            "id": "m1",
            "model": "claude-sonnet-4-20250514",
            "usage": {"input_tokens": 100, "output_tokens": 50},
        },
        "requestId": "r1",
        "costUSD": 0.12,
        "version": "1.0.0",
    }
    assert detect_line(line) is Source.CLAUDE_CODE
    parsed = PARSERS[Source.CLAUDE_CODE](line)
    assert parsed.unknown is None and not parsed.entries
    assert parsed.usage is not None and parsed.usage.cost_usd == 0.12
    assert detect_line({"type": "assistant", "message": {"usage": {}}}) is None


def test_a_pi_message_carries_its_usage_and_its_own_price() -> None:
    line = {
        "type": "message",
        "id": "a1",
        "timestamp": "2025-11-20T23:33:54.572Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "done"}],
            "model": "claude-sonnet-4-5",
            "usage": {
                "input": 12,
                "output": 8,
                "cacheRead": 2,
                "cacheWrite": 1,
                "cost": {"total": 0.25},
            },
        },
    }
    got = PARSERS[Source.OPENCLAW](line).usage
    assert got is not None
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens) == (12, 8, 2)
    assert (got.cache_write_tokens, got.cost_usd, got.model) == (1, 0.25, "claude-sonnet-4-5")
    empty = json.loads(json.dumps(line))
    empty["message"]["usage"] = {"input": 0, "output": 0}  # an aborted turn
    assert PARSERS[Source.OPENCLAW](empty).usage is None
    user = json.loads(json.dumps(line))
    user["message"]["role"] = "user"
    assert PARSERS[Source.OPENCLAW](user).usage is None


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": 40, "output_tokens": 22, "cache_read_tokens": 7, "cache_write_tokens": 3},
        {
            "input_tokens": 40,
            "output_tokens": 22,
            "cache_read_input_tokens": 7,
            "cache_creation_input_tokens": 3,
        },
    ],
)
def test_a_native_reply_reads_both_field_namings(usage: dict[str, int]) -> None:
    line = message_event(
        "m2", "assistant", "ok", "2026-05-01T10:00:04.000Z", model="claude-sonnet-4-5", usage=usage
    )
    got = PARSERS[Source.NATIVE](line).usage
    assert got is not None
    assert (got.input_tokens, got.output_tokens) == (40, 22)
    assert (got.cache_read_tokens, got.cache_write_tokens) == (7, 3)
    assert got.model == "claude-sonnet-4-5" and got.timestamp == "2026-05-01T10:00:04.000Z"
    user = message_event("m1", "user", "hi", "2026-05-01T10:00:00.000Z", usage=usage)
    assert PARSERS[Source.NATIVE](user).usage is None


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))  # fmt: skip
def test_usage_readers_never_raise(value: Any) -> None:
    for key in ("usage", "message", "data"):
        obj = {"type": "assistant", key: value, "message": {"usage": value}}
        PARSERS[Source.CLAUDE_CODE](obj)
        PARSERS[Source.OPENCLAW]({"type": "message", "message": {"role": "assistant", key: value}})
        PARSERS[Source.NATIVE]({"type": "message", "role": "assistant", "content": "x", key: value})
