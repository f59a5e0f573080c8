"""The user's ``claude`` CLI: the runner of every contained call and its stream events, one
process fed turn by turn, the guard that stops such processes when their host dies, its errors,
and how a client is told to start ``clawback mcp``.

This is the room's door: other rooms import from here, never from the modules behind it (an
import-linter contract holds it). Names load on first use, so importing the door costs nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a door imports nothing until a name is asked for
if TYPE_CHECKING:
    from clawback.core.claude.errors import (
        ClaudeAuthError,
        ClaudeBadOutput,
        ClaudeCancelled,
        ClaudeError,
        ClaudeGone,
        ClaudeNotFound,
        ClaudeNotLoggedIn,
        ClaudeOverloaded,
        ClaudeRateLimited,
        ClaudeTimeout,
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
    from clawback.core.claude.live import LiveClaude
    from clawback.core.claude.mcp import (
        MCP_SCOPES,
        SERVER_KEY,
        TOOL_NAMES,
        McpTools,
        add_argv,
        chat_tools,
        config_block,
        registration,
        remove_argv,
    )
    from clawback.core.claude.runner import ClaudeRunner, TurnResult
    from clawback.core.claude.watchdog import Watchdog

#: Each public name and the module behind the door that defines it.
_HOMES = {
    "ClaudeAuthError": "errors",
    "ClaudeBadOutput": "errors",
    "ClaudeCancelled": "errors",
    "ClaudeError": "errors",
    "ClaudeGone": "errors",
    "ClaudeNotFound": "errors",
    "ClaudeNotLoggedIn": "errors",
    "ClaudeOverloaded": "errors",
    "ClaudeRateLimited": "errors",
    "ClaudeTimeout": "errors",
    "ApiRetry": "events",
    "AssistantMessage": "events",
    "Event": "events",
    "Result": "events",
    "SystemInit": "events",
    "TextDelta": "events",
    "Usage": "events",
    "LiveClaude": "live",
    "MCP_SCOPES": "mcp",
    "McpTools": "mcp",
    "SERVER_KEY": "mcp",
    "TOOL_NAMES": "mcp",
    "add_argv": "mcp",
    "chat_tools": "mcp",
    "config_block": "mcp",
    "registration": "mcp",
    "remove_argv": "mcp",
    "ClaudeRunner": "runner",
    "TurnResult": "runner",
    "Watchdog": "watchdog",
}

__all__ = [
    "MCP_SCOPES",
    "SERVER_KEY",
    "TOOL_NAMES",
    "ApiRetry",
    "AssistantMessage",
    "ClaudeAuthError",
    "ClaudeBadOutput",
    "ClaudeCancelled",
    "ClaudeError",
    "ClaudeGone",
    "ClaudeNotFound",
    "ClaudeNotLoggedIn",
    "ClaudeOverloaded",
    "ClaudeRateLimited",
    "ClaudeRunner",
    "ClaudeTimeout",
    "Event",
    "LiveClaude",
    "McpTools",
    "Result",
    "SystemInit",
    "TextDelta",
    "TurnResult",
    "Usage",
    "Watchdog",
    "add_argv",
    "chat_tools",
    "config_block",
    "registration",
    "remove_argv",
]

if not TYPE_CHECKING:  # hidden from mypy, so a name the door does not export is an error there
    from clawback.core.doors import loader

    __getattr__ = loader(__name__, _HOMES)
    del loader  # the door's names are its own
