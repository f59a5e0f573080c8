"""clawback's native format: the line builders, the parser, and format detection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clawback.core.formats import PARSERS, detect_line
from clawback.core.formats.native import (
    compaction_event,
    label_event,
    message_event,
    parse_line,
    session_header,
)
from clawback.core.records import Entry, Kind, ParsedLine, Role, SessionMeta, Source
from hypothesis import given
from hypothesis import strategies as st

SESSION_ID = "6a1e3c9b-2f4d-4b8a-9e7c-0d5f1a2b3c4e"
TRANSCRIPT = Path(__file__).parents[1] / "fixtures" / "native" / f"{SESSION_ID}.jsonl"


def fixture_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in TRANSCRIPT.read_text(encoding="utf-8").splitlines()]


def test_builders_write_exactly_the_fixture_lines() -> None:
    """The fixture is the format as documented; the builders must produce it byte for byte."""
    built = [
        session_header(
            SESSION_ID,
            key="local:alice",
            created="2026-05-01T10:00:00.000Z",
            parent="1b2c3d4e-5f60-4718-92a3-b4c5d6e7f809",
            label="garden",
        ),
        message_event(
            "m-0001",
            "user",
            "Which tomato variety did we pick for the north bed? 北の畑のトマトは？",
            "2026-05-01T10:00:01.000Z",
        ),
        message_event(
            "m-0002",
            "assistant",
            "You picked Black Krim for the north bed because it tolerates the cooler nights.",
            "2026-05-01T10:00:04.000Z",
            model="claude-sonnet-4-5",
            usage={"input_tokens": 40, "output_tokens": 22},
        ),
        message_event(
            "m-0003",
            "assistant",
            "And for the south bed you were considering",
            "2026-05-01T10:01:00.000Z",
            model="claude-sonnet-4-5",
            partial=True,
        ),
        message_event(
            "m-0004",
            "system",
            "claude exited with status 143 (terminated)",
            "2026-05-01T10:01:01.000Z",
        ),
        compaction_event(
            "c-0001",
            "2026-05-01T11:00:00.000Z",
            "Alice chose Black Krim tomatoes for the north bed; the south bed is undecided.",
            first_kept_id="m-0003",
            tokens_before=152000,
            tokens_after=3100,
            model="claude-sonnet-4-5",
        ),
        label_event("garden-2026", "2026-05-01T11:05:00.000Z"),
    ]
    written = [json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in built]
    assert written == TRANSCRIPT.read_text(encoding="utf-8").splitlines()[: len(built)]


def test_header_is_detected_and_gives_meta() -> None:
    header = fixture_lines()[0]
    assert detect_line(header) is Source.NATIVE
    assert PARSERS[Source.NATIVE] is parse_line
    assert parse_line(header) == ParsedLine(
        meta=SessionMeta(
            session_id=SESSION_ID,
            key="local:alice",
            created="2026-05-01T10:00:00.000Z",
            parent_id="1b2c3d4e-5f60-4718-92a3-b4c5d6e7f809",
            label="garden",
            channel="local",
        )
    )


def test_header_without_the_marker_is_not_native() -> None:
    header = {"type": "session", "version": 1, "id": "x", "key": "local:alice"}
    assert detect_line(header) is None
    assert parse_line(header).unknown


def test_messages() -> None:
    lines = fixture_lines()
    assert parse_line(lines[1]).entries == [
        Entry(
            role=Role.USER,
            kind=Kind.TEXT,
            text="Which tomato variety did we pick for the north bed? 北の畑のトマトは？",
            timestamp="2026-05-01T10:00:01.000Z",
            uuid="m-0001",
            conversational=True,
        )
    ]
    [reply] = parse_line(lines[2]).entries
    assert (reply.role, reply.model, reply.partial, reply.conversational) == (
        Role.ASSISTANT,
        "claude-sonnet-4-5",
        False,
        True,
    )
    [cut] = parse_line(lines[3]).entries
    assert cut.partial
    [system] = parse_line(lines[4]).entries
    assert system.role is Role.SYSTEM and not system.conversational


def test_compaction_label_and_unknown() -> None:
    lines = fixture_lines()
    [compaction] = parse_line(lines[5]).entries
    assert (compaction.kind, compaction.role, compaction.conversational, compaction.uuid) == (
        Kind.COMPACTION,
        Role.SYSTEM,
        True,
        "c-0001",
    )
    labelled = parse_line(lines[6])
    assert labelled.meta == SessionMeta(label="garden-2026")
    # The label is also a searchable entry, not part of the conversation.
    assert [(e.kind, e.text, e.conversational) for e in labelled.entries] == [
        (Kind.SUMMARY, "garden-2026", False)
    ]
    assert parse_line(label_event(None, "t")) == ParsedLine(meta=SessionMeta(label=""))
    assert parse_line(lines[7]) == ParsedLine(unknown="unknown line type 'greenhouse'")


def test_message_event_rejects_an_unknown_role() -> None:
    with pytest.raises(ValueError, match="role must be one of"):
        message_event("m", "tool", "x", "t")


def test_optional_fields_are_left_out() -> None:
    assert session_header("s", "local:a", "t") == {
        "type": "session",
        "format": "clawback",
        "version": 1,
        "id": "s",
        "key": "local:a",
        "created": "t",
        "parent": None,
    }
    assert message_event("m", "user", "hi", "t") == {
        "type": "message",
        "id": "m",
        "role": "user",
        "content": "hi",
        "timestamp": "t",
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
lines = st.fixed_dictionaries(
    {"type": st.sampled_from(["session", "message", "compaction", "label"]) | json_values},
    optional={
        "format": st.just("clawback") | json_values,
        **{
            k: json_values
            for k in (
                "id",
                "key",
                "created",
                "parent",
                "label",
                "role",
                "content",
                "timestamp",
                "model",
                "partial",
                "summary",
                "cwd",
            )
        },
    },
)


@given(json_values)
def test_parse_line_never_raises_on_any_json(value: Any) -> None:
    line = parse_line(value)
    assert line.unknown is None or not line.unknown.startswith("parser error")


@given(lines)
def test_parse_line_never_raises_on_known_keys_with_wrong_types(value: dict[str, Any]) -> None:
    line = parse_line(value)
    assert line.unknown is None or not line.unknown.startswith("parser error"), line.unknown
    detect_line(value)


@given(
    st.text(min_size=1),
    st.sampled_from(["user", "assistant", "system"]),
    st.text(),
    st.booleans(),
)
def test_builder_then_parser_round_trip(
    message_id: str, role: str, text: str, partial: bool
) -> None:
    line = json.loads(json.dumps(message_event(message_id, role, text, "t", partial=partial)))
    parsed = parse_line(line)
    if text.strip():
        [entry] = parsed.entries
        assert (entry.text, entry.uuid, entry.role.value, entry.partial) == (
            text,
            message_id,
            role,
            partial,
        )
    else:
        assert parsed == ParsedLine()


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        ({"type": "session", "format": "clawback", "version": 1, "id": "s"}, Source.NATIVE),
        ({"type": "session", "version": 3, "id": "s", "cwd": "/"}, Source.OPENCLAW),
        ({"type": "session", "id": "s", "key": "local:a"}, None),  # ours, but unmarked
        ({"type": "session", "format": "other"}, None),
        ({"type": "message", "message": {"role": "user", "content": "hi"}}, Source.OPENCLAW),
        ({"type": "message", "id": "m", "role": "user", "content": "hi"}, None),
        ({"type": "atis-latch", "atis": "", "sessionId": "s"}, Source.CLAUDE_CODE),
        ({"type": "mode", "mode": "normal"}, Source.CLAUDE_CODE),
        ({"type": "a-future-line-type", "sessionId": "s"}, Source.CLAUDE_CODE),
        ({"type": "summary", "summary": "t", "leafUuid": "u"}, Source.CLAUDE_CODE),
        ({"type": "user", "message": {"role": "user"}, "uuid": "u"}, Source.CLAUDE_CODE),
        ({"type": "user", "id": "g-user-1", "content": [{"text": "hi"}]}, None),  # Gemini CLI
        ({"sessionId": "g", "projectHash": "h", "startTime": "t"}, None),  # Gemini CLI header
        ({"type": "session_meta", "payload": {"id": "x"}}, None),  # Codex
        ({"role": "user", "message": {"content": []}}, None),  # Cursor
        ({"type": 3}, None),
        ([{"type": "session"}], None),
        ("session", None),
        (None, None),
    ],
)
def test_detect_format(first: Any, expected: Source | None) -> None:
    assert detect_line(first) is expected
