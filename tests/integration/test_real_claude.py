"""ClaudeRunner against the real ``claude`` CLI, offline, with a loopback stand-in for the API.

Opt-in: set ``CLAWBACK_INTEGRATION=1`` and have Claude Code installed (on PATH, in
``node_modules/.bin/claude``, or named by ``CLAWBACK_INTEGRATION_CLAUDE``), e.g.::

    cd /tmp/claude-cli && npm install @anthropic-ai/claude-code
    CLAWBACK_INTEGRATION=1 PATH=/tmp/claude-cli/node_modules/.bin:$PATH pytest tests/integration

The CLI runs with a throwaway ``HOME``, ``ANTHROPIC_BASE_URL`` pointing at the stand-in on
127.0.0.1, a fake ``ANTHROPIC_API_KEY``, no retries and no telemetry: it talks to nothing else.
The last tests run clawback's memory server under it (``--mcp-config``, a ``clawback chat``
turn, ``clawback mcp install`` then ``claude mcp list``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawback.cli.main import cli
from clawback.core.archive.sessions import session_messages
from clawback.core.claude.errors import (
    ClaudeAPIError,
    ClaudeAuthError,
    ClaudeCancelled,
    ClaudeNotLoggedIn,
    ClaudeOverloaded,
    ClaudeRateLimited,
    ClaudeTimeout,
)
from clawback.core.claude.events import Result, SystemInit, TextDelta
from clawback.core.claude.mcp import ALLOWED_TOOLS, McpTools, config_block
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.home import Home
from clawback.core.spawning import clawback_command
from click.testing import CliRunner

from tests.helpers import run_turn

from ..fake_claude.fixtures import (  # noqa: F401  (no_leftover_processes is a fixture)
    FAKE_CLAUDE,
    assert_same_shape,
    kind,
    no_leftover_processes,
    parse_lines,
)
from ..helpers import cc_assistant, cc_user, write_lines
from .anthropic_standin import AnthropicStandin, tool_results

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]
SYSTEM = "You are clawback's integration-test assistant. Keep answers short."
# Credentials and switches of the developer's own environment that must not leak into the test.
SCRUB = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CONFIG_DIR",
    "CLAUDECODE",
)


def find_real_claude() -> str | None:
    candidates = [
        os.environ.get("CLAWBACK_INTEGRATION_CLAUDE"),
        shutil.which("claude"),
        str(REPO_ROOT / "node_modules" / ".bin" / "claude"),
        str(Path.cwd() / "node_modules" / ".bin" / "claude"),
    ]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and Path(candidate).resolve() != FAKE_CLAUDE:
            return candidate
    return None


@pytest.fixture(scope="module")
def real_claude() -> str:
    if os.environ.get("CLAWBACK_INTEGRATION") != "1":
        pytest.skip("integration test: set CLAWBACK_INTEGRATION=1 to run the real claude CLI")
    found = find_real_claude()
    if found is None:
        pytest.skip(
            "integration test: no real claude CLI found (PATH, node_modules/.bin/claude or "
            "CLAWBACK_INTEGRATION_CLAUDE); install it with `npm install @anthropic-ai/claude-code`"
        )
    return found


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in SCRUB:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def standin() -> Iterator[AnthropicStandin]:
    with AnthropicStandin() as server:
        yield server


def offline_env(standin: AnthropicStandin, home: Path, *, key: bool = True) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": standin.base_url,
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    if key:
        env["ANTHROPIC_API_KEY"] = "sk-test-clawback-integration"
    return env


def make_runner(
    real_claude: str, standin: AnthropicStandin, home: Path, tmp_path: Path, **kwargs: Any
) -> ClaudeRunner:
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    kwargs.setdefault("timeout", 60.0)
    kwargs.setdefault("env", offline_env(standin, home))
    return ClaudeRunner(real_claude, cwd=cwd, **kwargs)


def system_texts(request: dict[str, Any]) -> list[str]:
    system = request.get("system") or []
    if isinstance(system, str):
        return [system]
    return [block.get("text", "") for block in system]


async def test_version(real_claude: str, claude_home: Path, standin: AnthropicStandin) -> None:
    runner = ClaudeRunner(real_claude, env=offline_env(standin, claude_home), cwd=claude_home)
    version = await runner.version()
    assert version.endswith("(Claude Code)")


async def test_a_turn_streams_and_finishes(
    real_claude: str, claude_home: Path, standin: AnthropicStandin, tmp_path: Path
) -> None:
    runner = make_runner(real_claude, standin, claude_home, tmp_path)
    prompt = "Please explain how SQLite WAL mode interacts with concurrent readers.\n"
    events = []
    async with contextlib.aclosing(runner.stream(prompt, system_prompt=SYSTEM)) as stream:
        async for event in stream:
            events.append(event)
    init, result = events[0], events[-1]
    assert isinstance(init, SystemInit) and isinstance(result, Result) and result.usage
    assert result.reply == "ECHO: " + prompt
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == result.reply
    assert result.usage.cache_read == 200 and result.usage.cache_write == 20
    assert result.usage.output == 60 and result.usage.input > 0
    [request] = standin.state.requests
    assert result.model == request["model"] == init.model
    assert result.context_window and result.context_window > 0
    assert SYSTEM in system_texts(request)  # --system-prompt replaced the default prompt
    assert request["tools"] == []  # --tools "" turned the built-in tools off


async def test_unicode_multiline_and_model_alias(
    real_claude: str, claude_home: Path, standin: AnthropicStandin, tmp_path: Path
) -> None:
    runner = make_runner(real_claude, standin, claude_home, tmp_path, model="sonnet")
    prompt = "multi\nline\nprompt with unicode: 日本語 ✓\n"
    result = await runner.run(prompt, system_prompt=SYSTEM)
    assert result.reply == result.partial == "ECHO: " + prompt
    assert result.model == standin.state.requests[-1]["model"]
    assert "sonnet" in (result.model or "")


async def test_structured_output(real_claude: str, claude_home: Path, tmp_path: Path) -> None:
    payload = {"facts": [{"type": "decision", "content": "Use PostgreSQL for billing"}]}
    schema = {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {"type": "object"}}},
        "required": ["facts"],
    }
    with AnthropicStandin(structured=payload) as standin:
        runner = make_runner(real_claude, standin, claude_home, tmp_path)
        result = await runner.run("Extract facts.", system_prompt=SYSTEM, json_schema=schema)
        names = [t["name"] for t in standin.state.requests[0]["tools"]]
    assert "StructuredOutput" in names
    assert result.structured_output == payload
    assert json.loads(result.reply) == payload


@pytest.mark.parametrize(
    ("status", "error"),
    [(401, ClaudeAuthError), (429, ClaudeRateLimited), (529, ClaudeOverloaded)],
)
async def test_api_errors(
    real_claude: str, claude_home: Path, tmp_path: Path, status: int, error: type[ClaudeAPIError]
) -> None:
    with AnthropicStandin(status=status) as standin:
        runner = make_runner(real_claude, standin, claude_home, tmp_path)
        with pytest.raises(error) as caught:
            await runner.run("hello", system_prompt=SYSTEM)
        assert len(standin.state.requests) == 1  # CLAUDE_CODE_MAX_RETRIES=0 was honoured
    assert caught.value.status == status
    assert f"mock {caught.value.result.api_error_type}" in caught.value.result_text


async def test_not_logged_in(
    real_claude: str, claude_home: Path, standin: AnthropicStandin, tmp_path: Path
) -> None:
    env = offline_env(standin, claude_home, key=False)
    runner = make_runner(real_claude, standin, claude_home, tmp_path, env=env)
    with pytest.raises(ClaudeNotLoggedIn, match="claude /login"):
        await runner.run("hello", system_prompt=SYSTEM)
    assert standin.state.requests == []


async def test_timeout_stops_the_cli(real_claude: str, claude_home: Path, tmp_path: Path) -> None:
    with AnthropicStandin(stall=15) as standin:
        runner = make_runner(real_claude, standin, claude_home, tmp_path, timeout=4.0)
        started = time.monotonic()
        with pytest.raises(ClaudeTimeout):
            await runner.run("hello", system_prompt=SYSTEM)
        assert time.monotonic() - started < 10


async def test_cancel_mid_stream_keeps_the_partial_text(
    real_claude: str, claude_home: Path, tmp_path: Path
) -> None:
    prompt = "word " * 60  # eight 40-character pieces, one every 0.3 s
    with AnthropicStandin(delay=0.3) as standin:
        runner = make_runner(real_claude, standin, claude_home, tmp_path)
        deltas: list[str] = []
        caught: list[ClaudeCancelled] = []
        first = asyncio.Event()

        async def turn() -> None:
            try:
                async with contextlib.aclosing(runner.stream(prompt, system_prompt=SYSTEM)) as s:
                    async for event in s:
                        if isinstance(event, TextDelta):
                            deltas.append(event.text)
                            first.set()
            except ClaudeCancelled as exc:
                caught.append(exc)
                raise

        task = asyncio.create_task(turn())
        await asyncio.wait_for(first.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    [exc] = caught
    assert exc.partial_text == "".join(deltas)
    assert ("ECHO: " + prompt).startswith(exc.partial_text) and exc.partial_text


def test_fake_prints_what_the_real_cli_prints_for_clawbacks_command(
    real_claude: str, claude_home: Path, standin: AnthropicStandin, tmp_path: Path
) -> None:
    """Both, run with exactly the runner's argv (no --bare), print the same shapes."""
    runner = ClaudeRunner(real_claude)
    prompt = "multi\nline\nprompt with unicode: 日本語 ✓ and a little more text to split\n"
    outputs = []
    for executable in (real_claude, str(FAKE_CLAUDE)):
        argv = runner.build_argv(executable, system_prompt=SYSTEM, model="sonnet")
        env = {**os.environ, **offline_env(standin, claude_home)}
        proc = subprocess.run(
            argv, input=prompt.encode(), capture_output=True, env=env, cwd=tmp_path, timeout=60
        )
        assert (proc.returncode, proc.stderr) == (0, b"")
        outputs.append(parse_lines(proc.stdout.decode("utf-8")))
    real, fake = outputs
    assert [kind(line) for line in fake] == [kind(line) for line in real]
    for i, (real_line, fake_line) in enumerate(zip(real, fake, strict=True)):
        assert_same_shape(real_line, fake_line, f"line {i + 1} ({kind(real_line)})")
    assert fake[-1]["result"] == real[-1]["result"] == "ECHO: " + prompt


# ------------------------------------------------------------------ the memory server (MCP)
# The stand-in plays a model that calls tools: it answers with a tool_use of
# mcp__clawback__memory_search (then memory_get on the ref it got back), and each test reads the
# next request to see that the tool's answer reached the model.

SID = "c0ffee00-2222-4333-8444-555555555555"
PHRASE = "the zebracorn migration runs every Tuesday at 03:00"
SEARCH = "mcp__clawback__memory_search"
GET = "mcp__clawback__memory_get"


@pytest.fixture
def memory_home(tmp_path: Path) -> Path:
    """A clawback home whose index holds one Claude Code session with :data:`PHRASE`."""
    projects = tmp_path / "projects"
    write_lines(
        projects / "-home-u-proj" / f"{SID}.jsonl",
        [cc_user(SID, "u1", "When does the zebracorn migration run?"),
         cc_assistant(SID, "a1", [{"type": "text", "text": f"Noted: {PHRASE}."}])],
    )  # fmt: skip
    home = Home.open(tmp_path / "clawback-home")
    home.config.sources.claude_code_path = str(projects)
    home.config.sources.openclaw_path = str(tmp_path / "none")
    home.ingest_all()
    home.close()
    return tmp_path / "clawback-home"


def search_then_get(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The model's moves: search for the phrase, read the first hit whole, then answer."""
    results = tool_results(body)
    if not results:
        return SEARCH, {"query": "zebracorn Tuesday"}
    if len(results) == 1:
        ref = json.loads(results[0])["results"][0]["ref"]
        return GET, {"ref": ref, "context": 0}
    return None


def test_claude_p_searches_and_reads_the_archive_through_mcp_config(
    real_claude: str, claude_home: Path, memory_home: Path, tmp_path: Path
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(config_block(memory_home)))
    with AnthropicStandin(tool_script=search_then_get) as standin:
        argv = [real_claude, "-p", "--output-format", "json", "--no-session-persistence",
                "--tools", "", *McpTools(config).argv(), "--system-prompt", "Use the memory."]  # fmt: skip
        env = {**os.environ, **offline_env(standin, claude_home)}
        proc = subprocess.run(argv, input=b"When does the zebracorn migration run?",
                              capture_output=True, env=env, cwd=tmp_path, timeout=120)  # fmt: skip
        requests = standin.state.requests
    assert proc.returncode == 0, proc.stdout
    assert {SEARCH, GET} <= {tool["name"] for tool in requests[0]["tools"]}
    found = json.loads(tool_results(requests[1])[0])
    assert (
        found["results"][0]["session_id"] == SID and "zebracorn" in found["results"][0]["snippet"]
    )
    read = json.loads(tool_results(requests[2])[1])
    assert read["messages"][0]["text"] == f"Noted: {PHRASE}."  # the whole message
    assert json.loads(proc.stdout)["num_turns"] == 3


#: longer than Claude Code's server/discover probe waits (2.1.328 then sends initialize behind it)
SLOW_START_S = 4.0


def test_a_memory_server_slower_than_the_discover_probe_still_answers_tool_calls(
    real_claude: str, claude_home: Path, memory_home: Path, tmp_path: Path
) -> None:
    """Under load the server may start after Claude Code's discover probe timed out: the probe
    and an initialize then arrive together. The front once accepted the initialize while the
    SDK had opened a modern connection, and every tool call was refused for a missing envelope;
    now both take the era the first request opened, as the SDK alone does."""
    late = [sys.executable, "-c", "import os, sys, time; time.sleep(float(sys.argv[1])); "
            "os.execv(sys.argv[2], sys.argv[2:])", str(SLOW_START_S), *clawback_command()]  # fmt: skip
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(config_block(memory_home, late)))
    with AnthropicStandin(tool_script=search_for("zebracorn migration")) as standin:
        argv = [real_claude, "-p", "--output-format", "json", "--no-session-persistence",
                "--tools", "", *McpTools(config).argv(), "--system-prompt", "Use the memory."]  # fmt: skip
        env = {**os.environ, **offline_env(standin, claude_home)}
        proc = subprocess.run(argv, input=b"When does the zebracorn migration run?",
                              capture_output=True, env=env, cwd=tmp_path, timeout=120)  # fmt: skip
        requests = standin.state.requests
    assert proc.returncode == 0, proc.stdout
    assert {SEARCH, GET} <= {tool["name"] for tool in requests[0]["tools"]}
    answer = tool_results(requests[1])[0]
    assert answer.startswith("{"), answer  # not "params._meta is missing the required envelope"
    found = json.loads(answer)
    assert any("03:00" in hit["snippet"] for hit in found["results"]), found


def search_for(query: str) -> Any:
    """The model's moves: one search for ``query``, then an answer."""

    def script(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        return None if tool_results(body) else (SEARCH, {"query": query})

    return script


async def test_a_clawback_chat_turn_offers_and_uses_the_memory_tools(
    real_claude: str, claude_home: Path, memory_home: Path, tmp_path: Path
) -> None:
    home = Home.open(memory_home)
    try:
        with AnthropicStandin(tool_script=search_then_get) as standin:
            runner = ClaudeRunner(real_claude, env=offline_env(standin, claude_home), cwd=tmp_path,
                                  timeout=120)  # fmt: skip
            engine = home.chat_engine(runner=runner)
            outcome = await run_turn(engine, "When does the zebracorn migration run?")
            requests = standin.state.requests
        assert not outcome.is_error and outcome.reply == "Done."
        assert {SEARCH, GET} <= {tool["name"] for tool in requests[0]["tools"]}
        assert PHRASE in tool_results(requests[2])[1]
        system = " ".join(block.get("text", "") for block in requests[0]["system"])
        assert "memory_search" in system
        shown = [m for m in session_messages(home.db, outcome.session.id) if m.kind == "tool_use"]
        assert [m.display for m in shown] == [
            "memory_search: zebracorn Tuesday",
            f"memory_get: {json.loads(tool_results(requests[2])[0])['results'][0]['ref']}",
        ]
    finally:
        home.close()


def test_mcp_install_registers_the_server_and_claude_mcp_list_connects_it(
    real_claude: str, claude_home: Path, memory_home: Path, tmp_path: Path
) -> None:
    env = {"HOME": str(claude_home), "CLAWBACK_CLAUDE": real_claude, "CLAWBACK_HOME": str(memory_home),
           "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}  # fmt: skip
    runner = CliRunner()
    installed = runner.invoke(cli, ["mcp", "install"], env=env)
    assert installed.exit_code == 0, installed.output
    registered = json.loads((claude_home / ".claude.json").read_text())["mcpServers"]["clawback"]
    assert registered["env"] == {"CLAWBACK_HOME": str(memory_home)}
    assert registered["args"][-1] == "mcp" and Path(registered["command"]).is_absolute()
    listed = subprocess.run([real_claude, "mcp", "list"], capture_output=True, text=True,
                            env={**os.environ, **env}, cwd=tmp_path, timeout=120)  # fmt: skip
    assert "clawback:" in listed.stdout and "✔ Connected" in listed.stdout, listed.stdout
    again = runner.invoke(cli, ["mcp", "install"], env=env)  # re-installing updates in place
    assert again.exit_code == 0, again.output
    # What a user then does: plain `claude -p` (built-in tools on, no --mcp-config), tools allowed.
    with AnthropicStandin(tool_script=search_then_get) as standin:
        asked = subprocess.run(
            [real_claude, "-p", "--output-format", "json", "--no-session-persistence",
             "--allowedTools", ",".join(ALLOWED_TOOLS)],
            input=b"When does the zebracorn migration run?", capture_output=True,
            env={**os.environ, **env, **offline_env(standin, claude_home)}, cwd=tmp_path,
            timeout=120,
        )  # fmt: skip
        requests = standin.state.requests
    assert asked.returncode == 0, asked.stdout
    # With the built-in tools on, the CLI defers MCP tools behind ToolSearch unless the server is
    # registered with alwaysLoad (as `mcp install` does): then both are offered directly.
    offered = {tool["name"]: tool for tool in requests[0]["tools"]}
    assert "DeferredToolPlaceholder" in offered  # other tools are still deferred
    assert {SEARCH, GET} <= set(offered)
    assert not any(offered[name].get("defer_loading") for name in (SEARCH, GET))
    read = json.loads(tool_results(requests[-1])[1])
    assert read["messages"][0]["text"] == f"Noted: {PHRASE}."
    removed = runner.invoke(cli, ["mcp", "uninstall"], env=env)
    assert removed.exit_code == 0, removed.output
    assert "clawback" not in json.loads((claude_home / ".claude.json").read_text())["mcpServers"]
    assert ALLOWED_TOOLS == (SEARCH, GET)


async def test_clawbacks_calls_fire_no_user_hook_and_load_no_user_server(
    real_claude: str, claude_home: Path, memory_home: Path, tmp_path: Path
) -> None:
    """``--settings '{"disableAllHooks": true}'`` and ``--strict-mcp-config``, as the real CLI
    takes them: a hook and an MCP server the user registered stay out of clawback's calls (a
    clawback hook would otherwise fire inside clawback's own call, and recurse)."""
    fired = tmp_path / "hook-fired"
    hook = {"type": "command", "command": f"touch {fired}"}
    events = ("SessionStart", "UserPromptSubmit")
    settings = {"hooks": {event: [{"hooks": [hook]}] for event in events}}
    (claude_home / ".claude").mkdir()
    (claude_home / ".claude" / "settings.json").write_text(json.dumps(settings))
    users_own = config_block(memory_home)["mcpServers"]["clawback"]
    (claude_home / ".claude.json").write_text(json.dumps({"mcpServers": {"users-own": users_own}}))
    with AnthropicStandin() as standin:
        runner = make_runner(real_claude, standin, claude_home, tmp_path)
        result = await runner.run("hello", system_prompt=SYSTEM)
        assert result.reply == "ECHO: hello" and not fired.exists()
        assert standin.state.requests[0]["tools"] == []  # the user's server was not offered

        # The same call without the two flags fires the hook and offers the user's server.
        argv = runner.build_argv(runner.executable(), system_prompt=SYSTEM)
        i = argv.index("--settings")
        loose = [a for a in argv[:i] + argv[i + 2 :] if a != "--strict-mcp-config"]
        env = {**os.environ, **offline_env(standin, claude_home)}
        subprocess.run(loose, input=b"hello", capture_output=True, env=env, cwd=tmp_path,
                       timeout=120, check=True)  # fmt: skip
        assert fired.exists()
        offered = {tool["name"] for tool in standin.state.requests[-1]["tools"]}
        assert "mcp__users-own__memory_search" in offered
