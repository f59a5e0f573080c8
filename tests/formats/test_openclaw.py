"""The OpenClaw / pi parser and the sessions.json store reader."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawback.core.formats import PARSERS, detect_line
from clawback.core.formats.openclaw import (
    load_session_store,
    parse_line,
    session_id_from_path,
)
from clawback.core.records import Entry, Kind, ParsedLine, Role, SessionMeta, Source
from hypothesis import given
from hypothesis import strategies as st

SESSIONS = Path(__file__).parents[1] / "fixtures" / "openclaw" / "agents" / "main" / "sessions"
SESSION_ID = "3f6c1b2a-7d84-4e0f-a5c9-61e2b8d4f0a7"
TRANSCRIPT = SESSIONS / f"{SESSION_ID}.jsonl"


def decoded_lines(path: Path) -> Iterator[Any]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def parse_file(path: Path) -> list[tuple[Any, ParsedLine]]:
    return [(obj, parse_line(obj)) for obj in decoded_lines(path)]


def by_id(path: Path) -> dict[str, ParsedLine]:
    return {obj.get("id"): parsed for obj, parsed in parse_file(path)}


# --- hand-written fixture -------------------------------------------------------------------


def test_header_gives_session_meta_with_parent_from_path() -> None:
    first = next(decoded_lines(TRANSCRIPT))
    assert detect_line(first) is Source.OPENCLAW
    assert PARSERS[Source.OPENCLAW] is parse_line
    assert parse_line(first) == ParsedLine(
        meta=SessionMeta(
            session_id=SESSION_ID,
            cwd="/home/user/.openclaw/workspace",
            created="2026-04-10T18:00:00.000Z",
            parent_id="0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        )
    )


def test_session_info_names_the_session() -> None:
    assert by_id(TRANSCRIPT)["a1000003"] == ParsedLine(
        meta=SessionMeta(title="Tide table reminders")
    )


def test_settings_extension_state_and_labels_are_known_but_empty() -> None:
    lines = by_id(TRANSCRIPT)
    for entry_id in ("a1000001", "a1000002", "a1000004", "a1000013"):
        assert lines[entry_id] == ParsedLine(), entry_id


def test_injected_context_is_indexed_but_not_conversational() -> None:
    [entry] = by_id(TRANSCRIPT)["a1000005"].entries
    assert entry.role is Role.SYSTEM and not entry.conversational
    assert entry.text == "Channel: telegram. Sender: Mira (id 5550123)."


def test_user_text_with_cjk() -> None:
    assert by_id(TRANSCRIPT)["a1000006"].entries == [
        Entry(
            role=Role.USER,
            kind=Kind.TEXT,
            text="Remind me when the harbor tide is lowest tomorrow. 明日の干潮はいつ？",
            timestamp="2026-04-10T18:00:01.000Z",
            uuid="a1000006",
            conversational=True,
        )
    ]


def test_assistant_thinking_text_and_tool_call() -> None:
    thinking, text, call = by_id(TRANSCRIPT)["a1000007"].entries
    assert (thinking.kind, thinking.conversational) == (Kind.THINKING, False)
    assert (text.kind, text.text, text.conversational) == (
        Kind.TEXT,
        "Checking the tide table.",
        True,
    )
    assert call.kind is Kind.TOOL_USE and call.conversational
    assert call.display == "read: /home/user/.openclaw/workspace/tides/harbor.csv"
    assert call.text == "read\npath: /home/user/.openclaw/workspace/tides/harbor.csv"
    assert {e.model for e in (thinking, text, call)} == {"claude-sonnet-4-5"}


def test_tool_result_is_searchable_and_not_conversational() -> None:
    [result] = by_id(TRANSCRIPT)["a1000008"].entries
    assert (result.role, result.kind, result.conversational) == (Role.TOOL, Kind.TOOL_RESULT, False)
    assert "periwinkle-anchor-2290" in result.text


def test_bash_execution_is_a_user_tool_call_with_its_output() -> None:
    call, output = by_id(TRANSCRIPT)["a1000010"].entries
    assert (call.role, call.kind, call.conversational) == (Role.USER, Kind.TOOL_USE, True)
    assert call.display == "bash: crontab -l | grep tide"
    assert (output.role, output.kind, output.text) == (
        Role.TOOL,
        Kind.TOOL_RESULT,
        "42 5 * * * notify harbor-tide",
    )


def test_aborted_turn_keeps_its_error_message() -> None:
    [error] = by_id(TRANSCRIPT)["a1000011"].entries
    assert (error.role, error.text, error.conversational) == (
        Role.SYSTEM,
        "Request was aborted",
        False,
    )


def test_compaction_and_branch_summary() -> None:
    lines = by_id(TRANSCRIPT)
    [compaction] = lines["a1000012"].entries
    assert compaction.kind is Kind.COMPACTION and compaction.conversational
    assert compaction.text.startswith("Mira asked for tomorrow's low tide")
    [branch] = lines["a1000014"].entries
    assert branch.kind is Kind.COMPACTION
    assert (
        branch.text
        == "An abandoned branch tried the marine weather API instead of the cached table."
    )


def test_unknown_entry_type_is_counted() -> None:
    assert by_id(TRANSCRIPT)["a1000015"] == ParsedLine(unknown="unknown entry type 'tide_gauge'")


def test_session_id_from_path() -> None:
    assert (
        session_id_from_path("/x/2025-12-09T00-52-54-397Z_d97339c6-6c10.jsonl") == "d97339c6-6c10"
    )
    assert session_id_from_path("C:\\pi\\sessions\\abc.jsonl") == "abc"
    assert session_id_from_path("plain-id") == "plain-id"
    assert session_id_from_path("") is None
    assert session_id_from_path(7) is None


# --- sessions.json --------------------------------------------------------------------------


def test_load_session_store() -> None:
    store = load_session_store(SESSIONS / "sessions.json")
    assert store == {
        "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a": SessionMeta(
            session_id="9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a",
            key="agent:main:main",
            channel="webchat",
        ),
        SESSION_ID: SessionMeta(
            session_id=SESSION_ID,
            key="agent:main:telegram:dm:5550123",
            title="Mira",
            channel="telegram",
            label="tides",
        ),
        "c0ffee00-1111-4222-8333-444455556666": SessionMeta(
            session_id="c0ffee00-1111-4222-8333-444455556666",
            key="agent:main:discord:group:1122334455",
            title="Harbor crew",
            channel="discord",  # parsed from the key
        ),
    }


def test_load_session_store_is_tolerant(tmp_path: Path) -> None:
    assert load_session_store(tmp_path / "missing.json") == {}
    for text in ("{not json", "[1, 2]", '"text"', "null", "\udcff", '{"k": {"sessionId": null}}'):
        path = tmp_path / "sessions.json"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        assert load_session_store(path) == {}, text
    (tmp_path / "dir.json").mkdir()
    assert load_session_store(tmp_path / "dir.json") == {}


# --- the real transcripts -------------------------------------------------------------------


def real(shared_dir: Path, name: str) -> Path:
    return shared_dir / "real-transcripts" / "openclaw-pi" / name


def test_every_real_line_parses(shared_dir: Path) -> None:
    paths = sorted((shared_dir / "real-transcripts" / "openclaw-pi").glob("*/*.jsonl"))
    assert len(paths) == 7
    unknown = set()
    for path in paths:
        for _, line in parse_file(path):
            assert all(isinstance(e.text, str) and e.text for e in line.entries)
            if line.unknown:
                unknown.add((path.name, line.unknown))
    assert unknown == {("openclaw-schema_drift.jsonl", "unknown entry type 'compact'")}


def test_legacy_session_with_compactions_and_branch(shared_dir: Path) -> None:
    parsed = parse_file(real(shared_dir, "badlogic__pi-mono/before-compaction.jsonl"))
    assert parsed[0][1].meta == SessionMeta(
        session_id="ffae836b-9420-4060-ac13-7745215f90ff",
        cwd="/Users/badlogic/workspaces/pi-mono",
        created="2025-12-09T00:53:29.825Z",
        parent_id="d97339c6-6c10-4827-846b-9ff1d9c3dc37",
    )
    entries = [e for _, p in parsed for e in p.entries]
    compactions = [e for e in entries if e.kind is Kind.COMPACTION]
    assert len(compactions) == 2
    assert all(e.text.startswith("# Context Checkpoint") for e in compactions)
    bash = [e for e in entries if e.kind is Kind.TOOL_USE and e.role is Role.USER]
    assert [e.display for e in bash][:1] == ["bash: ls"]
    assert len(bash) == 3


def test_aborted_turns_are_partial(shared_dir: Path) -> None:
    entries = [
        e
        for _, p in parse_file(real(shared_dir, "badlogic__pi-mono/large-session.jsonl"))
        for e in p.entries
    ]
    assert any(e.partial for e in entries)
    assert any(e.text == "Request was aborted" and e.role is Role.SYSTEM for e in entries)


def test_pi_v3_compactions_and_session_name(shared_dir: Path) -> None:
    entries = [
        e
        for _, p in parse_file(real(shared_dir, "jazzyalex__agent-sessions/pi-small.jsonl"))
        for e in p.entries
    ]
    assert sum(e.kind is Kind.COMPACTION for e in entries) == 2
    parsed = parse_file(real(shared_dir, "kvsankar__agent-history/session-01.jsonl"))
    assert [p.meta.title for _, p in parsed if p.meta and p.meta.title] == [
        "agent-history pi smoke"
    ]


def test_schema_drift_system_role(shared_dir: Path) -> None:
    parsed = parse_file(real(shared_dir, "jazzyalex__agent-sessions/openclaw-schema_drift.jsonl"))
    [system] = [e for _, p in parsed for e in p.entries if e.role is Role.SYSTEM]
    assert system.text == "diagnostic summary updated" and not system.conversational
    [result] = [e for _, p in parsed for e in p.entries if e.kind is Kind.TOOL_RESULT]
    assert result.text == "PASS\n"


# --- never raises ---------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "thinking", "toolCall", "image"]) | json_values},
    optional={k: json_values for k in ("text", "thinking", "name", "arguments")},
)
messages = st.fixed_dictionaries(
    {
        "role": st.sampled_from(
            [
                "user",
                "assistant",
                "toolResult",
                "bashExecution",
                "custom",
                "system",
                "branchSummary",
                "compactionSummary",
            ]
        )
        | json_values
    },
    optional={
        "content": st.lists(blocks | json_values, max_size=4) | json_values,
        **{
            k: json_values
            for k in ("model", "stopReason", "errorMessage", "command", "output", "summary")
        },
    },
)
lines = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "session",
                "message",
                "compaction",
                "branch_summary",
                "custom_message",
                "session_info",
                "model_change",
                "label",
            ]
        )
        | json_values
    },
    optional={
        "message": messages | json_values,
        **{
            k: json_values
            for k in (
                "id",
                "timestamp",
                "cwd",
                "parentSession",
                "branchedFrom",
                "summary",
                "content",
                "name",
            )
        },
    },
)


def assert_well_formed(line: ParsedLine) -> None:
    assert isinstance(line, ParsedLine)
    assert line.unknown is None or not line.unknown.startswith("parser error"), line.unknown
    assert all(isinstance(e.text, str) for e in line.entries)


@given(json_values)
def test_parse_line_never_raises_on_any_json(value: Any) -> None:
    assert_well_formed(parse_line(value))


@given(lines)
def test_parse_line_never_raises_on_known_keys_with_wrong_types(value: dict[str, Any]) -> None:
    assert_well_formed(parse_line(value))
    detect_line(value)


@given(st.dictionaries(st.text(max_size=30), json_values, max_size=5))
def test_load_session_store_never_raises(tmp_path_factory: Any, data: dict[str, Any]) -> None:
    path = tmp_path_factory.mktemp("store") / "sessions.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for session_id, meta in load_session_store(path).items():
        assert meta.session_id == session_id and meta.key in data


def test_a_failed_tool_result_is_marked_an_error() -> None:
    from clawback.core.formats.openclaw import parse_line as parse_openclaw

    line: dict[str, Any] = {
        "type": "message",
        "id": "r1",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                    "content": [{"type": "text", "text": "no such file"}], "isError": True},
    }  # fmt: skip
    (entry,) = parse_openclaw(line).entries
    assert entry.kind == "tool_result" and entry.error
    line["message"]["isError"] = False
    assert not parse_openclaw(line).entries[0].error
