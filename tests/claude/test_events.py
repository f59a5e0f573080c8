"""The parser of ``claude -p`` output, against every capture of the real CLI and hand-made lines."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from clawback.core.claude.events import (
    ApiRetry,
    AssistantMessage,
    Event,
    Result,
    SystemInit,
    TextDelta,
    ToolCall,
    UnparseableOutput,
    Usage,
    parse_json_result,
    parse_stream_line,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fake_claude.fixtures import EXTRA_CAPTURES, requires_shared_captures

OPUS = "claude-opus-5-5"
WINDOW = 1_000_000


def stream_events(path: Path) -> list[Event]:
    events = [parse_stream_line(line) for line in path.read_text("utf-8").splitlines()]
    return [e for e in events if e is not None]


def only(events: list[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def final(events: list[Event]) -> Result:
    assert isinstance(events[-1], Result)
    return events[-1]


@pytest.fixture
def shared() -> Path:
    return requires_shared_captures()


# --------------------------------------------------------------- shared/claude-cli captures


def test_json_success(shared: Path) -> None:
    result = parse_json_result((shared / "json_success.json").read_text("utf-8"))
    assert result.reply == "ECHO: hello from stdin\n"
    assert not result.is_error
    assert result.usage == Usage(input=48, output=60, cache_read=200, cache_write=20)
    assert result.usage.total_tokens == 268
    assert (result.model, result.context_window) == (OPUS, WINDOW)
    assert result.total_cost_usd == pytest.approx(0.001532)
    assert result.session_id == "2e813d59-b1c6-40d7-9bbe-0fa6da4026bd"
    assert (result.num_turns, result.duration_ms, result.api_error_status) == (1, 115, None)
    assert result.structured_output is None
    assert result.stop_reason == "end_turn"


def test_json_structured(shared: Path) -> None:
    result = parse_json_result((shared / "json_structured.json").read_text("utf-8"))
    facts = [
        {"type": "decision", "content": "We decided to use PostgreSQL instead"},
        {"type": "decision", "content": "instead of MySQL for the billing"},
    ]
    assert result.structured_output == {"facts": facts}
    assert json.loads(result.reply) == {"facts": facts}
    assert result.num_turns == 2
    assert result.usage == Usage(input=61, output=60, cache_read=200, cache_write=20)
    assert (result.model, result.context_window) == (OPUS, WINDOW)


@pytest.mark.parametrize(
    ("name", "status", "error_type", "text"),
    [
        (
            "json_err401.json",
            401,
            "authentication_error",
            "Failed to authenticate. API Error: 401 mock authentication_error",
        ),
        (
            "json_err429.json",
            429,
            "rate_limit_error",
            "API Error: Request rejected (429) · mock rate_limit_error",
        ),
        ("json_err529.json", 529, "overloaded_error", "API Error: 529 mock overloaded_error."),
        ("json_nokey.json", None, None, "Not logged in · Please run /login"),
    ],
)
def test_json_errors(
    shared: Path, name: str, status: int | None, error_type: str | None, text: str
) -> None:
    result = parse_json_result((shared / name).read_text("utf-8"))
    assert result.is_error
    assert result.api_error_status == status
    assert result.api_error_type == error_type
    assert result.reply.startswith(text)
    assert (result.model, result.context_window) == (None, None)
    assert result.usage == Usage()
    assert result.total_cost_usd == 0
    assert result.terminal_reason == "api_error"


def test_text_output_is_not_json(shared: Path) -> None:
    text = (shared / "text_success.txt").read_text("utf-8")
    assert text == "ECHO: plain text\n"
    with pytest.raises(UnparseableOutput) as caught:
        parse_json_result(text)
    assert caught.value.text == text
    assert "ECHO: plain text" in str(caught.value)
    with pytest.raises(UnparseableOutput):
        parse_stream_line(text)


def test_stream_success(shared: Path) -> None:
    events = stream_events(shared / "stream_success.jsonl")
    init = events[0]
    assert isinstance(init, SystemInit)
    assert init.session_id == "f06426f5-1b08-4814-9ccd-fa17f2d21113"
    assert (init.model, init.claude_code_version, init.tools) == (OPUS, "2.1.328", ())
    assert init.api_key_source == "ANTHROPIC_API_KEY"
    deltas = only(events, TextDelta)
    assert len(deltas) == 5
    result = final(events)
    assert "".join(d.text for d in deltas) == result.reply
    assert result.reply.startswith("ECHO: Please explain how SQLite WAL mode")
    assert result.usage == Usage(input=86, output=60, cache_read=200, cache_write=20)
    assert (result.model, result.context_window, result.session_id) == (
        OPUS,
        WINDOW,
        init.session_id,
    )
    [assistant] = only(events, AssistantMessage)
    assert assistant.text == result.reply
    assert (assistant.model, assistant.is_api_error) == (OPUS, False)
    assert assistant.usage == Usage(input=86, output=1, cache_read=200, cache_write=20)
    # init, 5 deltas, the assistant message and the result; the rest is ignored
    assert len(events) == 8


def test_stream_unicode(shared: Path) -> None:
    events = stream_events(shared / "stream_unicode.jsonl")
    result = final(events)
    assert result.reply == "ECHO: multi\nline\nprompt with unicode: 日本語 ✓\n"
    assert "".join(d.text for d in only(events, TextDelta)) == result.reply
    assert (result.model, result.context_window) == ("claude-sonnet-5-5", WINDOW)
    assert isinstance(events[0], SystemInit)
    assert events[0].model == "claude-sonnet-5-5"
    assert result.usage.total_tokens == 59 + 200 + 20


def test_stream_nopartial(shared: Path) -> None:
    events = stream_events(shared / "stream_nopartial.jsonl")
    assert [type(e) for e in events] == [SystemInit, AssistantMessage, Result]
    result = final(events)
    assert isinstance(events[1], AssistantMessage)
    assert events[1].text == result.reply
    assert result.reply == "ECHO: Without partial messages please, just the final assistant event\n"
    assert result.usage == Usage(input=60, output=60, cache_read=200, cache_write=20)


def test_stream_err429(shared: Path) -> None:
    events = stream_events(shared / "stream_err429.jsonl")
    assert [type(e) for e in events] == [SystemInit, AssistantMessage, Result]
    assistant = events[1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.is_api_error
    assert (assistant.error, assistant.api_error_status, assistant.model) == (
        "rate_limit",
        429,
        "<synthetic>",
    )
    result = final(events)
    assert result.is_error
    assert (result.api_error_status, result.api_error_type) == (429, "rate_limit_error")
    assert result.reply == assistant.text


def test_every_shared_capture_parses(shared: Path) -> None:
    for path in sorted(shared.iterdir()):
        if path.suffix == ".json":
            assert isinstance(parse_json_result(path.read_text("utf-8")), Result), path.name
        elif path.suffix == ".jsonl":
            events = stream_events(path)
            assert isinstance(events[0], SystemInit), path.name
            assert isinstance(events[-1], Result), path.name


# --------------------------------------------------------------- tests/fake_claude/captures


def test_extra_capture_structured_stream() -> None:
    events = stream_events(EXTRA_CAPTURES / "stream_structured.jsonl")
    result = final(events)
    payload = {"facts": [{"type": "decision", "content": "We decided to use PostgreSQL"}]}
    assert result.structured_output == payload
    assert json.loads(result.reply) == payload
    assert (result.num_turns, result.stop_reason) == (2, "tool_use")
    assert only(events, TextDelta) == []  # the tool call streams JSON, not text
    [assistant] = only(events, AssistantMessage)
    assert assistant.text == ""
    init = only(events, SystemInit)[0]
    assert init.tools == ("StructuredOutput",)


def test_extra_capture_api_retry() -> None:
    events = stream_events(EXTRA_CAPTURES / "stream_api_retry.jsonl")
    retries = only(events, ApiRetry)
    assert [(r.attempt, r.max_retries, r.error_status, r.error) for r in retries] == [
        (1, 2, 529, "overloaded"),
        (2, 2, 529, "overloaded"),
    ]
    assert all(r.retry_delay_ms > 0 for r in retries)
    assert final(events).api_error_status == 529


@pytest.mark.parametrize(
    ("name", "status", "error"),
    [
        ("stream_err401.jsonl", 401, "authentication_failed"),
        ("stream_err429_partial.jsonl", 429, "rate_limit"),
        ("stream_nokey.jsonl", None, "authentication_failed"),
    ],
)
def test_extra_capture_errors(name: str, status: int | None, error: str) -> None:
    events = stream_events(EXTRA_CAPTURES / name)
    # a system/ui_invalidate line came first in these captures; it is skipped
    assert isinstance(events[0], SystemInit)
    [assistant] = only(events, AssistantMessage)
    assert assistant.is_api_error
    assert (assistant.error, assistant.api_error_status) == (error, status)
    result = final(events)
    assert result.is_error
    assert result.api_error_status == status


# --------------------------------------------------------------- hand-made lines


def line(**obj: Any) -> str:
    return json.dumps(obj)


def test_blank_and_unknown_lines_are_ignored() -> None:
    assert parse_stream_line("") is None
    assert parse_stream_line("   \n") is None
    assert parse_stream_line(line(type="queue-operation", operation="enqueue")) is None
    assert parse_stream_line(line(type="system", subtype="status", status="requesting")) is None
    assert (
        parse_stream_line(line(type="system", subtype="ui_invalidate", event="ui.render")) is None
    )
    assert parse_stream_line(line(type="user", message={"role": "user", "content": []})) is None
    assert parse_stream_line(line(no_type=True)) is None
    assert parse_stream_line(line(type="stream_event", event={"type": "message_stop"})) is None


def test_non_json_and_non_objects_raise() -> None:
    for bad in ("not json", "{", "[1, 2]", '"text"', "42", "null"):
        with pytest.raises(UnparseableOutput):
            parse_stream_line(bad)


def test_bytes_are_accepted() -> None:
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "é"},
    }
    event = parse_stream_line(line(type="stream_event", event=delta).encode("utf-8"))
    assert event == TextDelta("é")


def test_only_text_deltas_of_the_main_reply_count() -> None:
    thinking = {"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": "h"}}
    tool = {
        "type": "content_block_delta",
        "delta": {"type": "input_json_delta", "partial_json": "{"},
    }
    text = {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "hi"}}
    empty = {"type": "content_block_delta", "delta": {"type": "text_delta", "text": ""}}
    assert parse_stream_line(line(type="stream_event", event=thinking)) is None
    assert parse_stream_line(line(type="stream_event", event=tool)) is None
    assert parse_stream_line(line(type="stream_event", event=empty)) is None
    sub = line(type="stream_event", event=text, parent_tool_use_id="toolu_1")
    assert parse_stream_line(sub) is None
    assert parse_stream_line(line(type="stream_event", event=text)) == TextDelta("hi")


def test_assistant_message_joins_text_blocks() -> None:
    message = {
        "model": OPUS,
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "one "},
            {"type": "tool_use", "name": "x", "input": {}},
            {"type": "text", "text": "two"},
        ],
    }
    event = parse_stream_line(line(type="assistant", message=message))
    assert event == AssistantMessage(
        text="one two", model=OPUS, usage=None, tool_calls=(ToolCall("", "x", {}),)
    )


def test_result_tolerates_missing_and_odd_fields() -> None:
    event = parse_stream_line(line(type="result", usage="?", modelUsage=[], is_error="yes"))
    assert isinstance(event, Result)
    assert (event.reply, event.is_error, event.usage, event.model) == ("", False, Usage(), None)
    assert event.total_cost_usd == 0.0


def test_result_picks_the_model_that_read_the_biggest_prompt() -> None:
    usage = {
        "claude-haiku-5-5": {"inputTokens": 500, "contextWindow": 200_000},
        OPUS: {"inputTokens": 10, "cacheReadInputTokens": 40_000, "contextWindow": WINDOW},
    }
    event = parse_stream_line(line(type="result", result="ok", modelUsage=usage))
    assert isinstance(event, Result)
    assert (event.model, event.context_window) == (OPUS, WINDOW)


def test_usage_total_is_the_prompt_size() -> None:
    usage = Usage.from_api(
        {
            "input_tokens": 3,
            "output_tokens": 7,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 20,
        }
    )
    assert usage == Usage(input=3, output=7, cache_read=100, cache_write=20)
    assert usage.total_tokens == 123


def test_json_verbose_array_gives_the_last_result() -> None:
    text = json.dumps(
        [
            {"type": "system", "subtype": "init", "session_id": "s", "model": OPUS},
            {"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}},
            {"type": "result", "result": "hi", "is_error": False, "session_id": "s"},
        ]
    )
    result = parse_json_result(text)
    assert (result.reply, result.session_id) == ("hi", "s")


def test_json_result_rejects_other_json() -> None:
    for bad in ('{"type": "assistant"}', "[]", "[1]", "3", ""):
        with pytest.raises(UnparseableOutput):
            parse_json_result(bad)


def test_api_retry_line() -> None:
    event = parse_stream_line(
        line(type="system", subtype="api_retry", attempt=2, max_retries=10, retry_delay_ms=1175)
    )
    assert event == ApiRetry(
        attempt=2, max_retries=10, retry_delay_ms=1175, error_status=None, error=""
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
known_keys = st.sampled_from(
    ["type", "subtype", "event", "message", "delta", "usage", "modelUsage", "result", "content"]
)


@given(st.text())
def test_any_text_parses_or_raises_unparseable(text: str) -> None:
    with contextlib.suppress(UnparseableOutput):
        parse_stream_line(text)


@given(
    st.sampled_from(["system", "stream_event", "assistant", "result", "user", "x"]),
    st.dictionaries(known_keys, json_values, max_size=6),
    st.sampled_from(["init", "api_retry", "status", None]),
)
def test_any_json_object_never_breaks_the_parser(
    kind: str, fields: dict[str, Any], subtype: str | None
) -> None:
    obj = {**fields, "type": kind, "subtype": subtype}
    parse_stream_line(json.dumps(obj))
    if kind == "result":
        assert isinstance(parse_json_result(json.dumps(obj)), Result)


# -- issue 11: whatever claude prints, parsing gives an event, None or UnparseableOutput ---------

_stream_values = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.floats(), st.integers(-(10**40), 10**40), st.text(),
        st.sampled_from(["\ud83d", "\ude00", "1e30"]),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)  # fmt: skip
_stream_types = st.sampled_from(["stream_event", "assistant", "result", "system", "user", "x"])


@settings(max_examples=200, deadline=None)
@given(_stream_types, st.dictionaries(st.sampled_from(
    ["event", "message", "usage", "result", "subtype", "modelUsage", "total_cost_usd", "is_error",
     "num_turns", "duration_ms", "api_error_status", "session_id", "model", "tools"]
), _stream_values, max_size=6), st.booleans())  # fmt: skip
def test_any_stream_line_parses_to_encodable_values(kind: str, fields: dict, ascii_: bool) -> None:
    line = json.dumps({"type": kind, **fields}, ensure_ascii=ascii_)
    try:
        event = parse_stream_line(line.encode("utf-8", "surrogatepass"))
    except UnparseableOutput:
        return
    for text in _strings(event):
        text.encode("utf-8")  # every string in it can be written anywhere
    for value in vars(getattr(event, "usage", None) or Usage()).values():
        assert abs(value) <= 2**53


def _strings(value: Any) -> list[str]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):
            stack += list(item)
        elif dataclasses.is_dataclass(item):
            stack += [getattr(item, f.name) for f in dataclasses.fields(item)]
    return found


def test_too_deep_json_is_an_ignored_line() -> None:
    assert parse_stream_line('{"type":"x","y":' + "[" * 100_000 + "]" * 100_000 + "}") is None
