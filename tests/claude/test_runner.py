"""ClaudeRunner against the fake ``claude``: the command it runs, every outcome, no leftovers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import time
from pathlib import Path

import pytest
from clawback.core.claude import process as process_module
from clawback.core.claude.errors import (
    ClaudeAPIError,
    ClaudeAuthError,
    ClaudeBadOutput,
    ClaudeCancelled,
    ClaudeError,
    ClaudeKilled,
    ClaudeNotFound,
    ClaudeNotLoggedIn,
    ClaudeOverloaded,
    ClaudeRateLimited,
    ClaudeTimeout,
    error_for_result,
)
from clawback.core.claude.events import (
    ApiRetry,
    AssistantMessage,
    Event,
    Result,
    SystemInit,
    TextDelta,
    Usage,
)
from clawback.core.claude.runner import ClaudeRunner, TurnResult
from clawback.core.config import ChatConfig
from clawback.core.errors import ClawbackError

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FakeClaude,
    fake_claude_fixture,
    no_leftover_processes,
    wait_gone,
)
from tests.helpers import until

SYSTEM = "You are clawback's test assistant."
LONG_PROMPT = "Tell me about write-ahead logging, readers, writers and checkpoints in SQLite."


# ----------------------------------------------------------------------------- the command


async def test_runs_the_exact_command_without_a_shell(fake_claude: FakeClaude) -> None:
    await fake_claude.runner().run("hello", system_prompt=SYSTEM)
    call = fake_claude.last_call()
    assert call["argv"] == [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--no-session-persistence",
        "--strict-mcp-config",
        "--settings",
        '{"disableAllHooks": true}',
        "--tools",
        "",
        "--system-prompt",
        SYSTEM,
    ]
    assert "--bare" not in call["argv"]
    assert call["stdin"] == "hello"  # the prompt goes on stdin, never on the command line
    assert call["cwd"] == str(fake_claude.cwd)
    assert call["pgid"] == call["pid"] == call["sid"]  # its own session and process group


async def test_model_schema_and_extra_args(fake_claude: FakeClaude) -> None:
    runner = fake_claude.runner(model="opus", extra_args=["--effort", "low"])
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    await runner.run("hi", system_prompt="S", model="sonnet", json_schema=schema)
    argv = fake_claude.last_call()["argv"]
    assert argv[-8:] == [
        "--system-prompt",
        "S",
        "--model",
        "sonnet",
        "--json-schema",
        '{"type":"object","properties":{"n":{"type":"integer"}}}',
        "--effort",
        "low",
    ]
    await runner.run("hi", system_prompt="S")
    argv = fake_claude.last_call()["argv"]
    assert argv[argv.index("--model") + 1] == "opus"


async def test_environment_is_inherited_plus_configured(
    fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/somewhere")
    runner = fake_claude.runner(env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    await runner.run("hi", system_prompt=SYSTEM)
    env = fake_claude.last_call()["env"]
    assert env["CLAUDE_CONFIG_DIR"] == "/somewhere"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"


async def test_default_working_directory_is_private_and_empty(
    fake_claude: FakeClaude, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWBACK_HOME", str(tmp_path / "home"))
    runner = ClaudeRunner("claude", timeout=10)
    await runner.run("hi", system_prompt=SYSTEM)
    cwd = Path(fake_claude.last_call()["cwd"])
    assert cwd == (tmp_path / "home").resolve() / "claude-cwd"
    assert stat.S_IMODE(cwd.stat().st_mode) == 0o700
    assert list(cwd.iterdir()) == []


async def test_clawback_claude_overrides_the_configured_command(fake_claude: FakeClaude) -> None:
    runner = ClaudeRunner("no-such-claude-anywhere", cwd=fake_claude.cwd, timeout=10)
    assert (await runner.run("hi", system_prompt=SYSTEM)).reply == "ECHO: hi"


async def test_from_config(fake_claude: FakeClaude) -> None:
    chat = ChatConfig(model="haiku", extra_args=["--effort", "low"], timeout_seconds=7)
    runner = ClaudeRunner.from_config(chat, cwd=fake_claude.cwd)
    assert (runner.command, runner.timeout, runner.model) == ("claude", 7.0, "haiku")
    result = await runner.run("hi", system_prompt=SYSTEM)
    assert result.model == "claude-haiku-5-5"
    assert fake_claude.last_call()["argv"][-4:] == ["--model", "haiku", "--effort", "low"]


async def test_huge_system_prompt_goes_through_a_file(fake_claude: FakeClaude) -> None:
    system = "remember this. " * 10_000  # 150 kB: over the kernel's limit for one argument
    await fake_claude.runner().run("hi", system_prompt=system)
    argv = fake_claude.last_call()["argv"]
    assert "--system-prompt" not in argv
    path = Path(argv[argv.index("--system-prompt-file") + 1])
    assert not path.exists()  # removed after the call


async def test_version(fake_claude: FakeClaude) -> None:
    assert await fake_claude.runner().version() == "2.1.328 (Claude Code)"


# ----------------------------------------------------------------------------- success


async def test_stream_yields_events_in_order(fake_claude: FakeClaude) -> None:
    events: list[Event] = []
    async with contextlib.aclosing(
        fake_claude.runner().stream(LONG_PROMPT, system_prompt=SYSTEM)
    ) as stream:
        async for event in stream:
            events.append(event)
    assert isinstance(events[0], SystemInit)
    assert isinstance(events[-1], Result)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 3
    assert "".join(deltas) == "ECHO: " + LONG_PROMPT == events[-1].reply
    assert [type(e) for e in events[1:-1]] == [TextDelta] * 3 + [AssistantMessage]


async def test_run_collects_reply_usage_model_and_cost(fake_claude: FakeClaude) -> None:
    fake_claude.usage(input=12, output=34, cache_read=5000, cache_write=600)
    fake_claude.context_window(200_000)
    result = await fake_claude.runner().run("hello", system_prompt=SYSTEM)
    assert isinstance(result, TurnResult)
    assert result.reply == result.partial == "ECHO: hello"
    assert result.usage == Usage(input=12, output=34, cache_read=5000, cache_write=600)
    assert result.usage.total_tokens == 5612
    assert (result.model, result.context_window) == ("claude-opus-5-5", 200_000)
    assert result.cost > 0
    assert not result.is_error
    assert result.session_id and result.num_turns == 1


async def test_reply_override_and_unicode(fake_claude: FakeClaude) -> None:
    prompt = "multi\nline\nprompt with unicode: 日本語 ✓\n"
    assert (await fake_claude.runner().run(prompt, system_prompt=SYSTEM)).reply == "ECHO: " + prompt
    fake_claude.reply("NO_REPLY")
    assert (await fake_claude.runner().run(prompt, system_prompt=SYSTEM)).reply == "NO_REPLY"


async def test_lines_longer_than_any_buffer(fake_claude: FakeClaude) -> None:
    reply = "".join(f"{i:05d} lorem ipsum dolor sit amet\n" for i in range(3_500))  # ~105 kB
    fake_claude.reply(reply)
    result = await fake_claude.runner().run("hi", system_prompt=SYSTEM)
    assert result.reply == result.partial == reply


async def test_without_partial_messages_the_whole_message_is_the_text(
    fake_claude: FakeClaude,
) -> None:
    fake_claude.mode("nopartial")
    seen: list[Event] = []
    result = await fake_claude.runner().run("hello", system_prompt=SYSTEM, on_event=seen.append)
    assert not [e for e in seen if isinstance(e, TextDelta)]
    assert result.reply == result.partial == "ECHO: hello"


async def test_structured_output(fake_claude: FakeClaude) -> None:
    payload = {"facts": [{"type": "decision", "content": "Use PostgreSQL"}]}
    fake_claude.structured(payload)
    schema = {"type": "object", "properties": {"facts": {"type": "array"}}}
    result = await fake_claude.runner().run("facts", system_prompt=SYSTEM, json_schema=schema)
    assert result.structured_output == payload
    assert json.loads(result.reply) == payload
    assert result.num_turns == 2


async def test_structured_output_defaults_to_the_schema_shape(fake_claude: FakeClaude) -> None:
    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "tags": {"type": "array"}},
    }
    result = await fake_claude.runner().run("x", system_prompt=SYSTEM, json_schema=schema)
    assert result.structured_output == {"title": "ECHO: x", "tags": ["ECHO: x"]}


async def test_retries_are_reported(fake_claude: FakeClaude) -> None:
    fake_claude.mode("err529").set_env("FAKE_CLAUDE_RETRIES", "2")
    seen: list[Event] = []
    with pytest.raises(ClaudeOverloaded):
        await fake_claude.runner().run("hi", system_prompt=SYSTEM, on_event=seen.append)
    assert [e.attempt for e in seen if isinstance(e, ApiRetry)] == [1, 2]


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("mode", "error", "status", "says"),
    [
        ("err401", ClaudeAuthError, 401, "claude /login"),
        ("err429", ClaudeRateLimited, 429, "rate-limiting"),
        ("err529", ClaudeOverloaded, 529, "overloaded"),
        ("nokey", ClaudeNotLoggedIn, None, "claude /login"),
    ],
)
async def test_api_errors(
    fake_claude: FakeClaude, mode: str, error: type[ClaudeAPIError], status: int | None, says: str
) -> None:
    fake_claude.mode(mode)
    with pytest.raises(error) as caught:
        await fake_claude.runner().run("hi", system_prompt=SYSTEM)
    exc = caught.value
    assert isinstance(exc, ClaudeAPIError)
    assert isinstance(exc, ClawbackError)
    assert exc.status == status
    assert says in str(exc)
    assert exc.result_text and exc.result_text in str(exc)  # the CLI's own words
    assert exc.partial_text == ""  # the synthetic error message is not reply text


def test_other_api_errors_keep_the_cli_text() -> None:
    result = Result(reply="API Error: 500 boom", is_error=True, usage=Usage(), api_error_status=500)
    exc = error_for_result(result, "half a repl")
    assert type(exc) is ClaudeAPIError
    assert "API Error: 500 boom" in str(exc)
    assert (exc.status, exc.partial_text) == (500, "half a repl")


async def test_not_json(fake_claude: FakeClaude) -> None:
    fake_claude.mode("badjson")
    with pytest.raises(ClaudeBadOutput) as caught:
        await fake_claude.runner().run("hi", system_prompt=SYSTEM)
    assert caught.value.line == "Welcome to Claude Code! This is not JSON."
    assert "Welcome to Claude Code! This is not JSON." in str(caught.value)


async def test_endless_garbage_is_cut_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    noisy = tmp_path / "noisy"
    noisy.write_text("#!/bin/sh\nwhile :; do echo 'y y y y y y y y y y y y y y y y'; done\n")
    noisy.chmod(0o755)
    monkeypatch.setenv("CLAWBACK_CLAUDE", str(noisy))
    started = time.monotonic()
    with pytest.raises(ClaudeBadOutput, match="y y y"):
        await ClaudeRunner(cwd=tmp_path, timeout=10, kill_grace=1).run("hi", system_prompt=SYSTEM)
    assert time.monotonic() - started < 5


async def test_killed_mid_stream_keeps_the_partial_text(fake_claude: FakeClaude) -> None:
    fake_claude.mode("killed")
    with pytest.raises(ClaudeKilled) as caught:
        await fake_claude.runner().run(LONG_PROMPT, system_prompt=SYSTEM)
    exc = caught.value
    assert (exc.returncode, exc.signal_name) == (-9, "SIGKILL")
    assert "SIGKILL" in str(exc)
    expected = "ECHO: " + LONG_PROMPT
    assert exc.partial_text == expected[:80]


async def test_crash_reports_exit_code_and_stderr(fake_claude: FakeClaude) -> None:
    fake_claude.mode("crash")
    with pytest.raises(ClaudeKilled) as caught:
        await fake_claude.runner().run("hi", system_prompt=SYSTEM)
    assert caught.value.returncode == 1
    assert "exited with code 1" in str(caught.value)
    assert "fake claude crashed on purpose" in str(caught.value)


async def test_a_bad_extra_arg_shows_the_cli_complaint(fake_claude: FakeClaude) -> None:
    with pytest.raises(ClaudeKilled, match="unknown option '--bogus'"):
        await fake_claude.runner(extra_args=["--bogus"]).run("hi", system_prompt=SYSTEM)


async def test_missing_executable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ClaudeNotFound) as caught:
        await ClaudeRunner("claude", cwd=tmp_path).run("hi", system_prompt=SYSTEM)
    message = str(caught.value)
    assert "npm install -g @anthropic-ai/claude-code" in message
    assert "CLAWBACK_CLAUDE" in message
    assert caught.value.command == "claude"


async def test_missing_or_unrunnable_clawback_claude(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CLAWBACK_CLAUDE", str(tmp_path / "nope"))
    with pytest.raises(ClaudeNotFound, match="nope"):
        await ClaudeRunner(cwd=tmp_path).run("hi", system_prompt=SYSTEM)
    not_executable = tmp_path / "claude"
    not_executable.write_text("#!/bin/sh\n")
    monkeypatch.setenv("CLAWBACK_CLAUDE", str(not_executable))
    with pytest.raises(ClaudeNotFound):
        await ClaudeRunner(cwd=tmp_path).run("hi", system_prompt=SYSTEM)


# ----------------------------------------------------------------------------- time and cancel


async def test_hang_times_out_and_the_process_is_gone(fake_claude: FakeClaude) -> None:
    fake_claude.mode("hang")
    started = time.monotonic()
    with pytest.raises(ClaudeTimeout) as caught:
        # Long enough for the fake to start and record its call even on a busy machine.
        await fake_claude.runner(timeout=1.5).run("hi", system_prompt=SYSTEM)
    elapsed = time.monotonic() - started
    assert 1.5 <= elapsed < 5.0
    assert "1.5 s" in str(caught.value)
    assert caught.value.partial_text == ""
    assert await wait_gone(fake_claude.last_call()["pid"])


async def test_stall_times_out_with_the_partial_text(fake_claude: FakeClaude) -> None:
    fake_claude.mode("stall")
    with pytest.raises(ClaudeTimeout) as caught:
        await fake_claude.runner(timeout=1.0).run(LONG_PROMPT, system_prompt=SYSTEM)
    assert caught.value.partial_text == ("ECHO: " + LONG_PROMPT)[:80]


async def test_sigterm_ignored_means_sigkill_after_the_grace(fake_claude: FakeClaude) -> None:
    fake_claude.mode("hang").set_env("FAKE_CLAUDE_IGNORE_SIGTERM", "1")
    fake_claude.set_env("FAKE_CLAUDE_SPAWN_CHILD", "1")
    started = time.monotonic()
    with pytest.raises(ClaudeTimeout):
        # The timeout leaves the fake time to install its SIGTERM handler even on a busy machine.
        await fake_claude.runner(timeout=1.5, kill_grace=0.5).run("hi", system_prompt=SYSTEM)
    assert 1.95 <= time.monotonic() - started < 5.0
    call = fake_claude.last_call()
    assert await wait_gone(call["pid"])
    assert await wait_gone(call["child_pid"])  # the whole process group


async def test_cancel_keeps_partial_text_and_stops_the_group(fake_claude: FakeClaude) -> None:
    fake_claude.mode("slow").delay(0.2).set_env("FAKE_CLAUDE_SPAWN_CHILD", "1")
    runner = fake_claude.runner()
    deltas: list[str] = []
    two_deltas = asyncio.Event()
    caught: list[ClaudeCancelled] = []

    async def chat_turn() -> None:
        try:
            async with contextlib.aclosing(runner.stream(LONG_PROMPT, system_prompt=SYSTEM)) as s:
                async for event in s:
                    if isinstance(event, TextDelta):
                        deltas.append(event.text)
                        if len(deltas) == 2:  # cancel mid-stream, not at its first word
                            two_deltas.set()
        except ClaudeCancelled as exc:
            caught.append(exc)
            raise

    task = asyncio.create_task(chat_turn())
    await asyncio.wait_for(two_deltas.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    [exc] = caught
    assert issubclass(ClaudeCancelled, ClaudeError)
    assert issubclass(ClaudeCancelled, asyncio.CancelledError)
    assert exc.partial_text == "".join(deltas)
    assert 1 <= len(deltas) < 10
    assert ("ECHO: " + LONG_PROMPT).startswith(exc.partial_text)
    call = fake_claude.last_call()
    assert await wait_gone(call["pid"])
    assert await wait_gone(call["child_pid"])


async def test_cancel_run_inside_wait_for(fake_claude: FakeClaude) -> None:
    """wait_for's timeout cancels a running ``run()``; the timeout is given once claude runs (a
    slow reply takes seconds more), where a fixed 0.5 s could pass before it even started."""
    fake_claude.mode("slow")
    run = asyncio.ensure_future(fake_claude.runner().run(LONG_PROMPT, system_prompt=SYSTEM))
    await until(fake_claude.calls, "claude to start")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run, 0.01)
    assert await wait_gone(fake_claude.last_call()["pid"])


async def test_closing_the_stream_early_stops_the_process(fake_claude: FakeClaude) -> None:
    fake_claude.mode("slow")
    started = time.monotonic()
    async with contextlib.aclosing(
        fake_claude.runner().stream(LONG_PROMPT, system_prompt=SYSTEM)
    ) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                break
    assert time.monotonic() - started < 3
    assert await wait_gone(fake_claude.last_call()["pid"])


async def test_runner_is_reusable_and_concurrent(fake_claude: FakeClaude) -> None:
    runner = fake_claude.runner()
    results = await asyncio.gather(
        *(runner.run(f"prompt {i}", system_prompt=SYSTEM) for i in range(4))
    )
    assert [r.reply for r in results] == [f"ECHO: prompt {i}" for i in range(4)]
    assert len({c["pid"] for c in fake_claude.calls()}) == 4
    assert all(os.path.isabs(c["cwd"]) for c in fake_claude.calls())


async def test_a_second_cancel_cuts_the_grace_short(
    fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_claude.mode("hang").set_env("FAKE_CLAUDE_IGNORE_SIGTERM", "1")
    terminated = asyncio.Event()
    signal_group = process_module.signal_group

    def spy(pid: int, sig: signal.Signals) -> None:
        signal_group(pid, sig)
        if sig == signal.SIGTERM:
            terminated.set()

    monkeypatch.setattr(process_module, "signal_group", spy)
    runner = fake_claude.runner(kill_grace=5.0)
    task = asyncio.create_task(runner.run("hi", system_prompt=SYSTEM))
    await until(fake_claude.calls, "claude to start")
    started = time.monotonic()
    task.cancel()
    await asyncio.wait_for(terminated.wait(), 5)  # in the grace period: the fake ignores SIGTERM
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 2
    assert await wait_gone(fake_claude.last_call()["pid"])


async def test_a_stopped_groups_pipes_are_read_to_their_end() -> None:
    """After a timed-out call the pipes must end with the call, not when their transport is
    collected (once after a test's event loop had closed: "Event loop is closed")."""
    proc = await asyncio.create_subprocess_exec(
        "sh", "-c", "echo noise >&2; echo started; sleep 30",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None
    stderr = asyncio.ensure_future(process_module.drain_tail(proc.stderr, 100))
    assert await proc.stdout.readline() == b"started\n"
    await process_module.stop_group(proc, clean=False, kill_grace=0.5)
    started = time.monotonic()
    await process_module.settle_pipes(proc, stderr)
    assert time.monotonic() - started < process_module.PIPES_SETTLE_SECONDS
    assert proc.stdout.at_eof()
    assert stderr.done() and stderr.result() == b"noise\n"
