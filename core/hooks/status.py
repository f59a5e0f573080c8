"""What is installed where, and how the hooks last ran: for ``hooks status`` and ``health``.

It only reads: the three Claude Code settings files, Claude Code's MCP registrations
(``~/.claude.json``, the project's ``.mcp.json``), the hooks log and whether the home's warm
process runs (the one process the hooks and ``clawback search`` may leave behind, for
``hooks.warm_minutes``). A settings file it cannot read is reported as such, never raised.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from clawback.core.claude import SERVER_KEY
from clawback.core.errors import ClawbackError
from clawback.core.hooks.log import last_runs, recent_failures
from clawback.core.hooks.plugin import plugin_state
from clawback.core.hooks.run import SWITCH_ENV
from clawback.core.hooks.settings import (
    EVENTS,
    SETTINGS_SCOPES,
    command_home,
    installed,
    settings_path,
)
from clawback.core.paths import Paths
from clawback.core.safefiles import read_regular
from clawback.core.safejson import loads
from clawback.core.warm import running


def _scope(scope: str, path: Path, home: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"scope": scope, "path": str(path), "events": [], "error": None}
    try:
        found = installed(path)
    except ClawbackError as exc:
        row["error"] = str(exc)
        return row
    row["events"] = [event for event in EVENTS if event in found]
    row["this_home"] = all(
        command_home(command, event) == str(home) for event, command in found.items()
    )
    return row


#: ``~/.claude.json`` keeps every project's history: large, but never this large.
MAX_CLAUDE_JSON_BYTES = 64 << 20


def _json_file(path: Path) -> dict[str, Any]:
    """A JSON object from a file of Claude Code's (``{}`` for anything else: missing, not a
    regular file, too large, too deep, not JSON); status only reports, it never fails."""
    try:
        data = loads(read_regular(path, MAX_CLAUDE_JSON_BYTES).decode("utf-8", "replace"))
    except (OSError, ValueError, ClawbackError):
        return {}
    return data if isinstance(data, dict) else {}


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def mcp_registrations(cwd: Path, user_home: Path | None = None) -> list[dict[str, Any]]:
    """Where Claude Code has clawback's server registered, and whether it is always loaded."""
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    user_file = (
        Path(config_dir) / ".claude.json"
        if config_dir
        else (user_home or Path.home()) / ".claude.json"
    )
    user = _json_file(user_file)
    places = [
        ("user", user.get("mcpServers")),
        ("local", _object(_object(user.get("projects")).get(str(cwd))).get("mcpServers")),
        ("project", _json_file(cwd / ".mcp.json").get("mcpServers")),
    ]
    found = []
    for scope, servers in places:
        entry = servers.get(SERVER_KEY) if isinstance(servers, dict) else None
        if isinstance(entry, dict):
            found.append({"scope": scope, "always_load": entry.get("alwaysLoad") is True})
    return found


def hooks_status(
    paths: Paths, *, cwd: Path, exclude: list[str], claude_home: Path | None = None
) -> dict[str, Any]:
    return {
        "home": str(paths.home),
        "switched_off": os.environ.get(SWITCH_ENV, "").strip() == "0",
        "exclude": exclude,
        "scopes": [
            _scope(scope, settings_path(scope, cwd=cwd, claude_home=claude_home), paths.home)
            for scope in SETTINGS_SCOPES
        ],
        "mcp": mcp_registrations(cwd),
        "plugin": (state.to_json() if (state := plugin_state(cwd, claude_home)) else None),
        "warm_process": running(paths),
        "last_runs": {event: asdict(run) for event, run in last_runs(paths.hooks).items()},
        "failures": [asdict(run) for run in recent_failures(paths.hooks)],
    }
