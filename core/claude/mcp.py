"""How ``claude`` (and other MCP clients) start clawback's memory server: the command, the JSON
config block, the ``claude mcp add`` command line, and the flags a chat turn passes; and
:func:`spawn`, which starts that same command apart for clawback's own background work.

Nothing here imports the MCP SDK or talks the protocol; it only describes ``clawback mcp`` to a
client. The command is an absolute path, because a client starts the server with its own
``PATH`` (Claude Code from any folder, Claude Desktop with almost none), and ``CLAWBACK_HOME``
names the home explicitly, so the server reads the same archive whatever the client's
environment says.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawback.core.config import atomic_write_bytes
from clawback.core.paths import HOME_ENV, Paths, ensure_private_dir

SERVER_KEY = "clawback"
TOOL_NAMES = ("memory_search", "memory_get")
ALLOWED_TOOLS = tuple(f"mcp__{SERVER_KEY}__{name}" for name in TOOL_NAMES)
SCOPES = ("user", "project", "local")
SCRIPT = "clawback"


def clawback_command() -> list[str]:
    """The absolute command that runs this clawback: its console script, else ``python -m``.

    The script beside the running interpreter is preferred over ``PATH``: it is the clawback
    this process belongs to (a venv's, pipx's), even when another one comes first on ``PATH``.
    """
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    candidates = [
        here if here is not None and here.name == SCRIPT else None,
        Path(sys.executable).parent / SCRIPT,
        Path(found) if (found := shutil.which(SCRIPT)) else None,
    ]
    for candidate in candidates:
        if candidate is not None and candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate.resolve())]
    return [str(Path(sys.executable).resolve()), "-m", "clawback.cli"]


def spawn(paths: Paths, *args: str) -> None:
    """Start ``clawback --home H <args>`` detached: own session, no stdin/stdout/stderr, and the
    hooks switched off for anything it runs. How clawback starts its own work apart (a hook's
    ingest or flush job, the warm process a search or a chat turn starts): here, beside the
    command it runs, so every layer that starts one reaches it."""
    argv = [*clawback_command(), "--home", str(paths.home), *args]
    subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env={**os.environ, HOME_ENV: str(paths.home), "CLAWBACK_HOOKS": "0"},
    )


def server_entry(home: Path, command: Sequence[str] | None = None) -> dict[str, Any]:
    """One ``mcpServers`` entry: the stdio command, ``mcp`` and the home."""
    argv = list(command or clawback_command())
    return {"command": argv[0], "args": [*argv[1:], "mcp"], "env": {HOME_ENV: str(home)}}


def config_block(home: Path, command: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON for ``claude --mcp-config``, ``.mcp.json``, Claude Desktop or Cursor."""
    return {"mcpServers": {SERVER_KEY: server_entry(home, command)}}


def registration(home: Path, command: Sequence[str] | None = None) -> dict[str, Any]:
    """The server as ``claude mcp add-json`` registers it: always loaded.

    With its built-in tools on, Claude Code defers MCP tools behind a tool search, so a model
    may never see ``memory_search`` at all; ``alwaysLoad`` (a server option Claude Code 2.1.328
    documents as "all tools from this server are always included in the prompt and never
    deferred behind tool search") offers them directly. ``claude mcp add`` has no flag for it,
    hence ``add-json``.
    """
    return {"type": "stdio", **server_entry(home, command), "alwaysLoad": True}


def add_argv(
    claude: str, home: Path, scope: str, command: Sequence[str] | None = None
) -> list[str]:
    """``claude mcp add-json --scope S clawback '{...}'`` (see :func:`registration`)."""
    entry = json.dumps(registration(home, command))
    return [claude, "mcp", "add-json", "--scope", scope, SERVER_KEY, entry]


def remove_argv(claude: str, scope: str | None) -> list[str]:
    argv = [claude, "mcp", "remove"]
    if scope:
        argv += ["--scope", scope]
    return [*argv, SERVER_KEY]


@dataclass(frozen=True)
class McpTools:
    """The MCP flags one ``claude -p`` call gets: a config file and the tools it may call.

    Every call already passes ``--strict-mcp-config`` (the runner's contained flags), so the
    user's own servers never load and a user-scope registration does not load this one twice;
    ``--allowedTools`` is what lets print mode call them at all (it refuses otherwise).
    """

    config: Path
    allowed: tuple[str, ...] = ALLOWED_TOOLS

    def argv(self) -> list[str]:
        # --mcp-config takes several values: the flag after it ends the list.
        return ["--mcp-config", str(self.config), "--allowedTools", ",".join(self.allowed)]


def chat_tools(
    paths: Paths, command: Sequence[str] | None = None, *, write: bool = True
) -> McpTools:
    """The config file chat turns hand to ``claude``, (re)written when it changed.

    ``write=False`` only names it (a dry run writes nothing).
    """
    path = paths.home / "mcp" / f"{SERVER_KEY}.json"
    if not write:
        return McpTools(path)
    data = (json.dumps(config_block(paths.home, command), indent=2) + "\n").encode()
    try:
        current = path.read_bytes()
    except OSError:
        current = b""
    if current != data:
        ensure_private_dir(path.parent)
        atomic_write_bytes(path, data)
    return McpTools(path)
