"""The fake ``claude`` takes turns on stdin (``--input-format stream-json``) as the real one does.

Each capture of a real live conversation (``shared/claude-cli/live/`` and ``captures/`` here) is
replayed through the fake with the same flags and the same stdin lines, sent when the real ones
were (an interrupt once the first piece of the reply is out), and the two outputs are compared
line by line as in ``test_fake_matches_captures.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .fixtures import (
    EXTRA_CAPTURES,
    FAKE_CLAUDE,
    FAKE_ENV_VARS,
    assert_same_shape,
    kind,
    parse_lines,
    requires_shared_captures,
)

LIVE = ["--bare", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
        "--verbose", "--include-partial-messages", "--no-session-persistence", "--tools", ""]  # fmt: skip


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}}


INTERRUPT = {"type": "control_request", "request_id": "req_1", "request": {"subtype": "interrupt"}}
Step = tuple[dict[str, Any], Callable[[dict[str, Any]], bool]]


def is_result(line: dict[str, Any]) -> bool:
    return line.get("type") == "result"


def is_delta(line: dict[str, Any]) -> bool:
    return kind(line) == "stream_event/content_block_delta"


def drive(steps: list[Step], env: dict[str, str], args: list[str] = LIVE) -> tuple[str, int, str]:
    """Run the fake, writing each step's line, then reading until its condition holds."""
    full_env = {k: v for k, v in os.environ.items() if k not in FAKE_ENV_VARS}
    full_env.update(env)
    proc = subprocess.Popen(
        [str(FAKE_CLAUDE), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=full_env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out: list[str] = []
    try:
        for line, until in steps:
            proc.stdin.write((json.dumps(line) + "\n").encode())
            proc.stdin.flush()
            while raw := proc.stdout.readline():
                out.append(raw.decode())
                if until(json.loads(raw)):
                    break
        proc.stdin.close()
        out.append(proc.stdout.read().decode())
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read().decode()
    proc.stdout.close()
    proc.stderr.close()
    return "".join(out), code, stderr


def compare(real_text: str, fake_text: str) -> None:
    real, fake = parse_lines(real_text), parse_lines(fake_text)
    assert [kind(line) for line in fake] == [kind(line) for line in real]
    for i, (real_line, fake_line) in enumerate(zip(real, fake, strict=True)):
        assert_same_shape(real_line, fake_line, f"line {i + 1} ({kind(real_line)})")
    for field in ("result", "is_error", "subtype", "terminal_reason", "result_index"):
        assert [r.get(field) for r in fake if is_result(r)] == [
            r.get(field) for r in real if is_result(r)
        ], field

    def texts(lines: list[dict[str, Any]]) -> list[Any]:
        return [ln["event"]["delta"] for ln in lines if is_delta(ln)] + [
            ln["message"]["content"] for ln in lines if ln["type"] in ("assistant", "user")
        ]

    assert texts(fake) == texts(real)


def test_two_turns_match_the_real_capture() -> None:
    real = (requires_shared_captures() / "live" / "stream_json_two_turns.jsonl").read_text()
    args = [*LIVE[1:], "--system-prompt", "You are a test."]  # captured without --bare
    steps: list[Step] = [
        (user("first message about alpha"), is_result),
        (user("second message about beta"), is_result),
    ]
    fake, code, stderr = drive(steps, {}, args)
    assert (code, stderr) == (0, "")
    compare(real, fake)
    results = [line for line in parse_lines(fake) if is_result(line)]
    # what the real CLI reports: usage per turn, cost and modelUsage added up over the process
    first, second = results
    assert second["total_cost_usd"] > first["total_cost_usd"]
    model = next(iter(second["modelUsage"]))
    assert second["modelUsage"][model]["costUSD"] == pytest.approx(second["total_cost_usd"])
    assert second["model_usage_since_last_result"][model]["costUSD"] == pytest.approx(
        second["total_cost_usd"] - first["total_cost_usd"]
    )


def test_an_interrupt_matches_the_real_capture() -> None:
    real = (EXTRA_CAPTURES / "stream_json_interrupt.jsonl").read_text()
    steps: list[Step] = [
        (user("word " * 40), is_delta),
        (INTERRUPT, is_result),
        (user("after the interrupt"), is_result),
    ]
    fake, code, stderr = drive(steps, {"FAKE_CLAUDE_DELAY": "0.3"})
    assert (code, stderr) == (0, "")
    compare(real, fake)


def test_an_interrupt_before_the_reply_began_matches_the_real_capture() -> None:
    real = (EXTRA_CAPTURES / "stream_json_interrupt_waiting.jsonl").read_text()
    steps: list[Step] = [
        (user("stalled question"), lambda line: kind(line) == "system/status"),
        (INTERRUPT, is_result),
        (user("after the interrupt"), is_result),
    ]
    fake, code, stderr = drive(steps, {"FAKE_CLAUDE_TURN_MODES": "waiting,success"})
    assert (code, stderr) == (0, "")
    compare(real, fake)


def test_an_api_error_mid_conversation_matches_the_real_capture() -> None:
    real = (EXTRA_CAPTURES / "stream_json_err_midway.jsonl").read_text()
    steps: list[Step] = [(user(text), is_result) for text in ("first", "second", "third")]
    fake, code, stderr = drive(steps, {"FAKE_CLAUDE_TURN_MODES": "success,err529,success"})
    assert (code, stderr) == (1, "")  # the real CLI, too, exits 1 once a turn failed
    compare(real, fake)


def test_a_line_that_is_not_json_ends_it_as_the_real_cli_does() -> None:
    full_env = {k: v for k, v in os.environ.items() if k not in FAKE_ENV_VARS}
    proc = subprocess.run([str(FAKE_CLAUDE), *LIVE], input=b"this is not json\n",
                          capture_output=True, env=full_env, timeout=30)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr == (
        b"Error parsing streaming input line (type=unknown, 16 chars): SyntaxError\n"
    )


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (["-p", "--input-format", "stream-json"],
         "Error: --input-format=stream-json requires output-format=stream-json.\n"),
        (["-p", "--input-format", "stream-json", "--output-format", "stream-json"],
         "Error: When using --print, --output-format=stream-json requires --verbose\n"),
    ],
)  # fmt: skip
def test_usage_errors_like_the_real_cli(args: list[str], stderr: str) -> None:
    proc = subprocess.run([str(FAKE_CLAUDE), *args], input=b"", capture_output=True, timeout=30)
    assert (proc.returncode, proc.stderr.decode()) == (1, stderr)


def test_empty_input_ends_at_once_printing_nothing(tmp_path: Path) -> None:
    proc = subprocess.run([str(FAKE_CLAUDE), *LIVE], input=b"", capture_output=True, timeout=30)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
