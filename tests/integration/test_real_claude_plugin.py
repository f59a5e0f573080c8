"""clawback's Claude Code plugin in the real ``claude`` CLI, offline, against the API stand-in.

Opt-in like the other real-CLI tests (``CLAWBACK_INTEGRATION=1``). What a person does, with the
README's own commands: install the plugin from the clone (the repository is the marketplace),
work with ``claude -p``; the request that
reaches the API holds the brief, the recall and the memory tools. Then the slash commands, the
plugin beside settings-file hooks (clawback answers each event once), the plugin without clawback
installed (the person is told once, Claude is told nothing), and an uninstall that leaves
nothing of clawback in Claude Code's files.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from clawback.core.hooks.log import read_runs
from clawback.core.hooks.plugin import plugin_tools
from clawback.core.paths import Paths

from ..cli_runner import CLAWBACK, run_cli
from ..docs.test_install import plugin_lines
from ..helpers import wait_until
from .anthropic_standin import AnthropicStandin, tool_results
from .test_real_claude import REPO_ROOT, claude_home, offline_env, real_claude  # noqa: F401
from .test_real_claude_hooks import DECISION, OLDER, PROMPT, request_text, setup  # noqa: F401

pytestmark = pytest.mark.integration

PLUGIN_ID = "clawback@clawback"
SEARCH, GET = plugin_tools()


def quiet_env(claude_home: Path) -> dict[str, str]:  # noqa: F811
    return {**os.environ, "HOME": str(claude_home), "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}  # fmt: skip


def claude_cmd(real_claude: str, claude_home: Path, *args: str) -> str:  # noqa: F811
    done = subprocess.run(
        [real_claude, *args], capture_output=True, text=True, env=quiet_env(claude_home),
        stdin=subprocess.DEVNULL, timeout=120, cwd=REPO_ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def readme_plugin_line(verb: str) -> list[str]:
    """The README's own ``claude plugin <verb> ...`` line, as its words after ``claude``."""
    [words] = [words for words in plugin_lines() if words[2] == verb]
    return words[1:]


def install_plugin(real_claude: str, claude_home: Path) -> None:  # noqa: F811
    """As the README says, from the clone (the repository root is the marketplace)."""
    claude_cmd(real_claude, claude_home, *readme_plugin_line("install"))


def path_with_clawback(tmp_path: Path) -> str:
    """PATH as the person's shell has it after `uv tool install`: clawback on it."""
    folder = tmp_path / "tool-bin"
    if not folder.exists():
        folder.mkdir()
        (folder / "clawback").symlink_to(CLAWBACK)
    return f"{folder}{os.pathsep}{path_without_clawback()}"


def path_without_clawback() -> str:
    folders = os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    return os.pathsep.join(f for f in folders if f and not (Path(f) / "clawback").exists())


def ask(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    cwd: Path,
    prompt: str,
    *,
    path: str,
    cb: Path | None = None,
    tool_script: Any = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``claude -p PROMPT`` in ``cwd``: the stream-json lines it printed and the API requests."""
    with AnthropicStandin(tool_script=tool_script) as standin:
        # Claude Code waits MCP_CONNECT_TIMEOUT_MS (5 s) for an always-loaded server before the
        # first request; clawback mcp starts in about 1 s, more on a loaded test machine.
        env = {**os.environ, **offline_env(standin, claude_home), "PATH": path,
               "CLAWBACK_CLAUDE": real_claude, "MCP_CONNECT_TIMEOUT_MS": "60000"}  # fmt: skip
        if cb is not None:
            env["CLAWBACK_HOME"] = str(cb)
        done = subprocess.run(
            [real_claude, "-p", "--output-format", "stream-json", "--verbose", prompt],
            capture_output=True, text=True, env=env, cwd=cwd, timeout=180,
        )  # fmt: skip
        requests = list(standin.state.requests)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()], requests


def init_of(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return next(line for line in lines if line.get("subtype") == "init")


def hook_outputs(lines: list[dict[str, Any]], event: str) -> list[str]:
    return [
        line.get("output", "")
        for line in lines
        if line.get("subtype") == "hook_response" and line.get("hook_event") == event
    ]


def test_the_marketplace_and_the_plugin_validate_strictly(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
) -> None:
    for folder in (REPO_ROOT, REPO_ROOT / "plugin"):
        said = claude_cmd(real_claude, claude_home, "plugin", "validate", "--strict", str(folder))
        assert "Validation passed" in said


def test_the_plugin_gives_the_brief_recall_and_tools_then_uninstalls_clean(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    setup: dict[str, Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    project, cb = setup["project"], setup["cb"]
    install_plugin(real_claude, claude_home)
    lines, requests = ask(
        real_claude, claude_home, project, PROMPT, path=path_with_clawback(tmp_path), cb=cb
    )
    init = init_of(lines)
    assert {"name": "clawback", "source": PLUGIN_ID} in [
        {k: p[k] for k in ("name", "source")} for p in init["plugins"]
    ]
    # the init line may come before the server connects (a snapshot); the request shows the tools
    assert [(m["name"], m["source"]) for m in init["mcp_servers"]] == [
        ("plugin:clawback:clawback", "plugin")
    ]
    sent = request_text(requests[-1])
    assert "SessionStart hook additional context" in sent
    assert "Releases are cut on Fridays." in sent  # the brief: MEMORY.md
    assert "UserPromptSubmit hook additional context" in sent
    assert DECISION.replace("'", "\\u0027") in sent or DECISION in sent  # the recall
    everything = json.dumps(requests[-1], ensure_ascii=False)
    assert "- clawback:memory: Reach into the person's clawback memory" in everything  # the skill
    offered = {tool["name"]: tool for tool in requests[-1]["tools"]}
    assert {SEARCH, GET} <= set(offered)  # offered directly: the server is always loaded
    assert not any(offered[name].get("defer_loading") for name in (SEARCH, GET))
    runs = read_runs(Paths.resolve(cb).hooks)
    assert [r.outcome for r in runs if r.event == "session-start"] == ["ok"]  # once, no double
    session_id = init["session_id"]

    def indexed() -> bool:
        found = run_cli("search", "cache layer", "--json", "--session", session_id, home=cb)
        return found.returncode == 0 and bool(json.loads(found.stdout))

    wait_until(indexed, "the session indexed by the plugin's stop / session-end hooks", timeout=30)
    on = {"HOME": str(claude_home)}
    plugin = json.loads(run_cli("hooks", "status", "--json", home=cb, env=on).stdout)["plugin"]
    assert (plugin["id"], plugin["enabled"], plugin["scope"]) == (PLUGIN_ID, True, "user")
    refused = run_cli("hooks", "install", home=cb, env=on)
    assert refused.returncode == 1 and "claude plugin uninstall clawback@clawback" in refused.stderr

    claude_cmd(real_claude, claude_home, *readme_plugin_line("uninstall"))
    claude_cmd(real_claude, claude_home, *readme_plugin_line("marketplace"))
    dot_claude = claude_home / ".claude"
    for name in ("settings.json", "plugins/installed_plugins.json",
                 "plugins/known_marketplaces.json"):  # fmt: skip
        assert "clawback" not in (dot_claude / name).read_text(), name
    assert not list((dot_claude / "plugins" / "data").glob("clawback*"))
    # Claude Code keeps its copy of an uninstalled plugin marked orphaned and deletes it later
    for copy in (dot_claude / "plugins" / "cache" / "clawback").glob("*/*"):
        assert (copy / ".orphaned_at").is_file(), copy
    lines, requests = ask(
        real_claude, claude_home, project, PROMPT, path=path_with_clawback(tmp_path), cb=cb
    )
    assert "hook additional context" not in request_text(requests[-1])
    assert not {SEARCH, GET} & {tool["name"] for tool in requests[-1]["tools"]}
    assert indexed()  # the person's memory stays: uninstalling the plugin deletes no archive


def test_without_clawback_the_person_is_told_once_and_claude_nothing(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    project = tmp_path / "work"
    project.mkdir()
    install_plugin(real_claude, claude_home)
    path = path_without_clawback()
    lines, requests = ask(real_claude, claude_home, project, "hello", path=path)
    [told] = hook_outputs(lines, "SessionStart")
    message = json.loads(told)["systemMessage"]  # what Claude Code shows the person
    assert "clawback command is not installed" in message and "uv tool install" in message
    [server] = init_of(lines)["mcp_servers"]
    assert server["name"] == "plugin:clawback:clawback"
    assert server["status"] != "failed"  # a server with no tools: no failure to tell the model of
    for request in requests:
        sent = json.dumps(request, ensure_ascii=False)
        assert "not installed" not in sent and "hook additional context" not in sent
        assert "failed to connect" not in sent
        assert not [t for t in request.get("tools", []) if "plugin_clawback" in t["name"]]
    lines, _ = ask(real_claude, claude_home, project, "hello again", path=path)
    assert hook_outputs(lines, "SessionStart") == [""]  # said once


def test_beside_settings_file_hooks_the_plugins_step_aside(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    setup: dict[str, Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    project, cb = setup["project"], setup["cb"]
    installed = run_cli("hooks", "install", home=cb, env={"HOME": str(claude_home)})
    assert installed.returncode == 0, installed.stderr
    install_plugin(real_claude, claude_home)
    _, requests = ask(
        real_claude, claude_home, project, PROMPT, path=path_with_clawback(tmp_path), cb=cb
    )
    assert request_text(requests[-1]).count("Releases are cut on Fridays.") == 1
    runs = read_runs(Paths.resolve(cb).hooks)
    for event in ("session-start", "user-prompt"):
        outcomes = sorted(r.outcome for r in runs if r.event == event)
        assert outcomes == ["ok", "skipped"], (event, outcomes)
    skipped = next(r for r in runs if r.outcome == "skipped")
    assert "user settings file runs clawback's hook" in skipped.detail


def search_once(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    return None if tool_results(body) else (SEARCH, {"query": "cache layer"})


def remember_once(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    command = (
        "clawback memory remember - <<'CLAWBACK_NOTE'\nFreeze releases on the 20th.\nCLAWBACK_NOTE"
    )
    return None if tool_results(body) else ("Bash", {"command": command, "description": "keep it"})


def test_the_slash_commands_search_remember_and_report(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    setup: dict[str, Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    project, cb = setup["project"], setup["cb"]
    install_plugin(real_claude, claude_home)
    path = path_with_clawback(tmp_path)
    _, requests = ask(real_claude, claude_home, project, "/clawback:search cache layer",
                      path=path, cb=cb, tool_script=search_once)  # fmt: skip
    assert json.dumps("<query>\ncache layer\n</query>")[1:-1] in request_text(requests[0])
    answers = tool_results(requests[-1])
    assert answers and answers[0].startswith("{"), answers
    hits = json.loads(answers[0])["results"]
    assert OLDER in {hit["session_id"] for hit in hits}  # the session that settled it

    _, requests = ask(real_claude, claude_home, project, "/clawback:remember Freeze releases",
                      path=path, cb=cb, tool_script=remember_once)  # fmt: skip
    [said] = tool_results(requests[-1])
    note = Path(said.strip().splitlines()[-1])
    assert note.parent == (cb / "workspace" / "memory").resolve()
    assert "· remembered\n\nFreeze releases on the 20th.\n" in note.read_text()

    _, requests = ask(real_claude, claude_home, project, "/clawback:status", path=path, cb=cb)
    sent = request_text(requests[-1])
    assert f"Claude Code hooks for the clawback home {cb}" in sent  # `hooks status` ran
    assert "Database " in sent  # and `health`
