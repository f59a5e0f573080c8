"""Chat session rules without storage: keys, freshness, model aliases and chat commands.

Freshness (:class:`FreshnessPolicy`): ``idle`` sessions go stale once ``idle_minutes`` (default
240) have passed since the last update; ``daily`` ones once the most recent ``at_hour`` o'clock
local time (default 4) lies after it. The policy comes from ``chat.session_reset`` /
``idle_minutes`` / ``at_hour``, overridden per session type by ``chat.reset_by_type`` and per
channel by ``chat.reset_by_channel`` (the channel wins).

Commands parsed here (the engine acts on them): ``/new`` and ``/reset`` (optionally
``/new <model> <first message>``, see :func:`parse_reset_trigger`) and ``/label <text>`` (at
most 64 characters, trimmed).
"""

from __future__ import annotations

import getpass
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from clawback.core.config import ChatConfig
from clawback.core.errors import ConfigError, SessionKeyError
from clawback.core.formats.session_keys import parse_session_key, simple_key

LABEL_MAX_CHARS = 64
# Every chat command, as /help lists it. The app acts on /model, /flush, /compact and /help
# itself; /new, /reset and /label go to the engine from the app and `clawback chat` alike.
CHAT_COMMANDS: dict[str, str] = {
    "/new": "/new [model] [text]: start a new session",
    "/reset": "/reset [model] [text]: start over in a new session",
    "/model": "/model NAME: the model for the next turns",
    "/label": "/label TEXT: name this session",
    "/flush": "/flush: save durable memories from this session now",
    "/compact": "/compact: summarize older messages now",
    "/help": "/help: every chat command and key",
}
# What the app's own commands are on the command line (`clawback chat` sends one turn).
CLI_EQUIVALENTS = {
    "/model": "clawback chat --model NAME",
    "/flush": "clawback flush SESSION",
    "/compact": "clawback compact SESSION",
}


def chat_command(text: str) -> str | None:
    """The command ``text`` starts with (``/new``, ...), ``"?"`` for a ``/word`` that is no
    command (a typo must not go to Claude as a message), or ``None`` for a plain message."""
    word = text.strip().partition(" ")[0].lower()
    if not (word.startswith("/") and word[1:].isalpha()):
        return None
    return word if word in CHAT_COMMANDS else "?"


BUILTIN_MODEL_ALIASES = ("opus", "sonnet", "haiku", "opusplan", "default")
_FULL_MODEL_NAME = re.compile(r"^claude-[a-z0-9][a-z0-9.\-]*(\[1m\])?$")
_RESET_TRIGGER = re.compile(r"^/(new|reset)(?:\s+(.*))?$", re.IGNORECASE | re.DOTALL)
_LABEL_COMMAND = re.compile(r"^/label(?:\s+(.*))?$", re.IGNORECASE | re.DOTALL)


def local_session_key(user: str | None = None) -> str:
    """``local:<user>``: the terminal chat's key (``getpass.getuser()`` unless given)."""
    name = user if user is not None else _login_name()
    slug = re.sub(r"[\s:]+", "-", name.strip().lower()).strip("-") or "user"
    try:
        return str(simple_key("local", slug))
    except SessionKeyError:  # a login name that is a reserved word ("thread", ...)
        return str(simple_key("local", f"user-{slug}"))


def _login_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no USER/LOGNAME and no passwd entry (containers)
        return "user"


# --------------------------------------------------------------------------------- freshness


@dataclass(frozen=True)
class FreshnessPolicy:
    """When a session stops being resumable. ``tz`` is the local zone for ``daily`` (None: the
    system's)."""

    mode: Literal["idle", "daily"] = "idle"
    idle_minutes: int = 240
    at_hour: int = 4

    def is_fresh(self, last_update: datetime, now: datetime, tz: tzinfo | None = None) -> bool:
        if self.mode == "idle":
            return now - last_update <= timedelta(minutes=self.idle_minutes)
        return last_update >= self.last_boundary(now, tz)

    def last_boundary(self, now: datetime, tz: tzinfo | None = None) -> datetime:
        """The most recent ``at_hour`` o'clock local time at or before ``now``."""
        local = now.astimezone(tz) if tz is not None else now.astimezone()
        boundary = local.replace(hour=self.at_hour, minute=0, second=0, microsecond=0)
        if boundary > local:
            boundary -= timedelta(days=1)
        return boundary

    @classmethod
    def parse(cls, spec: str, *, setting: str, base: FreshnessPolicy) -> FreshnessPolicy:
        """``idle``, ``idle:MINUTES``, ``daily`` or ``daily:HOUR`` (ConfigError otherwise)."""
        mode, _, value = spec.strip().lower().partition(":")
        try:
            if mode == "idle":
                minutes = int(value) if value else base.idle_minutes
                if minutes <= 0:
                    raise ValueError
                return cls("idle", minutes, base.at_hour)
            if mode == "daily":
                hour = int(value) if value else base.at_hour
                if not 0 <= hour <= 23:
                    raise ValueError
                return cls("daily", base.idle_minutes, hour)
        except ValueError:
            pass
        raise ConfigError(
            f"chat.{setting}: {spec!r} is not 'idle:MINUTES' (MINUTES > 0) or 'daily:HOUR' "
            "(HOUR 0-23)"
        )


def _overrides(
    entries: Sequence[str], setting: str, base: FreshnessPolicy
) -> dict[str, FreshnessPolicy]:
    """``NAME=SPEC`` entries as policies; every entry is checked, used or not."""
    found: dict[str, FreshnessPolicy] = {}
    for entry in entries:
        name, sep, spec = entry.partition("=")
        if not sep or not name.strip() or not spec.strip():
            raise ConfigError(f"chat.{setting}: {entry!r} is not 'NAME=idle:MINUTES|daily:HOUR'")
        found[name.strip().lower()] = FreshnessPolicy.parse(spec, setting=setting, base=base)
    return found


def _session_type(key: str) -> tuple[str | None, str | None]:
    """(type, channel) of a key: type is thread, subagent, main, dm, group, channel or simple."""
    try:
        parsed = parse_session_key(key)
    except SessionKeyError:
        return None, None
    kind: str = parsed.kind
    node = parsed
    while node.parent is not None:
        if node.thread is not None:
            kind = "thread"
            break
        if node.subagent is not None:
            kind = "subagent"
            break
        node = node.parent
    return kind, parsed.channel


def policy_for(key: str, chat: ChatConfig) -> FreshnessPolicy:
    """The freshness policy of ``key``: the channel's override, else the type's, else global."""
    mode: Literal["idle", "daily"] = "daily" if chat.session_reset == "daily" else "idle"
    policy = FreshnessPolicy(mode, chat.idle_minutes, chat.at_hour)
    kind, channel = _session_type(key)
    by_type = _overrides(chat.reset_by_type, "reset_by_type", policy)
    by_channel = _overrides(chat.reset_by_channel, "reset_by_channel", policy)
    if channel and channel in by_channel:
        return by_channel[channel]
    if kind and kind in by_type:
        return by_type[kind]
    return policy


# --------------------------------------------------------------------------------- commands


def _aliases(chat: ChatConfig) -> dict[str, str]:
    table: dict[str, str] = {}
    for entry in chat.model_aliases:
        name, sep, model = entry.partition("=")
        if not sep or not name.strip() or not model.strip():
            raise ConfigError(f"chat.model_aliases: {entry!r} is not 'ALIAS=MODEL'")
        table[name.strip().lower()] = model.strip()
    return table


def resolve_model(word: str, chat: ChatConfig) -> str | None:
    """The model ``word`` names, or None if it names none the config knows.

    Known: the CLI's aliases (opus, sonnet, haiku, ...), full names (``claude-...``) and
    ``chat.model_aliases``. Built-in aliases pass through as typed; ``claude`` resolves them.
    """
    lowered = word.strip().lower()
    custom = _aliases(chat)
    if lowered in custom:
        return custom[lowered]
    if lowered in BUILTIN_MODEL_ALIASES or _FULL_MODEL_NAME.match(lowered):
        return lowered
    return None


@dataclass(frozen=True)
class ResetTrigger:
    """``/new`` or ``/reset``: start a new session; ``message`` (maybe empty) is its first."""

    command: str
    model: str | None
    message: str


def parse_reset_trigger(text: str, chat: ChatConfig) -> ResetTrigger | None:
    """Read a reset trigger: ``/new``, ``/reset``, ``/new rest...`` or ``/new <model> rest...``.

    The first word after the command is a model hint only if it names a model the config knows
    (see :func:`resolve_model`); otherwise it is part of the message.
    """
    match = _RESET_TRIGGER.match(text.strip())
    if match is None:
        return None
    rest = (match.group(2) or "").strip()
    model = None
    if rest:
        word, *remainder = rest.split(maxsplit=1)
        model = resolve_model(word, chat)
        if model is not None:
            rest = remainder[0].strip() if remainder else ""
    return ResetTrigger(match.group(1).lower(), model, rest)


def parse_label_command(text: str) -> str | None:
    """The text after ``/label`` (``""`` for a bare ``/label``), or None if not the command."""
    match = _LABEL_COMMAND.match(text.strip())
    if match is None:
        return None
    return (match.group(1) or "").strip()


def normalize_label(text: str | None) -> str | None:
    """A label as stored: whitespace collapsed, trimmed, at most 64 characters; None if empty."""
    if text is None:
        return None
    label = " ".join(text.split())[:LABEL_MAX_CHARS].rstrip()
    return label or None


# ---------------------------------------------------------------------------------- sessions
