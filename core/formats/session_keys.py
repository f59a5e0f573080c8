"""Session keys: OpenClaw's grammar for naming a conversation, and clawback's simple keys.

The grammar and the rules this module settles (case, separators, reserved words, ids that hold
colons) are in ``docs/formats.md``.

This module never touches files or the database, and raises only
:class:`~clawback.core.errors.SessionKeyError` for a malformed key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from clawback.core.errors import SessionKeyError

Kind = Literal["main", "dm", "group", "channel", "simple"]

AGENT_PREFIX = "agent"
MAIN = "main"
DM = "dm"
GROUP = "group"
CHANNEL = "channel"
THREAD = "thread"
SUBAGENT = "subagent"

# Words that would change how a key reads back if they appeared as a channel or account name.
RESERVED_NAMES = frozenset({DM, GROUP, CHANNEL, THREAD, SUBAGENT})
# Markers that end an id and start a suffix.
SUFFIX_MARKERS = frozenset({THREAD, SUBAGENT})

_KIND_BY_WORD: dict[str, Kind] = {DM: "dm", GROUP: "group", CHANNEL: "channel"}

_WHITESPACE_RUN = re.compile(r"\s+")
_SPACE_AROUND_COLON = re.compile(r"\s*:\s*")


@dataclass(frozen=True, slots=True)
class SessionKey:
    """One parsed session key.

    A key with a ``thread`` or ``subagent`` suffix keeps the key it hangs off in ``parent``
    (exactly one of ``thread`` / ``subagent`` is set on it) and repeats the parent's base fields,
    so callers can read ``key.channel`` without walking the chain.
    """

    kind: Kind
    agent_id: str | None = None  # None for simple keys
    channel: str | None = None
    account: str | None = None
    peer: str | None = None  # DM peer, group / channel id, or a simple key's user id
    thread: str | None = None
    subagent: str | None = None
    parent: SessionKey | None = None

    def __str__(self) -> str:
        if self.parent is not None:
            if self.thread is not None:
                return f"{self.parent}:{THREAD}:{self.thread}"
            return f"{self.parent}:{SUBAGENT}:{self.subagent}"
        if self.kind == "simple":
            return f"{self.channel}:{self.peer}"
        head = f"{AGENT_PREFIX}:{self.agent_id}"
        if self.kind == "main":
            return f"{head}:{MAIN}"
        if self.kind == "dm":
            middle = "".join(f":{part}" for part in (self.channel, self.account) if part)
            return f"{head}{middle}:{DM}:{self.peer}"
        return f"{head}:{self.channel}:{self.kind}:{self.peer}"

    @property
    def root(self) -> SessionKey:
        """The key with every thread / subagent suffix removed."""
        key = self
        while key.parent is not None:
            key = key.parent
        return key


def normalize_session_key(text: str) -> str:
    """Return the canonical spelling of ``text`` for comparison and lookup.

    Trims, lowercases, drops whitespace around ``:`` and collapses any other whitespace run to
    one space (which :func:`parse_session_key` then rejects, naming the segment). Idempotent.
    """
    text = _SPACE_AROUND_COLON.sub(":", text.strip().lower())
    return _WHITESPACE_RUN.sub(" ", text)


def key_channel(text: str) -> str | None:
    """The channel a session key names; ``None`` when it names none or is no valid key."""
    try:
        return parse_session_key(text).channel
    except SessionKeyError:
        return None


def parse_session_key(text: str) -> SessionKey:
    """Parse ``text`` (any case, surrounding whitespace allowed) into a :class:`SessionKey`."""
    if not isinstance(text, str):
        raise SessionKeyError(f"a session key must be text, not {type(text).__name__}")
    normalized = normalize_session_key(text)
    if not normalized:
        raise SessionKeyError("the session key is empty")
    parts = normalized.split(":")
    for index, part in enumerate(parts):
        if not part:
            raise SessionKeyError(
                f"session key {normalized!r} has an empty segment at position {index + 1}"
            )
        if " " in part:
            raise SessionKeyError(f"session key segment {part!r} contains whitespace")
    if parts[0] == AGENT_PREFIX:
        key, rest = _parse_agent_base(normalized, parts)
    else:
        key, rest = _parse_simple_base(normalized, parts)
    return _apply_suffixes(normalized, key, rest)


def _take_id(parts: list[str]) -> tuple[str | None, list[str]]:
    """Split ``parts`` into an id (up to the first suffix marker) and the suffix parts."""
    for index, part in enumerate(parts):
        if part in SUFFIX_MARKERS:
            return (":".join(parts[:index]) or None), parts[index:]
    return (":".join(parts) or None), []


def _parse_agent_base(text: str, parts: list[str]) -> tuple[SessionKey, list[str]]:
    if len(parts) < 3:
        raise SessionKeyError(
            f"session key {text!r} is incomplete: expected 'agent:<agentId>:<rest>'"
        )
    agent_id, rest = parts[1], parts[2:]
    if rest[0] == MAIN and (len(rest) == 1 or rest[1] in SUFFIX_MARKERS):
        return SessionKey(kind="main", agent_id=agent_id), rest[1:]
    if rest[0] == DM:
        return _with_id(text, "dm", agent_id, None, None, rest[1:])
    if len(rest) >= 2 and rest[1] in _KIND_BY_WORD:
        channel = _check_name(text, rest[0], "channel")
        return _with_id(text, _KIND_BY_WORD[rest[1]], agent_id, channel, None, rest[2:])
    if len(rest) >= 3 and rest[2] == DM:
        channel = _check_name(text, rest[0], "channel")
        account = _check_name(text, rest[1], "account")
        return _with_id(text, "dm", agent_id, channel, account, rest[3:])
    raise SessionKeyError(
        f"session key {text!r} does not follow the grammar: after 'agent:{agent_id}:' expected "
        "'main', 'dm:<peer>', '<channel>:dm:<peer>', '<channel>:<account>:dm:<peer>', "
        "'<channel>:group:<id>' or '<channel>:channel:<id>'"
    )


def _with_id(
    text: str,
    kind: Kind,
    agent_id: str,
    channel: str | None,
    account: str | None,
    parts: list[str],
) -> tuple[SessionKey, list[str]]:
    ident, rest = _take_id(parts)
    if ident is None:
        what = "peer" if kind == "dm" else f"{kind} id"
        raise SessionKeyError(f"session key {text!r} is missing the {what}")
    key = SessionKey(kind=kind, agent_id=agent_id, channel=channel, account=account, peer=ident)
    return key, rest


def _parse_simple_base(text: str, parts: list[str]) -> tuple[SessionKey, list[str]]:
    if len(parts) < 2:
        raise SessionKeyError(
            f"session key {text!r} is neither 'agent:<agentId>:...' nor '<channel>:<userId>'"
        )
    user, rest = _take_id(parts[1:])
    if user is None:
        raise SessionKeyError(f"session key {text!r} is missing the user id after the channel")
    return SessionKey(kind="simple", channel=parts[0], peer=user), rest


def _apply_suffixes(text: str, key: SessionKey, parts: list[str]) -> SessionKey:
    index = 0
    while index < len(parts):
        marker = parts[index]
        if marker not in SUFFIX_MARKERS:
            raise SessionKeyError(
                f"session key {text!r}: unexpected {marker!r}; "
                "expected ':thread:<id>' or ':subagent:<key>'"
            )
        if index + 1 >= len(parts):
            raise SessionKeyError(f"session key {text!r} ends with {marker!r} but no id after it")
        value = parts[index + 1]
        if value in SUFFIX_MARKERS:
            raise SessionKeyError(f"session key {text!r}: {marker!r} is followed by {value!r}")
        key = _child(key, marker, value)
        index += 2
    return key


def _child(parent: SessionKey, marker: str, value: str) -> SessionKey:
    return SessionKey(
        kind=parent.kind,
        agent_id=parent.agent_id,
        channel=parent.channel,
        account=parent.account,
        peer=parent.peer,
        thread=value if marker == THREAD else None,
        subagent=value if marker == SUBAGENT else None,
        parent=parent,
    )


# --- builders -------------------------------------------------------------------------------


def _segment(value: str, what: str) -> str:
    """Validate and lowercase one segment given to a builder."""
    if not isinstance(value, str):
        raise SessionKeyError(f"the {what} must be text, not {type(value).__name__}")
    value = value.strip().lower()
    if not value:
        raise SessionKeyError(f"the {what} is empty")
    if ":" in value:
        raise SessionKeyError(f"the {what} {value!r} contains ':'")
    if any(char.isspace() for char in value):
        raise SessionKeyError(f"the {what} {value!r} contains whitespace")
    return value


def _check_name(text: str, value: str, what: str) -> str:
    if value in RESERVED_NAMES:
        raise SessionKeyError(f"session key {text!r}: {value!r} cannot be a {what} name")
    return value


def _name(value: str, what: str) -> str:
    value = _segment(value, what)
    if value in RESERVED_NAMES:
        raise SessionKeyError(f"{value!r} is a reserved word and cannot be a {what} name")
    return value


def _identifier(value: str, what: str) -> str:
    """Validate an id that may span several ``:``-separated segments."""
    if not isinstance(value, str):
        raise SessionKeyError(f"the {what} must be text, not {type(value).__name__}")
    parts = [_segment(part, what) for part in value.strip().split(":")]
    for part in parts:
        if part in SUFFIX_MARKERS:
            raise SessionKeyError(f"the {what} {value!r} contains the reserved segment {part!r}")
    return ":".join(parts)


def main_key(agent_id: str) -> SessionKey:
    """``agent:<agentId>:main``: the agent's one direct-chat session."""
    return SessionKey(kind="main", agent_id=_segment(agent_id, "agent id"))


def dm_key(
    agent_id: str, peer: str, channel: str | None = None, account: str | None = None
) -> SessionKey:
    """A DM isolated per peer, per channel and peer, or per account, channel and peer."""
    if account is not None and channel is None:
        raise SessionKeyError("a DM key with an account needs a channel too")
    return SessionKey(
        kind="dm",
        agent_id=_segment(agent_id, "agent id"),
        channel=None if channel is None else _name(channel, "channel"),
        account=None if account is None else _name(account, "account"),
        peer=_identifier(peer, "peer"),
    )


def group_key(agent_id: str, channel: str, group_id: str) -> SessionKey:
    """``agent:<agentId>:<channel>:group:<id>``."""
    return _room_key("group", agent_id, channel, group_id)


def channel_key(agent_id: str, channel: str, channel_id: str) -> SessionKey:
    """``agent:<agentId>:<channel>:channel:<id>`` (a room or channel, as opposed to a group)."""
    return _room_key("channel", agent_id, channel, channel_id)


def _room_key(
    kind: Literal["group", "channel"], agent_id: str, channel: str, room: str
) -> SessionKey:
    return SessionKey(
        kind=kind,
        agent_id=_segment(agent_id, "agent id"),
        channel=_name(channel, "channel"),
        peer=_identifier(room, f"{kind} id"),
    )


def simple_key(channel: str, user_id: str) -> SessionKey:
    """``<channel>:<userId>``, e.g. clawback's own ``local:<user>``."""
    channel = _segment(channel, "channel")
    if channel == AGENT_PREFIX:
        raise SessionKeyError("a simple key's channel cannot be 'agent'")
    return SessionKey(kind="simple", channel=channel, peer=_identifier(user_id, "user id"))


def thread_key(parent: SessionKey, thread_id: str) -> SessionKey:
    """``<parent>:thread:<id>``."""
    return _child(parent, THREAD, _suffix_value(thread_id, "thread id"))


def subagent_key(parent: SessionKey, subagent: str) -> SessionKey:
    """``<parent>:subagent:<key>``."""
    return _child(parent, SUBAGENT, _suffix_value(subagent, "subagent key"))


def _suffix_value(value: str, what: str) -> str:
    value = _segment(value, what)
    if value in SUFFIX_MARKERS:
        raise SessionKeyError(f"{value!r} is a reserved word and cannot be a {what}")
    return value
