"""How ``claude`` (and other MCP clients) start clawback's memory server: the command, the JSON
config block, the ``claude mcp add`` command line, and the flags a chat turn passes.

Nothing here imports the MCP SDK or talks the protocol; it only describes ``clawback mcp`` to a
client. The command is an absolute path, because a client starts the server with its own
``PATH`` (Claude Code from any folder, Claude Desktop with almost none), and ``CLAWBACK_HOME``
names the home explicitly, so the server reads the same archive whatever the client's
environment says.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawback.core.config import atomic_write_bytes
from clawback.core.paths import HOME_ENV, Paths, ensure_private_dir
from clawback.core.spawning import clawback_command

SERVER_KEY = "clawback"
TOOL_NAMES = ("memory_search", "memory_get")
ALLOWED_TOOLS = tuple(f"mcp__{SERVER_KEY}__{name}" for name in TOOL_NAMES)
#: Where ``claude mcp add --scope`` registers the server (``~/.claude.json`` for user and
#: local, the project's ``.mcp.json``): other files than the hooks' settings scopes.
MCP_SCOPES = ("user", "project", "local")


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
