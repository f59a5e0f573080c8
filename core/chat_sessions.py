"""The chat session store: which session a chat key is in, when it goes stale, and its counters.

A *session key* names where a conversation happens (``local:<user>`` for the terminal chat, see
:func:`local_session_key`); a *session* is one transcript with a uuid. Each key has at most one
*current* session (``chat_sessions.current = 1``). :meth:`SessionStore.get_or_create` resumes it
while it is fresh and otherwise starts a new one (new uuid, counters, compaction count and flush
state reset); the old session stays in the table, its transcript on disk and in the index, so it
remains browsable and searchable.

Freshness (:class:`FreshnessPolicy`):

- ``idle``: stale once ``idle_minutes`` (default 240) have passed since the last update;
- ``daily``: stale once the most recent ``at_hour`` o'clock local time (default 4) lies after
  the last update.

The policy comes from ``chat.session_reset`` / ``idle_minutes`` / ``at_hour``, overridden per
session type by ``chat.reset_by_type`` and per channel by ``chat.reset_by_channel`` (the channel
wins). The clock and the local time zone are injectable so tests are exact.

Chat commands parsed here (the engine acts on them): ``/new`` and ``/reset`` (optionally
``/new <model> <first message>``, see :func:`parse_reset_trigger`) and ``/label <text>``
(at most 64 characters, trimmed; stored in the transcript so reindexing keeps it).

Token counters describe the latest turn, as ``claude`` reported it: ``total_tokens`` =
``input + cache_read + cache_write`` is the size of the last prompt, the figure the memory
lifecycle's threshold checks compare with ``context_tokens`` (the model's window).

This module must never delete a session, a transcript or a transcript line, and never touch the
archive's own tables except through the index callback.
"""

from __future__ import annotations

import getpass
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, Literal

import sqlite_utils

from .claude_events import Usage
from .config import ChatConfig
from .db import write_transaction
from .errors import ConfigError, NotFoundError, SessionKeyError
from .parsers.native import label_event, session_header
from .paths import Paths
from .session_keys import parse_session_key, simple_key, thread_key
from .timeutil import format_ts, parse_ts
from .transcript import Transcript

__all__ = [
    "BUILTIN_MODEL_ALIASES",
    "LABEL_MAX_CHARS",
    "ChatSession",
    "Clock",
    "FreshnessPolicy",
    "ResetTrigger",
    "SessionStore",
    "local_session_key",
    "normalize_label",
    "parse_label_command",
    "parse_reset_trigger",
    "policy_for",
    "resolve_model",
]

Clock = Callable[[], datetime]
LABEL_MAX_CHARS = 64
BUILTIN_MODEL_ALIASES = ("opus", "sonnet", "haiku", "opusplan", "default")
_FULL_MODEL_NAME = re.compile(r"^claude-[a-z0-9][a-z0-9.\-]*(\[1m\])?$")
_RESET_TRIGGER = re.compile(r"^/(new|reset)(?:\s+(.*))?$", re.IGNORECASE | re.DOTALL)
_LABEL_COMMAND = re.compile(r"^/label(?:\s+(.*))?$", re.IGNORECASE | re.DOTALL)


def _utc_now() -> datetime:
    return datetime.now(UTC)


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


@dataclass(frozen=True)
class ChatSession:
    """One row of ``chat_sessions``. Timestamps are the index's UTC text form."""

    id: str
    key: str
    transcript: str
    created_at: str
    updated_at: str
    label: str | None = None
    model_override: str | None = None
    message_count: int = 0
    compaction_count: int = 0
    memory_flush_at: str | None = None
    memory_flush_compaction_count: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    context_tokens: int | None = None
    last_model: str | None = None
    parent_id: str | None = None
    current: bool = True

    @property
    def transcript_path(self) -> Path:
        return Path(self.transcript)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _COLUMNS}


_COLUMNS = tuple(ChatSession.__dataclass_fields__)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM chat_sessions"


def _row(row: Sequence[Any]) -> ChatSession:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["current"] = bool(values["current"])
    return ChatSession(**values)


class SessionStore:
    """Chat sessions in the index database, their transcripts in ``paths.sessions``.

    ``clock`` returns an aware datetime (default: now, UTC); ``tz`` is the local zone for the
    daily policy (default: the system's). ``on_write(path)`` is called after this store writes
    something searchable to a transcript (a label), so the index can pick it up at once.
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        paths: Paths,
        chat: ChatConfig,
        *,
        clock: Clock | None = None,
        tz: tzinfo | None = None,
        on_write: Callable[[Path], None] | None = None,
    ) -> None:
        self.db = db
        self.paths = paths
        self.chat = chat
        self.clock = clock or _utc_now
        self.tz = tz
        self.on_write = on_write

    def now(self) -> datetime:
        return self.clock()

    def _stamp(self, now: datetime | None) -> str:
        return format_ts(now or self.clock())

    # -- reading --------------------------------------------------------------------------------

    def get(self, session_id: str) -> ChatSession | None:
        row = self.db.execute(f"{_SELECT} WHERE id = ?", (session_id,)).fetchone()
        return _row(row) if row else None

    def require(self, session_id: str) -> ChatSession:
        found = self.get(session_id)
        if found is None:
            raise NotFoundError(f"no chat session {session_id!r}")
        return found

    def current(self, key: str) -> ChatSession | None:
        """The key's current session, fresh or not."""
        row = self.db.execute(
            f"{_SELECT} WHERE key = ? AND current = 1 ORDER BY updated_at DESC LIMIT 1",
            (self.normalize_key(key),),
        ).fetchone()
        return _row(row) if row else None

    def list(self, key: str | None = None, limit: int = 100) -> list[ChatSession]:
        """Sessions newest first, of one key or all."""
        if key is None:
            rows = self.db.execute(f"{_SELECT} ORDER BY updated_at DESC LIMIT ?", (limit,))
        else:
            rows = self.db.execute(
                f"{_SELECT} WHERE key = ? ORDER BY updated_at DESC LIMIT ?",
                (self.normalize_key(key), limit),
            )
        return [_row(row) for row in rows.fetchall()]

    def is_fresh(self, session: ChatSession, now: datetime | None = None) -> bool:
        last = parse_ts(session.updated_at)
        if last is None:
            return False
        return policy_for(session.key, self.chat).is_fresh(last, now or self.clock(), self.tz)

    def peek(self, key: str, now: datetime | None = None) -> ChatSession | None:
        """What :meth:`get_or_create` would resume, without writing anything (for dry runs)."""
        found = self.current(key)
        return found if found is not None and self.is_fresh(found, now) else None

    @staticmethod
    def normalize_key(key: str) -> str:
        """The canonical spelling of a key; a malformed key is a :class:`SessionKeyError`."""
        return str(parse_session_key(key))

    def transcript(self, session: ChatSession) -> Transcript:
        return Transcript(session.transcript_path)

    def header(self, session: ChatSession) -> dict[str, Any]:
        """The transcript header of ``session`` (rewritten only if the file was lost)."""
        return session_header(
            session.id, session.key, session.created_at, parent=session.parent_id,
            label=session.label,
        )  # fmt: skip

    def ensure_transcript(self, session: ChatSession) -> Transcript:
        """The session's transcript, its header written if the file is missing or empty."""
        transcript = self.transcript(session)
        transcript.create(self.header(session))
        return transcript

    # -- creating -------------------------------------------------------------------------------

    def get_or_create(self, key: str, *, now: datetime | None = None) -> tuple[ChatSession, bool]:
        """The key's session, resumed if fresh, else a new one; ``(session, created)``."""
        key = self.normalize_key(key)
        now = now or self.clock()
        with write_transaction(self.db):
            found = self.current(key)
            if found is not None and self.is_fresh(found, now):
                return found, False
            session = self._insert(key, now=now)
        self.ensure_transcript(session)
        return session, True

    def reset(
        self, key: str, *, model_override: str | None = None, now: datetime | None = None
    ) -> ChatSession:
        """Start a new session for ``key`` (``/new``, ``/reset``, ``--new``)."""
        return self.create(key, model_override=model_override, now=now)

    def create(
        self,
        key: str,
        *,
        parent_id: str | None = None,
        model_override: str | None = None,
        label: str | None = None,
        now: datetime | None = None,
    ) -> ChatSession:
        """A new session that becomes the current one of ``key``."""
        key = self.normalize_key(key)
        with write_transaction(self.db):
            session = self._insert(
                key, now=now or self.clock(), parent_id=parent_id,
                model_override=model_override, label=normalize_label(label),
            )  # fmt: skip
        self.ensure_transcript(session)
        return session

    def _insert(
        self,
        key: str,
        *,
        now: datetime,
        parent_id: str | None = None,
        model_override: str | None = None,
        label: str | None = None,
    ) -> ChatSession:
        """Insert a row and make it current; the caller holds the write transaction."""
        session_id = str(uuid.uuid4())
        stamp = format_ts(now)
        session = ChatSession(
            id=session_id,
            key=key,
            transcript=str(self.paths.sessions / f"{session_id}.jsonl"),
            created_at=stamp,
            updated_at=stamp,
            label=label,
            model_override=model_override,
            parent_id=parent_id,
        )
        self.db.execute("UPDATE chat_sessions SET current = 0 WHERE key = ?", (key,))
        values = session.to_json()
        self.db.execute(
            f"INSERT INTO chat_sessions ({', '.join(values)}) VALUES "
            f"({', '.join('?' * len(values))})",
            list(values.values()),
        )
        return session

    def fork(
        self, parent_id: str, *, key: str | None = None, now: datetime | None = None
    ) -> ChatSession:
        """A new session whose header names ``parent_id`` and whose context starts from it.

        The parent may be a clawback chat or any archived session (Claude Code, OpenClaw): the
        chat engine seeds the fork's context from the parent as it was at the fork's creation.
        The fork becomes current for ``key``: by default the parent chat's own key, and for an
        archived session ``local:<user>:thread:<parent id prefix>``, so forking never replaces
        the user's main chat.
        """
        parent = self.get(parent_id)
        if parent is None:
            row = self.db.execute("SELECT id FROM sessions WHERE id = ?", (parent_id,)).fetchone()
            native_file = self.paths.sessions / f"{parent_id}.jsonl"
            if row is None and not native_file.is_file():
                raise NotFoundError(f"no session {parent_id!r} to fork (see `clawback sessions`)")
        if key is None:
            if parent is not None:
                key = parent.key
            else:
                thread = re.sub(r"[^a-z0-9_-]", "", parent_id.lower())[:12] or "fork"
                key = str(thread_key(parse_session_key(local_session_key()), thread))
        model = parent.model_override if parent is not None else None
        return self.create(key, parent_id=parent_id, model_override=model, now=now)

    # -- updating -------------------------------------------------------------------------------

    def set_label(
        self, session_id: str, text: str | None, *, now: datetime | None = None
    ) -> str | None:
        """Label a session (None or blank clears it); written to the transcript and indexed."""
        session = self.require(session_id)
        label = normalize_label(text)
        stamp = self._stamp(now)
        transcript = self.ensure_transcript(session)
        transcript.append([label_event(label, stamp)], sync=True)
        with write_transaction(self.db) as conn:
            conn.execute("UPDATE chat_sessions SET label = ? WHERE id = ?", (label, session_id))
        if self.on_write is not None:
            self.on_write(transcript.path)
        return label

    def set_model_override(self, session_id: str, model: str | None) -> None:
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET model_override = ? WHERE id = ?", (model, session_id)
            )

    def record_messages(
        self, session_id: str, count: int = 1, *, now: datetime | None = None
    ) -> None:
        """``count`` messages were appended to the transcript: bump the count and the clock."""
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET message_count = message_count + ?, updated_at = ?"
                " WHERE id = ?",
                (count, self._stamp(now), session_id),
            )

    def touch(self, session_id: str, *, now: datetime | None = None) -> None:
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET updated_at = ? WHERE id = ?",
                (self._stamp(now), session_id),
            )

    def record_usage(
        self,
        session_id: str,
        usage: Usage,
        *,
        model: str | None = None,
        context_window: int | None = None,
        now: datetime | None = None,
    ) -> ChatSession:
        """Replace the token counters with the latest turn's real usage (not a running sum)."""
        with write_transaction(self.db) as conn:
            conn.execute(
                """UPDATE chat_sessions SET input_tokens = ?, output_tokens = ?,
                       cache_read_tokens = ?, cache_write_tokens = ?, total_tokens = ?,
                       context_tokens = coalesce(?, context_tokens),
                       last_model = coalesce(?, last_model), updated_at = ?
                   WHERE id = ?""",
                (usage.input, usage.output, usage.cache_read, usage.cache_write,
                 usage.total_tokens, context_window, model, self._stamp(now), session_id),
            )  # fmt: skip
        return self.require(session_id)

    def mark_memory_flush(self, session_id: str, *, now: datetime | None = None) -> None:
        """A memory flush ran: remember when, and at which compaction count."""
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET memory_flush_at = ?,"
                " memory_flush_compaction_count = compaction_count WHERE id = ?",
                (self._stamp(now), session_id),
            )

    def record_compaction(self, session_id: str) -> None:
        """A compaction line was appended to the session's transcript."""
        with write_transaction(self.db) as conn:
            conn.execute(
                "UPDATE chat_sessions SET compaction_count = compaction_count + 1 WHERE id = ?",
                (session_id,),
            )
