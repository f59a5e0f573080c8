"""The Claude Code parser, over hand-written fixtures, the real transcripts and random JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawback.core.formats import PARSERS, detect_line
from clawback.core.formats.claude_code import parse_line
from clawback.core.formats.rendering import describe_tool_call
from clawback.core.records import Entry, Kind, ParsedLine, Role, SessionMeta, Source
from hypothesis import given
from hypothesis import strategies as st

FIXTURES = Path(__file__).parents[1] / "fixtures" / "claude-code" / "-home-user-work-lighthouse"
SESSION_ID = "5b0f3c2e-8d41-4a7e-9c16-2f3a9d7e1b04"
MAIN_FILE = FIXTURES / f"{SESSION_ID}.jsonl"
SUBAGENT_FILE = FIXTURES / SESSION_ID / "subagents" / "agent-a9c41f07.jsonl"


def decoded_lines(path: Path) -> Iterator[dict[str, Any] | Any]:
    """Every line that decodes as JSON (the ingestor counts the others)."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


def parse_file(path: Path) -> list[tuple[Any, ParsedLine]]:
    return [(obj, parse_line(obj)) for obj in decoded_lines(path)]


def entries_of(path: Path) -> list[Entry]:
    return [entry for _, parsed in parse_file(path) for entry in parsed.entries]


# --- hand-written fixtures ------------------------------------------------------------------


def test_fixture_is_detected_and_registered() -> None:
    first = next(decoded_lines(MAIN_FILE))
    assert detect_line(first) is Source.CLAUDE_CODE
    assert PARSERS[Source.CLAUDE_CODE] is parse_line


def test_user_prompt_with_cjk_is_conversational_text() -> None:
    prompts = [
        e.text
        for e in entries_of(MAIN_FILE)
        if e.role is Role.USER and e.kind is Kind.TEXT and e.conversational
    ]
    assert prompts[1] == (
        "Why does the lighthouse log stop rotating after midnight? 日志轮转在午夜后停止了。"
    )
    assert "Spin up a helper to check the other cron jobs too." in prompts


def test_user_line_carries_uuid_timestamp_and_meta() -> None:
    parsed = parse_file(MAIN_FILE)
    obj, line = next(
        (o, p) for o, p in parsed if o.get("uuid") == "7e1a0c55-0001-4c2d-9f00-000000000001"
    )
    assert line.meta == SessionMeta(session_id=SESSION_ID, cwd="/home/user/work/lighthouse")
    assert line.entries == [
        Entry(
            role=Role.USER,
            kind=Kind.TEXT,
            text=obj["message"]["content"],
            timestamp="2026-03-02T09:00:00.030Z",
            uuid="7e1a0c55-0001-4c2d-9f00-000000000001",
            conversational=True,
        )
    ]


def test_thinking_is_indexed_but_not_conversational() -> None:
    [thinking] = [e for e in entries_of(MAIN_FILE) if e.kind is Kind.THINKING]
    assert thinking.text.startswith("The rotation job probably compares local dates")
    assert not thinking.conversational
    assert thinking.model == "claude-opus-4-6"


def test_tool_use_has_a_one_line_display_and_full_searchable_text() -> None:
    tool_uses = [e for e in entries_of(MAIN_FILE) if e.kind is Kind.TOOL_USE]
    assert [e.display for e in tool_uses] == [
        'Bash: grep -n "rotate" scripts/rotate_logs.sh',
        "Read: /home/user/work/lighthouse/scripts/rotate_logs.sh",
    ]
    bash = tool_uses[0]
    assert bash.role is Role.ASSISTANT and bash.conversational
    assert bash.text == (
        'Bash\ncommand: grep -n "rotate" scripts/rotate_logs.sh\n'
        "description: Find the rotation logic"
    )
    assert "limit: 60" in tool_uses[1].text


def test_tool_result_text_is_flattened_and_not_conversational() -> None:
    results = [e for e in entries_of(MAIN_FILE) if e.kind is Kind.TOOL_RESULT]
    assert all(e.role is Role.TOOL and not e.conversational for e in results)
    assert "flamingo-lattice-7731" in results[0].text
    assert (
        results[1].text
        == "     1\t#!/bin/sh\n     2\t# 灯塔日志轮转\n     3\tTODAY=$(date -u +%F)\nRead"
    )


def test_image_only_line_becomes_an_image_marker_without_base64() -> None:
    [image] = [e for e in entries_of(MAIN_FILE) if e.uuid == "7e1a0c55-0009-4c2d-9f00-000000000009"]
    assert image.text == "[image]"


def test_command_caveat_is_a_notification_not_a_prompt() -> None:
    entries = {e.uuid: e for e in entries_of(MAIN_FILE)}
    caveat = entries["7e1a0c55-0000-4c2d-9f00-000000000000"]
    assert caveat.kind is Kind.NOTIFICATION and caveat.role is Role.SYSTEM
    assert not caveat.conversational


def test_slash_command_is_shown_as_the_command() -> None:
    entries = {e.uuid: e for e in entries_of(MAIN_FILE)}
    command = entries["7e1a0c55-0002-4c2d-9f00-000000000002"]
    assert command.conversational and command.display == "/clear"


def test_compaction_boundary_and_summary() -> None:
    compactions = [e for e in entries_of(MAIN_FILE) if e.kind is Kind.COMPACTION]
    assert [e.text for e in compactions] == [
        "Conversation compacted (trigger: manual, tokens before: 151200)",
        "This session is being continued from a previous conversation that ran out of context. "
        "The conversation is summarized below:\nThe lighthouse log rotation compared UTC stamps "
        "with local schedules; the fix uses local dates everywhere.",
    ]
    assert all(e.role is Role.SYSTEM and e.conversational for e in compactions)


def test_summary_line_gives_a_title_and_a_summary_entry() -> None:
    first = next(decoded_lines(MAIN_FILE))
    line = parse_line(first)
    # The title names the session holding leafUuid, which the ingestor resolves.
    assert line.meta == SessionMeta(
        title="Lighthouse log rotation fix", title_for_uuid=first["leafUuid"]
    )
    assert line.entries == [
        Entry(role=Role.SYSTEM, kind=Kind.SUMMARY, text="Lighthouse log rotation fix")
    ]


def test_sidechain_line_in_main_file_is_flagged() -> None:
    entries = {e.uuid: e for e in entries_of(MAIN_FILE)}
    assert entries["7e1a0c55-0013-4c2d-9f00-000000000013"].sidechain
    assert not entries["7e1a0c55-0012-4c2d-9f00-000000000012"].sidechain


def test_bookkeeping_lines_are_empty_and_unknown_types_are_counted() -> None:
    by_type: dict[str, list[ParsedLine]] = {}
    for obj, parsed in parse_file(MAIN_FILE):
        by_type.setdefault(obj["type"], []).append(parsed)
    for line_type in ("queue-operation", "file-history-snapshot", "progress", "last-prompt"):
        assert all(p == ParsedLine() for p in by_type[line_type]), line_type
    assert by_type["cost-state"] == [ParsedLine()]
    assert by_type["system"][0] == ParsedLine()  # stop_hook_summary
    [beacon] = by_type["lighthouse-beacon"]
    assert beacon.unknown == "unknown line type 'lighthouse-beacon'" and not beacon.entries


def test_subagent_file_is_all_sidechain_and_names_the_main_session() -> None:
    parsed = parse_file(SUBAGENT_FILE)
    assert detect_line(parsed[0][0]) is Source.CLAUDE_CODE
    entries = [e for _, p in parsed for e in p.entries]
    assert entries and all(e.sidechain for e in entries)
    assert {p.meta.session_id for _, p in parsed if p.meta} == {SESSION_ID}
    assert [e.display for e in entries if e.kind is Kind.TOOL_USE] == ["Glob: deploy/**/*.cron"]
    assert entries[-1].model == "claude-haiku-4-5-20251001"


def test_describe_tool_call_falls_back_to_the_first_argument() -> None:
    display, text = describe_tool_call("TodoWrite", {"todos": [{"content": "ship it"}]})
    assert display == "TodoWrite: todos: content: ship it"
    assert text == "TodoWrite\ntodos: content: ship it"
    assert describe_tool_call(None, None) == ("tool", "tool")
    display, _ = describe_tool_call("Bash", {"command": "x" * 500})
    assert len(display) == len("Bash: ") + 120 and "\n" not in display


# --- the real transcripts -------------------------------------------------------------------


def real(shared_dir: Path, name: str) -> Path:
    return shared_dir / "real-transcripts" / "claude-code" / name


def test_cli_2_1_328_transcript(shared_dir: Path) -> None:
    [path] = (shared_dir / "claude-code-transcripts").glob("*/12a016d1-*.jsonl")
    parsed = parse_file(path)
    assert detect_line(parsed[0][0]) is Source.CLAUDE_CODE
    entries = [e for _, p in parsed for e in p.entries]
    assert [e.text for e in entries if e.role is Role.USER] == [
        "We decided to store transcripts as JSONL and index them in SQLite FTS5.\n",
        "Remind me: what did we decide about the index? Also 日本語のテスト.\n",
        "Thanks. __BIG__\n",
    ]
    replies = [e for e in entries if e.role is Role.ASSISTANT]
    assert replies[0].text == (
        "ECHO: We decided to store transcripts as JSONL and index them in SQLite FTS5.\n"
    )
    assert replies[1].text.startswith("ECHO: Remind me:")
    assert replies[2].text.startswith("lorem ipsum dolor sit amet")
    assert all(e.model == "claude-opus-5-5" and e.conversational for e in replies)
    assert all(e.kind is Kind.TEXT and e.uuid and e.timestamp for e in entries)
    for obj, line in parsed:
        if obj["type"] not in ("user", "assistant"):
            assert line == ParsedLine(), obj["type"]
        else:
            assert line.meta == SessionMeta(
                session_id="12a016d1-1c7c-4cbf-8c83-cd4facab6d15",
                cwd="/home/user/work/demo-project",
            )


def test_every_real_line_parses_without_a_parser_error(shared_dir: Path) -> None:
    paths = sorted((shared_dir / "real-transcripts" / "claude-code").glob("*/*.jsonl"))
    assert len(paths) >= 20
    unknown: dict[str, set[str]] = {}
    for path in paths:
        for _, line in parse_file(path):
            assert isinstance(line, ParsedLine)
            for entry in line.entries:
                assert isinstance(entry.text, str) and entry.text
            if line.unknown:
                assert not line.unknown.startswith("parser error"), (path.name, line.unknown)
                unknown.setdefault(path.name, set()).add(line.unknown)
    # Only the hand-made edge cases and two out-of-place synthetic lines are not understood.
    assert unknown == {
        "edge_cases.jsonl": {
            "not a JSON object (str)",
            "not a JSON object (int)",
            "not a JSON object (list)",
            "line without a type (NoneType)",
            "user line without a message object",
            "user message without content",
        },
        "claude-small.jsonl": {"unknown line type 'started'", "unknown line type 'result'"},
    }


def compactions(path: Path) -> list[Entry]:
    return [e for e in entries_of(path) if e.kind is Kind.COMPACTION]


def test_compaction_counts_match_sources_md(shared_dir: Path) -> None:
    # 25-730c662552: 2 compact_boundary + 2 isCompactSummary + 2 microcompact_boundary.
    found = compactions(real(shared_dir, "entireio__cli/25-730c662552-0-full.jsonl"))
    assert len(found) == 6
    assert sum(e.text.startswith("Context microcompacted") for e in found) == 2
    assert sum(e.text.startswith("Conversation compacted") for e in found) == 2
    # b0-2936744f3b: 2 compactions, each a boundary and a summary.
    found = compactions(real(shared_dir, "entireio__cli/b0-2936744f3b-0-full.jsonl"))
    assert [e.text.startswith("Conversation compacted") for e in found] == [True, False] * 2


def test_is_meta_lines_are_not_conversational(shared_dir: Path) -> None:
    parsed = parse_file(real(shared_dir, "entireio__cli/26-dcd5518fea-0-full.jsonl"))
    meta_lines = [p for obj, p in parsed if obj.get("isMeta") is True]
    assert len(meta_lines) == 5
    assert all(p.entries and not any(e.conversational for e in p.entries) for p in meta_lines)


def test_sidechain_lines_are_flagged(shared_dir: Path) -> None:
    parsed = parse_file(real(shared_dir, "iansherr__claude-code-log/sidechain.jsonl"))
    side = [p for obj, p in parsed if obj.get("isSidechain") is True]
    assert len(side) == 7
    assert all(p.entries and all(e.sidechain for e in p.entries) for p in side)
    main = [e for obj, p in parsed if obj.get("isSidechain") is False for e in p.entries]
    assert main and not any(e.sidechain for e in main)


def test_real_subagent_transcript_names_the_parent_session(shared_dir: Path) -> None:
    parsed = parse_file(real(shared_dir, "iansherr__claude-code-log/agent-a4ca7529859c158c2.jsonl"))
    entries = [e for _, p in parsed for e in p.entries]
    assert entries and all(e.sidechain for e in entries)
    assert {p.meta.session_id for _, p in parsed if p.meta} == {
        "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    }


def test_cjk_in_tool_results_and_inputs_is_searchable(shared_dir: Path) -> None:
    entries = entries_of(real(shared_dir, "entireio__cli/70-21395bfde9-0-full.jsonl"))
    assert any("你好世界" in e.text for e in entries if e.kind is Kind.TOOL_RESULT)
    assert any("テスト" in e.text for e in entries if e.kind is Kind.TOOL_USE)


def test_base64_images_are_never_indexed(shared_dir: Path) -> None:
    for name in ("debug_image_message.jsonl", "4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl"):
        entries = entries_of(real(shared_dir, f"iansherr__claude-code-log/{name}"))
        assert entries
        assert all("iVBORw0KGgo" not in e.text and "/9j/" not in e.text[:200] for e in entries)


def test_api_errors_and_local_commands_are_not_conversational(shared_dir: Path) -> None:
    parsed = parse_file(real(shared_dir, "entireio__cli/b0-2936744f3b-0-full.jsonl"))
    [error] = [p for obj, p in parsed if obj.get("isApiErrorMessage") is True]
    assert error.entries[0].text.startswith("API Error: 529")
    assert not error.entries[0].conversational and error.entries[0].model is None
    api_errors = [p for obj, p in parsed if obj.get("subtype") == "api_error"]
    assert len(api_errors) == 29 and all(p == ParsedLine() for p in api_errors)
    parsed = parse_file(real(shared_dir, "entireio__cli/8e-0a64736bc7-0-full.jsonl"))
    local = [e for obj, p in parsed if obj.get("subtype") == "local_command" for e in p.entries]
    assert [e.display for e in local] == ["/mcp", None]
    assert not any(e.conversational for e in local)


def test_summary_only_file_gives_a_title(shared_dir: Path) -> None:
    parsed = parse_file(
        real(shared_dir, "iansherr__claude-code-log/4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl")
    )
    assert [p.meta.title for _, p in parsed if p.meta] == ["TUI Cache Handling: Empty State Fix"]


def test_titles_from_custom_and_ai_title_lines(shared_dir: Path) -> None:
    parsed = parse_file(real(shared_dir, "jazzyalex__agent-sessions/claude-small.jsonl"))
    titles = [p.meta.title for _, p in parsed if p.meta and p.meta.title]
    custom = [p.meta.custom_title for _, p in parsed if p.meta and p.meta.custom_title]
    assert custom == ["Stage0 small fixture"] and "Stage0 AI title" in titles


def test_detect_format_on_every_real_file(shared_dir: Path) -> None:
    root = shared_dir / "real-transcripts"
    for path in sorted(root.glob("claude-code/*/*.jsonl")):
        first = next(decoded_lines(path), None)
        if first is not None:  # one real file is empty
            assert detect_line(first) is Source.CLAUDE_CODE, path.name
    for path in sorted(root.glob("openclaw-pi/*/*.jsonl")):
        assert detect_line(next(decoded_lines(path))) is Source.OPENCLAW, path.name
    for path in sorted(root.glob("other/*/*.jsonl")):
        first = next(decoded_lines(path), None)
        assert detect_line(first) is None, path.name
    gemini = json.loads((root / "other/entireio__cli/12-cbfeaa512b-0-full.jsonl").read_text())
    assert detect_line(gemini) is None


# --- never raises ---------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
block_types = st.sampled_from(
    ["text", "tool_use", "server_tool_use", "thinking", "tool_result", "image", "x_tool_result"]
)
blocks = st.fixed_dictionaries(
    {"type": block_types | json_values},
    optional={k: json_values for k in ("text", "name", "input", "thinking", "content")},
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant"]) | json_values,
        "content": st.lists(blocks | json_values, max_size=4) | json_values,
        "model": json_values,
    },
)
line_types = st.sampled_from(
    [
        "user",
        "assistant",
        "system",
        "summary",
        "custom-title",
        "ai-title",
        "tool_use",
        "tool_result",
        "queue-operation",
        "progress",
    ]
)
lines = st.fixed_dictionaries(
    {"type": line_types | json_values},
    optional={
        "message": messages | json_values,
        "subtype": st.sampled_from(["compact_boundary", "local_command", "away_summary"])
        | json_values,
        "compactMetadata": st.fixed_dictionaries(
            {}, optional={"trigger": json_values, "preTokens": json_values}
        )
        | json_values,
        **{
            key: json_values
            for key in (
                "sessionId",
                "cwd",
                "uuid",
                "timestamp",
                "isSidechain",
                "isMeta",
                "isCompactSummary",
                "isApiErrorMessage",
                "summary",
                "content",
                "customTitle",
                "aiTitle",
                "name",
                "input",
                "output",
            )
        },
    },
)


def assert_well_formed(line: ParsedLine) -> None:
    assert isinstance(line, ParsedLine)
    assert line.unknown is None or not line.unknown.startswith("parser error"), line.unknown
    for entry in line.entries:
        assert isinstance(entry.text, str)
        assert entry.display is None or isinstance(entry.display, str)


@given(json_values)
def test_parse_line_never_raises_on_any_json(value: Any) -> None:
    assert_well_formed(parse_line(value))
    detect_line(value)


@given(lines)
def test_parse_line_never_raises_on_known_keys_with_wrong_types(value: dict[str, Any]) -> None:
    assert_well_formed(parse_line(value))
    detect_line(value)


def test_rename_command_names_the_session() -> None:
    line = {
        "type": "user",
        "sessionId": "s1",
        "uuid": "u1",
        "message": {
            "role": "user",
            "content": "<command-name>/rename</command-name>\n<command-message>rename"
            "</command-message>\n<command-args>Tide tables</command-args>",
        },
    }
    parsed = parse_line(line)
    assert parsed.meta is not None and parsed.meta.custom_title == "Tide tables"
    assert parsed.entries[0].display == "/rename Tide tables"


def test_a_failed_tool_result_is_marked_an_error() -> None:
    from clawback.core.formats.claude_code import parse_line as parse_cc

    def result(is_error: object) -> dict[str, object]:
        block: dict[str, object] = {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": "ls: no such file",
        }
        if is_error is not None:
            block["is_error"] = is_error
        return {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
                "message": {"role": "user", "content": [block]}}  # fmt: skip

    assert parse_cc(result(True)).entries[0].error
    assert not parse_cc(result(False)).entries[0].error
    assert not parse_cc(result(None)).entries[0].error
