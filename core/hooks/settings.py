"""clawback's entries in a Claude Code settings file: merge them in, take them out, find them.

Claude Code reads hooks from ``~/.claude/settings.json`` (user scope), ``.claude/settings.json``
(project) and ``.claude/settings.local.json`` (local), in the shape
``{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}]}}``.
Those files belong to the person. clawback changes only the entries it wrote itself, known by
the mark at the end of their command (:data:`MARK`; entries an older clawback wrote are known
by their exact old form, :func:`is_ours`), so a person's own ``... clawback ... hook ...``
command is never rewritten, merged or removed. Every other byte of the file stays as it was
(:mod:`clawback.core.jsonedit`); a file that is not a JSON object, is too large or too deep,
is not a regular file or is read-only is refused before anything is written; a symlinked file
is written where the link leads; every write keeps the previous bytes in a new backup beside
it and replaces the file atomically. Installing twice adds nothing; uninstalling gives back the
file as it was before the install (see ``docs/hooks.md``).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawback.core.errors import ClawbackError
from clawback.core.jsonedit import MAX_DEPTH, JsonDocument, JsonEditError, Node
from clawback.core.paths import PRIVATE_FILE
from clawback.core.safefiles import (
    FileRefused,
    is_read_only,
    keep_bytes,
    read_regular,
    replace_through,
    resolved_target,
)

#: Claude Code's event name -> the ``clawback hook`` subcommand that answers it
EVENTS: dict[str, str] = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt",
    "PreCompact": "pre-compact",
    "Stop": "stop",
    "SessionEnd": "session-end",
}
#: The Claude Code settings files clawback's hooks can go in (:func:`settings_path`).
SETTINGS_SCOPES = ("user", "project", "local")
#: Claude Code's own limit on a hook (seconds); clawback bounds itself well below it
#: (``hooks.timeout_s``), so this only matters if clawback itself hangs.
CLAUDE_TIMEOUT_S = 30
#: The end of every command clawback writes: a shell comment, so it changes nothing that runs,
#: and the one sign (with the command's exact form) that an entry is clawback's to change.
MARK = "# added by clawback hooks install"
#: No settings file comes near this; a larger one is not what clawback should be editing.
MAX_SETTINGS_BYTES = 16 << 20
#: What ``created`` names when clawback made the whole ``hooks`` table (see :func:`merge_hooks`).
TABLE = "hooks"
#: The file in the home's ``hooks`` folder that remembers what each install created whole.
CREATED_RECORD = "settings-created.json"


class SettingsError(ClawbackError):
    """A settings file clawback will not edit (not JSON, not the shape Claude Code reads, not a
    regular file, read-only...)."""


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
    raise ClawbackError(f"unknown scope {scope!r} (one of {', '.join(SETTINGS_SCOPES)})")


# ------------------------------------------------------------------------------------ commands


def _quoted(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)


def hook_command(clawback: Sequence[str], home: Path, event: str) -> str:
    """The shell command Claude Code runs for ``event``: the absolute clawback, this home, and
    :data:`MARK`.

    Claude Code runs a hook's command through a shell, so every word is quoted; the home is
    named explicitly, as for the MCP server, so the hook reads the archive this install chose.
    """
    return f"{_quoted([*clawback, '--home', str(home), 'hook', EVENTS[event]])} {MARK}"


def hook_entry(command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": CLAUDE_TIMEOUT_S}


def _runner_home(words: list[str], event: str) -> str | None:
    """The home of ``[clawback, --home, HOME, hook, <event's subcommand>]``, where clawback is
    an absolute ``.../clawback`` or ``/abs/python -m clawback.cli``; ``None`` for anything else."""
    if event not in EVENTS or len(words) not in (5, 7):
        return None
    *runner, flag, home, hook, subcommand = words
    if (flag, hook, subcommand) != ("--home", "hook", EVENTS[event]) or not home:
        return None
    if not all(os.path.isabs(word) for word in (runner[0], home)):
        return None
    if runner[1:] not in ([], ["-m", "clawback.cli"]):
        return None
    return home if runner[1:] or Path(runner[0]).name == "clawback" else None


def _words(command: str) -> list[str] | None:
    try:
        return shlex.split(command)
    except ValueError:
        return None


def ours_home(hook: object, event: str) -> str | None:
    """The clawback home of ``hook`` if clawback wrote it for ``event``; ``None`` otherwise.

    clawback's entries end with :data:`MARK` after the exact command :func:`hook_command`
    writes. Entries an older clawback wrote (before the mark) are recognised only in their
    exact old form: ``{"type": "command", "command": ..., "timeout": 30}`` and nothing more, the
    command quoted word for word as it quoted it. Anything looser is a person's own command.
    """
    if not isinstance(hook, dict) or not isinstance(command := hook.get("command"), str):
        return None
    if command.endswith(" " + MARK):
        words = _words(command[: -len(MARK) - 1])
        return _runner_home(words, event) if words is not None else None
    if hook != hook_entry(command):
        return None
    words = _words(command)
    if words is None or _quoted(words) != command:
        return None
    return _runner_home(words, event)


def is_ours(hook: object, event: str) -> bool:
    return ours_home(hook, event) is not None


# --------------------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Merged:
    """A settings text with clawback's hooks in it, and what the merge created whole (the
    ``hooks`` table, :data:`TABLE`, or an event's list), which an uninstall takes away again."""

    text: str
    created: frozenset[str]
    fresh: bool  # no entry of clawback's was there before


def _document(text: str, where: str) -> JsonDocument:
    try:
        doc = JsonDocument(text)
    except JsonEditError as exc:
        raise SettingsError(
            f"{where}: {exc}; clawback left it unchanged: fix it, then run this again"
        ) from None
    if doc.root.kind != "object":
        raise SettingsError(f"{where}: not a JSON object; clawback left it unchanged")
    return doc


def _hook_lists(doc: JsonDocument, groups: Node) -> list[tuple[int, Node]]:
    """Each group of an event's list with its ``hooks`` array (groups of another shape are
    left alone)."""
    found = []
    for at, group in enumerate(groups.items):
        hooks = group.member("hooks") if group.kind == "object" else None
        if hooks is not None and hooks.kind == "array":
            found.append((at, hooks))
    return found


def merge_hooks(text: str, commands: dict[str, str], *, where: str = "settings") -> Merged:
    """``text`` with clawback's hook for each event in ``commands``.

    An event that already has a clawback entry gets its command updated in place (a reinstall
    after moving the home or the venv) and any second one of clawback's dropped; otherwise a
    group of its own is appended after the person's groups, so their hooks keep running first.
    """
    doc = _document(text, where)
    table = doc.root.member("hooks")
    if table is None:
        value = {event: [{"hooks": [hook_entry(c)]}] for event, c in commands.items()}
        doc.append(doc.root, value, key="hooks")
        return Merged(doc.render(), frozenset({TABLE, *commands}), True)
    if table.kind != "object":
        raise SettingsError(f'{where}: "hooks" is not a JSON object; fix it or move it away')
    created = set()
    fresh = True
    for event, command in commands.items():
        entry = hook_entry(command)
        groups = table.member(event)
        if groups is None:
            doc.append(table, [{"hooks": [entry]}], key=event)
            created.add(event)
            continue
        if groups.kind != "array":
            raise SettingsError(f'{where}: "hooks".{event} is not a list; fix it first')
        found = False
        for at, hooks in _hook_lists(doc, groups):
            mine = [i for i, hook in enumerate(hooks.items) if is_ours(doc.value(hook), event)]
            if not found and mine:
                found, fresh = True, False
                first = hooks.items[mine.pop(0)]
                if doc.value(first) != entry:
                    doc.replace(first, entry)
            if mine and len(mine) == len(hooks.items):
                doc.drop(groups, at)  # a group of duplicates only: one entry is enough
            for i in mine:
                doc.drop(hooks, i)
        if not found:
            doc.append(groups, {"hooks": [entry]})
    return Merged(doc.render(), frozenset(created), fresh)


def remove_hooks(
    text: str, *, created: Collection[str] | None = None, where: str = "settings"
) -> str:
    """``text`` without clawback's hook entries.

    A group left empty by the removal goes too. An event's list, or the whole ``hooks``
    table, left empty goes only if clawback created it (``created``, from :func:`merge_hooks`;
    ``None``, when nothing says, removes what the removal emptied): an empty ``"hooks": {}``
    the person had before stays. Nothing that is not clawback's is touched.
    """
    doc = _document(text, where)
    table = doc.root.member("hooks")
    if table is None or table.kind != "object":
        return text
    emptied = 0
    for event_at, (event, groups) in enumerate(zip(table.keys, table.items, strict=True)):
        if event not in EVENTS or groups.kind != "array":
            continue
        dropped = 0
        for at, hooks in _hook_lists(doc, groups):
            mine = [i for i, hook in enumerate(hooks.items) if is_ours(doc.value(hook), event)]
            if mine and len(mine) == len(hooks.items):
                doc.drop(groups, at)
                dropped += 1
            for i in mine:
                doc.drop(hooks, i)
        if dropped and dropped == len(groups.items) and (created is None or event in created):
            doc.drop(table, event_at)
            emptied += 1
    if emptied and emptied == len(table.items) and (created is None or TABLE in created):
        doc.drop(doc.root, len(doc.root.keys) - 1 - doc.root.keys[::-1].index("hooks"))
    return doc.render()


def installed_events(settings: dict[str, Any]) -> dict[str, str]:
    """Claude Code event -> clawback's command registered for it, in parsed settings."""
    table = settings.get("hooks")
    found: dict[str, str] = {}
    if not isinstance(table, dict):
        return found
    for event, groups in table.items():
        for group in groups if isinstance(groups, list) else []:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            for hook in hooks if isinstance(hooks, list) else []:
                if is_ours(hook, event):
                    found[event] = hook["command"]
    return found


def command_home(command: str, event: str) -> str | None:
    """The home a command of clawback's names (for ``hooks status``: this home or another)."""
    if command.endswith(" " + MARK):
        command = command[: -len(MARK) - 1]
    words = _words(command)
    return _runner_home(words, event) if words is not None else None


# ---------------------------------------------------------------------------------------- file

_BOM = "\ufeff"


def read_settings_text(path: Path) -> str:
    """The text of the settings file at ``path`` (``""`` when there is none), read as a
    regular file of at most :data:`MAX_SETTINGS_BYTES`; one clear error otherwise."""
    try:
        raw = read_regular(path, MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        return ""
    except FileRefused as exc:
        raise SettingsError(str(exc)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsError(f"{path}: not UTF-8 text; clawback left it unchanged") from None


def read_settings(path: Path) -> dict[str, Any]:
    """The settings in ``path`` as values (``{}`` when there is no file), for what only reads
    them (``hooks status``, the plugin's checks, every hook): Python's own decoder, bounded as
    the editor is, so a file the editor refuses is refused here too, in the same words."""
    _, body = _body(read_settings_text(path))
    try:
        data = json.loads(body, parse_constant=_not_json)
    except RecursionError:
        data = None
    except ValueError as exc:
        raise SettingsError(
            f"{path}: not valid JSON ({exc}); clawback left it unchanged: fix it, then run this"
            " again"
        ) from None
    if data is None or _deeper_than(data, MAX_DEPTH):
        raise SettingsError(f"{path}: nested more than {MAX_DEPTH} levels deep; left alone")
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: not a JSON object; clawback left it unchanged")
    return data


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _deeper_than(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend(
                (x, depth + 1) for x in (item.values() if isinstance(item, dict) else item)
            )
    return False


def _body(text: str) -> tuple[str, str]:
    """The JSON text and what goes before it (a byte-order mark); ``{}`` for a blank file."""
    head = _BOM if text.startswith(_BOM) else ""
    body = text[len(head) :]
    return head, body if body.strip() else "{\n}\n"


@dataclass(frozen=True)
class Written:
    """What a write did: the file, its backup (if there was a file before), whether it changed
    at all (installing twice writes nothing the second time), and what the install created."""

    path: Path
    backup: Path | None
    changed: bool
    created: frozenset[str] = frozenset()


def write_settings(path: Path, before: str, after: str) -> Written:
    """Replace the file ``path`` leads to with ``after``, keeping ``before`` in a new backup.

    Nothing is written when nothing changed. A read-only file is refused (clawback could
    replace it, but the person made it read-only). The file keeps its permissions (a new one is
    private to the user); a symlink keeps pointing where it did.
    """
    if after == before:
        return Written(path, None, False)
    target = resolved_target(path)
    if is_read_only(target):
        raise SettingsError(
            f"{path} is read-only; clawback left it unchanged (make it writable to let clawback"
            " change it)"
        )
    backup = None
    try:
        if before or target.exists():
            backup = keep_bytes(path, before.encode("utf-8"))
        elif not path.parent.is_dir():
            path.parent.mkdir(parents=True, mode=0o700)
        replace_through(path, after.encode("utf-8"), mode=PRIVATE_FILE)
    except OSError as exc:
        raise SettingsError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except FileRefused as exc:
        raise SettingsError(str(exc)) from None
    return Written(path, backup, True)


def install(path: Path, commands: dict[str, str], *, record: Path | None = None) -> Written:
    """Merge clawback's hooks into the settings file at ``path`` (see :func:`merge_hooks`).

    ``record`` (a file in the clawback home) remembers what the install created whole, so an
    uninstall takes away exactly that and leaves what the person had, even an empty table.
    """
    before = read_settings_text(path)
    head, body = _body(before)
    merged = merge_hooks(body, commands, where=str(path))
    if merged.text == body:
        return Written(path, None, False)
    written = write_settings(path, before, head + merged.text)
    if record is not None:
        made = read_created(record)
        key = creation_key(path)
        if key in made or merged.fresh:
            made[key] = sorted({*made.get(key, []), *merged.created})
            write_created(record, made)
    return Written(written.path, written.backup, written.changed, merged.created)


def uninstall(path: Path, *, record: Path | None = None) -> Written:
    """Take clawback's hooks out of the settings file at ``path`` (see :func:`remove_hooks`):
    of what the install created, as ``record`` remembers it, nothing is left behind."""
    before = read_settings_text(path)
    if not before.strip():
        return Written(path, None, False)
    made = read_created(record) if record is not None else {}
    key = creation_key(path)
    head, body = _body(before)
    after = head + remove_hooks(body, created=made.get(key), where=str(path))
    written = write_settings(path, before, after)
    if record is not None and key in made:
        del made[key]
        write_created(record, made)
    return written


def installed(path: Path) -> dict[str, str]:
    """Claude Code event -> clawback's command in the settings file at ``path``."""
    return installed_events(read_settings(path))


# ------------------------------------------------------------------------------ what was made


def creation_key(path: Path) -> str:
    """How the record of what an install created names a settings file: where it leads."""
    return str(resolved_target(path.absolute()))


def read_created(record: Path) -> dict[str, list[str]]:
    """What each install created whole, per settings file (``{}`` when unknown)."""
    try:
        data = json.loads(read_regular(record, 1 << 20))
    except (OSError, ValueError, ClawbackError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: [x for x in v if isinstance(x, str)] for k, v in data.items() if isinstance(v, list)}


def write_created(record: Path, created: dict[str, list[str]]) -> None:
    record.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_through(record, json.dumps(created, indent=1, sort_keys=True).encode(), mode=0o600)
