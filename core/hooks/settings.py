"""clawback's entries in a Claude Code settings file: merge them in, take them out, find them.

Claude Code reads hooks from ``~/.claude/settings.json`` (user scope), ``.claude/settings.json``
(project) and ``.claude/settings.local.json`` (local), in the shape
``{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}]}}``.
Those files belong to the person: everything that is not clawback's (other keys, other hooks on
the same events, key order) is kept as it was, a file that is not a JSON object is refused
before anything is written, and every write keeps the previous file beside it and replaces the
file atomically. Installing twice adds nothing; uninstalling removes only clawback's entries.

The rules (:func:`merge_hooks`, :func:`remove_hooks`, :func:`installed_events`) are pure
functions on parsed JSON, so they can be tested on any settings a person may have.
"""

from __future__ import annotations

import json
import math
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawback.core.config import atomic_write_bytes
from clawback.core.errors import ClawbackError
from clawback.core.paths import HOME_ENV, PRIVATE_FILE

#: Claude Code's event name -> the ``clawback hook`` subcommand that answers it
EVENTS: dict[str, str] = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt",
    "PreCompact": "pre-compact",
    "Stop": "stop",
    "SessionEnd": "session-end",
}
SCOPES = ("user", "project", "local")
#: Claude Code's own limit on a hook (seconds); clawback bounds itself well below it
#: (``hooks.timeout_s``), so this only matters if clawback itself hangs.
CLAUDE_TIMEOUT_S = 30
BACKUP_SUFFIX = ".clawback-backup"


class SettingsError(ClawbackError):
    """A settings file clawback will not edit (not JSON, or not the shape Claude Code reads)."""


def settings_path(scope: str, *, cwd: Path, claude_home: Path | None = None) -> Path:
    """The settings file of ``scope``: the user's (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``), or
    the project's in ``cwd`` (shared ``settings.json``, or ``settings.local.json`` for just you)."""
    if scope == "user":
        if claude_home is None:
            configured = os.environ.get("CLAUDE_CONFIG_DIR")
            claude_home = Path(configured) if configured else Path.home() / ".claude"
        return claude_home / "settings.json"
    if scope == "project":
        return cwd / ".claude" / "settings.json"
    if scope == "local":
        return cwd / ".claude" / "settings.local.json"
    raise ClawbackError(f"unknown scope {scope!r} (one of {', '.join(SCOPES)})")


# ------------------------------------------------------------------------------------ commands


def hook_command(clawback: Sequence[str], home: Path, event: str) -> str:
    """The shell command Claude Code runs for ``event``: the absolute clawback, this home.

    Claude Code runs a hook's command through a shell, so every word is quoted; the home is
    named explicitly, as for the MCP server, so the hook reads the archive this install chose.
    """
    words = [*clawback, "--home", str(home), "hook", EVENTS[event]]
    return " ".join(shlex.quote(word) for word in words)


def is_clawback_command(command: object) -> bool:
    """Whether a hook command is one :func:`hook_command` wrote (any clawback, any home)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i, word in enumerate(words[:-1]):
        if word == "hook" and words[i + 1] in EVENTS.values():
            runner = words[:i]
            return any(
                Path(w).name == "clawback" or w == "clawback.cli" or w.startswith(f"{HOME_ENV}=")
                for w in runner
            )
    return False


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and is_clawback_command(hook.get("command"))


# --------------------------------------------------------------------------------------- rules


def _hooks_table(settings: dict[str, Any], where: str) -> dict[str, Any] | None:
    table = settings.get("hooks")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise SettingsError(f'{where}: "hooks" is not a JSON object; fix it or move it away')
    for event, groups in table.items():
        if not isinstance(groups, list):
            raise SettingsError(f'{where}: "hooks".{event} is not a list; fix it first')
    return table


def merge_hooks(
    settings: dict[str, Any], commands: dict[str, str], *, where: str = "settings"
) -> dict[str, Any]:
    """``settings`` with clawback's hook for each event in ``commands`` (a new dict).

    An event that already has a clawback entry gets its command updated in place (a reinstall
    after moving the home or the venv); otherwise a group of its own is appended after the
    person's groups, so their hooks keep running first.
    """
    merged = json.loads(json.dumps(settings))  # a deep copy; the input is never changed
    table = _hooks_table(merged, where)
    if table is None:
        table = merged["hooks"] = {}
    for event, command in commands.items():
        entry = {"type": "command", "command": command, "timeout": CLAUDE_TIMEOUT_S}
        groups = table.setdefault(event, [])
        found = False
        for group in groups:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(hooks, list):
                continue
            for i, hook in enumerate(hooks):
                if _is_ours(hook):
                    if found:
                        hooks[i] = None  # a duplicate (a hand copy): one entry is enough
                    else:
                        hooks[i], found = entry, True
            group["hooks"] = [hook for hook in hooks if hook is not None]
        if not found:
            groups.append({"hooks": [entry]})
    return merged


def remove_hooks(settings: dict[str, Any], *, where: str = "settings") -> dict[str, Any]:
    """``settings`` without clawback's hook entries (a new dict).

    A group, event list or ``hooks`` table left empty by the removal goes too; one that was
    empty before is kept, and nothing that is not clawback's is touched.
    """
    cleaned = json.loads(json.dumps(settings))
    table = _hooks_table(cleaned, where)
    if table is None:
        return cleaned
    emptied_table = False
    for event in list(table):
        groups = table[event]
        emptied_list = False
        for group in list(groups):
            hooks = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(hooks, list) or not any(_is_ours(hook) for hook in hooks):
                continue
            group["hooks"] = [hook for hook in hooks if not _is_ours(hook)]
            if not group["hooks"]:
                groups.remove(group)
                emptied_list = not groups
        if emptied_list:
            del table[event]
            emptied_table = not table
    if emptied_table:
        del cleaned["hooks"]
    return cleaned


def installed_events(settings: dict[str, Any]) -> dict[str, str]:
    """Claude Code event -> clawback's command registered for it."""
    table = settings.get("hooks")
    found: dict[str, str] = {}
    if not isinstance(table, dict):
        return found
    for event, groups in table.items():
        for group in groups if isinstance(groups, list) else []:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            for hook in hooks if isinstance(hooks, list) else []:
                if _is_ours(hook):
                    found[event] = hook["command"]
    return found


# ---------------------------------------------------------------------------------------- file


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text} is too large to keep exactly")
    return value


def read_settings(path: Path) -> dict[str, Any]:
    """The settings in ``path`` (``{}`` when there is no file); one clear error otherwise."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8-sig"), parse_float=_finite, parse_constant=_refuse)
    except UnicodeDecodeError:
        raise SettingsError(f"{path}: not UTF-8 text; clawback left it unchanged") from None
    except ValueError as exc:
        raise SettingsError(
            f"{path}: not valid JSON ({exc}); clawback left it unchanged: fix it, then run this"
            " again"
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: not a JSON object; clawback left it unchanged")
    return data


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass(frozen=True)
class Written:
    """What a write did: the file, its backup (if there was a file before), and whether it
    changed at all (installing twice writes nothing the second time)."""

    path: Path
    backup: Path | None
    changed: bool


def write_settings(path: Path, before: dict[str, Any], after: dict[str, Any]) -> Written:
    """Replace ``path`` with ``after``, keeping the old bytes in ``<name>.clawback-backup``.

    Nothing is written when ``after`` equals ``before``. The file keeps its permissions (a new
    one is private to the user).
    """
    if after == before and path.exists():
        return Written(path, None, False)
    backup: Path | None = None
    mode = PRIVATE_FILE
    if path.exists():
        mode = path.stat().st_mode & 0o777
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        atomic_write_bytes(backup, path.read_bytes(), mode=PRIVATE_FILE)
    data = (json.dumps(after, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    atomic_write_bytes(path, data, mode=mode)
    return Written(path, backup, True)


def install(path: Path, commands: dict[str, str]) -> Written:
    before = read_settings(path)
    return write_settings(path, before, merge_hooks(before, commands, where=str(path)))


def uninstall(path: Path) -> Written:
    if not path.exists():
        return Written(path, None, False)
    before = read_settings(path)
    return write_settings(path, before, remove_hooks(before, where=str(path)))


def installed(path: Path) -> dict[str, str]:
    """Claude Code event -> clawback's command in the settings file at ``path``."""
    return installed_events(read_settings(path))
