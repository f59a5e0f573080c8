"""The plugin's launcher (``plugin/scripts/clawback``): the installed clawback when there is one;
without it, nothing for Claude, nothing failing, and the person told once how to install it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "plugin" / "scripts" / "clawback"
#: folders with the tools the launcher uses (sh, sed, cat, mkdir) and no clawback
BASE_PATH = "/usr/bin:/bin"
SHELLS = [shell for shell in ("sh", "dash", "bash") if shutil.which(shell, path=BASE_PATH)]
START = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup", "cwd": "/w"}


@pytest.fixture(autouse=True)
def _no_clawback_on_the_base_path() -> None:
    assert shutil.which("clawback", path=BASE_PATH) is None, "the tests need a PATH without it"


def env_for(tmp_path: Path, **more: str) -> dict[str, str]:
    home = tmp_path / "person"
    home.mkdir(exist_ok=True)
    return {"PATH": BASE_PATH, "HOME": str(home), **more}


def launch(
    *args: str, env: dict[str, str], stdin: str = "", shell: str = "sh", launcher: Path = LAUNCHER
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [shell, str(launcher), *args], input=stdin, capture_output=True, text=True, env=env,
        timeout=30,
    )  # fmt: skip


def fake_clawback(folder: Path) -> Path:
    """A `clawback` that writes down how it was run and answers with exit code 3."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "clawback"
    script.write_text(
        "#!/bin/sh\n"
        'out="$(dirname "$0")/ran.json"\n'
        'printf \'{"args": "%s", "via_plugin": "%s", "stdin": "%s"}\\n\' "$*" '
        '"$CLAWBACK_VIA_PLUGIN" "$(cat)" > "$out"\n'
        "echo answered\nexit 3\n"
    )
    script.chmod(0o755)
    return folder / "ran.json"


@pytest.mark.parametrize("shell", SHELLS)
def test_the_installed_clawback_runs_with_the_arguments_stdin_and_the_plugin_mark(
    tmp_path: Path, shell: str
) -> None:
    ran = fake_clawback(tmp_path / "bin")
    env = env_for(tmp_path, PATH=f"{tmp_path / 'bin'}:{BASE_PATH}")
    done = launch("hook", "user-prompt", env=env, stdin="EVENT", shell=shell)
    assert (done.returncode, done.stdout) == (3, "answered\n")
    assert json.loads(ran.read_text()) == {
        "args": "hook user-prompt",
        "via_plugin": "1",
        "stdin": "EVENT",
    }


def test_where_uv_tool_and_pipx_put_it_is_found_off_the_path(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    ran = fake_clawback(Path(env["HOME"]) / ".local" / "bin")
    done = launch("mcp", env=env)
    assert done.stdout == "answered\n" and json.loads(ran.read_text())["args"] == "mcp"


@pytest.mark.parametrize("shell", SHELLS)
def test_without_clawback_a_session_start_tells_the_person_once_and_claude_nothing(
    tmp_path: Path, shell: str
) -> None:
    data = tmp_path / "plugin-data"
    env = env_for(tmp_path, CLAUDE_PLUGIN_DATA=str(data))
    first = launch("hook", "session-start", env=env, stdin=json.dumps(START), shell=shell)
    assert first.returncode == 0 and first.stderr == ""
    told = json.loads(first.stdout)
    assert list(told) == ["systemMessage"]  # shown to the person; no context for the model
    message = told["systemMessage"]
    assert "not installed" in message and "(Said once.)" in message
    assert f"uv tool install '{ROOT}[embeddings]'" in message  # this checkout, ready to paste
    assert f"pipx install '{ROOT}[embeddings]'" in message
    again = launch("hook", "session-start", env=env, stdin=json.dumps(START), shell=shell)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    for name in ("user-prompt", "pre-compact", "stop", "session-end"):
        other = launch("hook", name, env=env, stdin="{}", shell=shell)
        assert (other.returncode, other.stdout, other.stderr) == (0, "", ""), name


def test_a_copy_away_from_the_checkout_points_to_the_readme(tmp_path: Path) -> None:
    """Where Claude Code cached the plugin alone (a marketplace added from GitHub), or under a
    path that JSON or a shell would need quoted, the message names no path."""
    cached = tmp_path / "plugins" / "cache" / "clawback" / "clawback" / "0.1.0"  # as 2.1.328 does
    shutil.copytree(ROOT / "plugin", cached)
    odd = tmp_path / "odd\"folder's" / "clawback"
    shutil.copytree(ROOT / "plugin", odd / "plugin")
    (odd / "pyproject.toml").write_text("")
    for launcher in (cached / "scripts" / "clawback", odd / "plugin" / "scripts" / "clawback"):
        done = launch("hook", "session-start", env=env_for(tmp_path), launcher=launcher)
        message = json.loads(done.stdout)["systemMessage"]
        assert "Install section of clawback's README" in message and str(tmp_path) not in message


def test_without_a_data_folder_it_tells_at_every_start(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    for _ in range(2):
        assert "systemMessage" in launch("hook", "session-start", env=env).stdout


@pytest.mark.parametrize("shell", SHELLS)
def test_without_clawback_the_memory_server_answers_with_no_tools(
    tmp_path: Path, shell: str
) -> None:
    """Claude Code tells the model about a server that failed to start, and keeps the failure
    for a while after clawback is installed: so the launcher serves none, connected."""
    lines = [
        {"method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
         "clientInfo": {"name": "claude-code", "version": "2.1.328"}}, "jsonrpc": "2.0", "id": 0},
        {"method": "notifications/initialized", "jsonrpc": "2.0"},
        {"method": "tools/list", "jsonrpc": "2.0", "id": 1},
        {"method": "resources/list", "jsonrpc": "2.0", "id": "r-2"},
        {"method": "ping", "jsonrpc": "2.0", "id": 3},
    ]  # fmt: skip
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    done = launch("mcp", env=env_for(tmp_path), stdin=stdin, shell=shell)
    assert done.returncode == 0 and done.stderr == ""
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [0, 1, "r-2", 3]  # the notification gets no answer
    assert answers[0]["result"]["protocolVersion"] == "2025-11-25"
    assert answers[0]["result"]["capabilities"] == {"tools": {}}
    assert answers[1]["result"] == {"tools": []}
    assert answers[2]["error"]["code"] == -32601
    assert answers[3]["result"] == {}


async def test_an_mcp_client_connects_to_the_stand_in_server(tmp_path: Path) -> None:
    server = StdioServerParameters(command=str(LAUNCHER), args=["mcp"], env=env_for(tmp_path))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        started = await session.initialize()
        assert started.server_info.name == "clawback"
        assert (await session.list_tools()).tools == []
