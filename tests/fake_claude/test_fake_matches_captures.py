"""The fake ``claude`` prints what the real one prints.

Each capture of the real CLI (``shared/claude-cli/`` and ``captures/`` here) is replayed through
the fake with the same flags and prompt, and the two outputs are compared line by line: the same
line types in the same order, and in each line the same keys in the same order with values of the
same JSON types, recursively. Ids, timings and token counts may differ; texts that the captures'
API stand-in produced (the echoed reply, the error messages) must not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .fixtures import (
    EXTRA_CAPTURES,
    assert_same_shape,
    kind,
    parse_lines,
    requires_shared_captures,
    run_fake,
)

BASE = ["--bare", "-p", "--no-session-persistence", "--tools", ""]
STREAM = ["--output-format", "stream-json", "--verbose", "--include-partial-messages"]
STREAM_NOPARTIAL = ["--output-format", "stream-json", "--verbose"]
JSON = ["--output-format", "json"]
FACTS_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"type": {"type": "string"}, "content": {"type": "string"}},
                    "required": ["type", "content"],
                },
            }
        },
        "required": ["facts"],
    }
)
# capture file -> (extra flags, FAKE_CLAUDE_* environment, exit code)
SHARED = {
    "text_success.txt": (["--output-format", "text"], {}, 0),
    "json_success.json": (JSON, {}, 0),
    "json_structured.json": ([*JSON, "--json-schema", FACTS_SCHEMA], {}, 0),
    "stream_success.jsonl": (STREAM, {}, 0),
    "stream_unicode.jsonl": ([*STREAM, "--system-prompt", "Be brief.", "--model", "sonnet"], {}, 0),
    "stream_nopartial.jsonl": (STREAM_NOPARTIAL, {}, 0),
    "json_err401.json": (JSON, {"FAKE_CLAUDE_MODE": "err401"}, 1),
    "json_err429.json": (JSON, {"FAKE_CLAUDE_MODE": "err429"}, 1),
    "json_err529.json": (JSON, {"FAKE_CLAUDE_MODE": "err529"}, 1),
    "json_nokey.json": (JSON, {"FAKE_CLAUDE_MODE": "nokey"}, 1),
    "stream_err429.jsonl": (STREAM_NOPARTIAL, {"FAKE_CLAUDE_MODE": "err429"}, 1),
}
EXTRA = {
    "stream_structured.jsonl": ([*STREAM, "--json-schema", FACTS_SCHEMA], {}, 0),
    "stream_err401.jsonl": (STREAM, {"FAKE_CLAUDE_MODE": "err401"}, 1),
    "stream_err429_partial.jsonl": (STREAM, {"FAKE_CLAUDE_MODE": "err429"}, 1),
    "stream_nokey.jsonl": (STREAM, {"FAKE_CLAUDE_MODE": "nokey"}, 1),
    "stream_api_retry.jsonl": (
        STREAM,
        {"FAKE_CLAUDE_MODE": "err529", "FAKE_CLAUDE_RETRIES": "2"},
        1,
    ),
}


def prompt_for(real: list[dict[str, Any]], ok: bool) -> str:
    """The prompt the capture was made with: its stand-in echoed it as "ECHO: <prompt>"."""
    result = real[-1]
    if ok and "structured_output" not in result:
        assert result["result"].startswith("ECHO: ")
        return result["result"][len("ECHO: ") :]
    return "We decided to use PostgreSQL instead of MySQL for the billing.\n"


def compare(path: Path, flags: list[str], env: dict[str, str], exit_code: int) -> None:
    text = path.read_text("utf-8")
    if path.suffix == ".txt":
        plain = run_fake([*BASE, *flags], text[len("ECHO: ") :], env)
        assert (plain.stdout, plain.stderr, plain.returncode) == (text, "", exit_code)
        return
    real = parse_lines(text)
    env = dict(env)
    if "structured_output" in real[-1]:
        env["FAKE_CLAUDE_STRUCTURED"] = json.dumps(real[-1]["structured_output"])
    fake_run = run_fake([*BASE, *flags], prompt_for(real, exit_code == 0), env)
    assert fake_run.stderr == ""
    assert fake_run.returncode == exit_code
    fake = parse_lines(fake_run.stdout)
    assert [kind(line) for line in fake] == [kind(line) for line in real]
    for i, (real_line, fake_line) in enumerate(zip(real, fake, strict=True)):
        assert_same_shape(real_line, fake_line, f"{path.name} line {i + 1} ({kind(real_line)})")
    # The texts must match too: reply, streamed pieces, error messages, structured output.
    for field in ("result", "is_error", "api_error_status", "structured_output", "num_turns"):
        assert fake[-1].get(field) == real[-1].get(field), field
    assert list(fake[-1]["modelUsage"]) == list(real[-1]["modelUsage"])
    for name, usage in real[-1]["modelUsage"].items():
        assert fake[-1]["modelUsage"][name]["contextWindow"] == usage["contextWindow"]

    def deltas(lines: list[dict[str, Any]]) -> list[Any]:
        return [
            ln["event"]["delta"] for ln in lines if kind(ln) == "stream_event/content_block_delta"
        ]

    assert deltas(fake) == deltas(real)
    real_assistant = [ln["message"]["content"] for ln in real if ln["type"] == "assistant"]
    assert [ln["message"]["content"] for ln in fake if ln["type"] == "assistant"] == real_assistant


@pytest.mark.parametrize("name", sorted(SHARED))
def test_fake_matches_shared_capture(name: str) -> None:
    folder = requires_shared_captures()
    flags, env, exit_code = SHARED[name]
    compare(folder / name, flags, env, exit_code)


def test_every_shared_capture_is_covered() -> None:
    folder = requires_shared_captures()
    files = {p.name for p in folder.iterdir() if p.suffix in {".json", ".jsonl", ".txt"}}
    assert files == set(SHARED)


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_fake_matches_extra_capture(name: str) -> None:
    flags, env, exit_code = EXTRA[name]
    compare(EXTRA_CAPTURES / name, flags, env, exit_code)


def test_version() -> None:
    run = run_fake(["--version"], "")
    assert (run.stdout, run.returncode) == ("2.1.328 (Claude Code)\n", 0)


@pytest.mark.parametrize(
    ("args", "prompt", "stderr"),
    [
        (["-p", "--bogus"], "hi", "error: unknown option '--bogus'\n"),
        (
            ["-p", "--output-format", "stream-json"],
            "hi",
            "Error: When using --print, --output-format=stream-json requires --verbose\n",
        ),
        (
            ["-p", "--include-partial-messages"],
            "hi",
            "Error: --include-partial-messages requires --print and --output-format=stream-json.\n",
        ),
        (
            ["-p"],
            "",
            "Error: Input must be provided either through stdin or as a prompt argument when "
            "using --print\n",
        ),
    ],
)
def test_usage_errors_like_the_real_cli(args: list[str], prompt: str, stderr: str) -> None:
    run = run_fake(args, prompt)
    assert (run.stdout, run.stderr, run.returncode) == ("", stderr, 1)


def test_text_mode_adds_a_final_newline_only_when_missing() -> None:
    assert run_fake(["-p"], "two\n\n").stdout == "ECHO: two\n\n"
    assert run_fake(["-p"], "one").stdout == "ECHO: one\n"


def test_init_line_without_bare_has_the_extra_keys() -> None:
    run = run_fake(["-p", *STREAM_NOPARTIAL], "hi")
    init = json.loads(run.stdout.splitlines()[0])
    assert "memory_paths" in init
    assert "messaging_socket_path" in init
