"""clawback's Claude Code plugin as Claude Code records it: installed, enabled, and where.

The plugin (the repository's ``plugin/`` folder, listed by ``.claude-plugin/marketplace.json``)
runs the same ``clawback hook`` commands and memory server that ``clawback hooks install
--with-mcp`` writes into settings files. Both at once would run clawback twice per event, so
``hooks install`` and ``mcp install`` refuse while the plugin is enabled
(:func:`refuse_beside_the_plugin`), ``hooks status`` shows it (:func:`plugin_state`), and a hook
the plugin runs steps aside where a settings file already runs clawback's hook for that event
(:func:`settings_hook_scope`).

It only reads Claude Code's files; one it cannot read counts as saying nothing.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawback.core.errors import ClawbackError
from clawback.core.hooks.settings import installed, settings_path

PLUGIN_NAME = "clawback"
#: set by the plugin's launcher (``plugin/scripts/clawback``) for everything it runs
VIA_PLUGIN_ENV = "CLAWBACK_VIA_PLUGIN"
#: Claude Code reads settings in this order, each overriding the one before
_PRECEDENCE = ("user", "project", "local")
#: the most of a Claude Code file read here (settings and plugin records are a few KB)
MAX_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class PluginState:
    """The plugin as Claude Code would load it in a folder: its id (``clawback@<marketplace>``),
    whether it is on there and which settings file decides it, and the install's version and
    folder when Claude Code recorded them."""

    plugin_id: str
    enabled: bool
    scope: str
    version: str | None = None
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.plugin_id,
            "enabled": self.enabled,
            "scope": self.scope,
            "version": self.version,
            "path": self.path,
        }


def plugin_tools() -> tuple[str, ...]:
    """What Claude Code names the plugin server's tools (``mcp__plugin_<plugin>_<server>__<tool>``),
    for the skill and commands that let Claude call them."""
    from clawback.core.claude import SERVER_KEY, TOOL_NAMES  # kept off every hook's imports

    return tuple(f"mcp__plugin_{PLUGIN_NAME}_{SERVER_KEY}__{name}" for name in TOOL_NAMES)


def claude_config_dir(claude_home: Path | None = None) -> Path:
    """Claude Code's own folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    if claude_home is not None:
        return claude_home
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured) if configured else Path.home() / ".claude"


def _is_ours(plugin_id: object) -> bool:
    return isinstance(plugin_id, str) and plugin_id.partition("@")[0] == PLUGIN_NAME


def _json_object(path: Path) -> dict[str, Any]:
    """The JSON object in the regular file ``path`` (at most :data:`MAX_FILE_BYTES`), or ``{}``:
    a FIFO or a device is never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            raw = file.read(MAX_FILE_BYTES + 1)
        data = json.loads(raw) if len(raw) <= MAX_FILE_BYTES else None
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _enabled(scope: str, cwd: Path, claude_home: Path | None) -> dict[str, Any]:
    path = settings_path(scope, cwd=cwd, claude_home=claude_home)
    table = _json_object(path).get("enabledPlugins")
    return table if isinstance(table, dict) else {}


def _installed(claude_home: Path | None) -> dict[str, dict[str, Any]]:
    """Plugin id -> Claude Code's record of its install (the first one listed)."""
    data = _json_object(claude_config_dir(claude_home) / "plugins" / "installed_plugins.json")
    plugins = data.get("plugins")
    found: dict[str, dict[str, Any]] = {}
    for plugin_id, records in (plugins or {}).items() if isinstance(plugins, dict) else []:
        record = records[0] if isinstance(records, list) and records else records
        if _is_ours(plugin_id) and isinstance(record, dict):
            found[plugin_id] = record
    return found


def plugin_state(cwd: Path, claude_home: Path | None = None) -> PluginState | None:
    """clawback's plugin as Claude Code would load it in ``cwd``, or None when no settings file
    names it and Claude Code recorded no install of it."""
    decided: dict[str, tuple[bool, str]] = {}
    for scope in _PRECEDENCE:
        for plugin_id, value in _enabled(scope, cwd, claude_home).items():
            if _is_ours(plugin_id):
                decided[plugin_id] = (value is True, scope)
    installed = _installed(claude_home)
    ids = sorted(set(decided) | set(installed), key=lambda i: not decided.get(i, (False, ""))[0])
    if not ids:
        return None
    plugin_id = ids[0]
    record = installed.get(plugin_id, {})
    enabled, scope = decided.get(plugin_id) or (False, str(record.get("scope") or ""))
    version, path = record.get("version"), record.get("installPath")
    return PluginState(
        plugin_id,
        enabled,
        scope,
        version if isinstance(version, str) else None,
        path if isinstance(path, str) else None,
    )


def settings_hook_scope(claude_event: str, cwd: str, claude_home: Path | None = None) -> str | None:
    """The scope whose settings file runs clawback's hook for ``claude_event`` in ``cwd``, if one
    does: the plugin's own hook then steps aside, so clawback answers the event once."""
    folder = Path(cwd) if cwd else Path.cwd()
    for scope in _PRECEDENCE:
        try:
            if claude_event in installed(settings_path(scope, cwd=folder, claude_home=claude_home)):
                return scope
        except ClawbackError:  # a file clawback cannot read runs no hook of clawback's either
            continue
    return None


def refusal(state: PluginState) -> str:
    """Why ``hooks install`` / ``mcp install`` write nothing while the plugin is enabled."""
    return (
        f"the clawback plugin ({state.plugin_id}, {state.scope} scope) already gives Claude Code "
        "clawback's hooks and memory tools; nothing was written, so nothing runs twice. To use "
        f"settings-file hooks instead, first run: claude plugin uninstall {state.plugin_id}"
    )


def refuse_beside_the_plugin(cwd: Path, claude_home: Path | None = None) -> None:
    """Settings-file hooks or a registered server beside the enabled plugin would run clawback
    twice per event and offer its tools twice: ``hooks install`` and ``mcp install`` write
    nothing and say why."""
    state = plugin_state(cwd, claude_home)
    if state is not None and state.enabled:
        raise ClawbackError(refusal(state))
