"""The normalized model every transcript format is parsed into.

A parser turns one JSON line into a :class:`ParsedLine`: zero or more :class:`Entry` objects (one
per message or content block) and :class:`SessionMeta` facts about the session the line belongs
to. Parsers are pure functions of one decoded line, so ingestion can resume at any byte offset.
Reading bytes, splitting lines, decoding and counting bad lines is the ingestor's job, not the
parser's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Source(StrEnum):
    CLAUDE_CODE = "claude-code"
    OPENCLAW = "openclaw"
    NATIVE = "native"
    MEMORY = "memory"  # memory markdown files (MEMORY.md, memory/*.md), split into blocks


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"  # a tool's output (Claude Code tool_result, pi toolResult)


class Kind(StrEnum):
    """What an entry holds; search filters on it (``--kind``, see :data:`KIND_FILTERS`)."""

    TEXT = "text"
    THINKING = "thinking"
    TOOL_USE = "tool_use"
    TOOL_RESULT = "tool_result"
    COMPACTION = "compaction"  # a compaction summary / boundary event
    SUMMARY = "summary"  # a session title line (Claude Code ``summary``)
    # What the CLI, not the person, put into the transcript (Claude Code writes most of these
    # as ``type: user`` lines): kept searchable, never counted as a prompt.
    HOOK = "hook"  # a hook's output or error (Claude Code ``attachment`` lines)
    COMMAND_OUTPUT = "command_output"  # ``<bash-stdout>``, ``<local-command-stdout>``
    NOTIFICATION = "notification"  # ``<task-notification>``, caveats, 1.0.x system notices
    INTERRUPTION = "interruption"  # ``[Request interrupted by user]``


# ``--kind`` filter names -> the entry kinds they select.
KIND_FILTERS: dict[str, tuple[Kind, ...]] = {
    "text": (Kind.TEXT, Kind.COMPACTION, Kind.SUMMARY),
    "thinking": (Kind.THINKING,),
    "tool": (Kind.TOOL_USE, Kind.TOOL_RESULT),
    "output": (Kind.COMMAND_OUTPUT,),
    "hook": (Kind.HOOK,),
    "notice": (Kind.NOTIFICATION, Kind.INTERRUPTION),
    "all": tuple(Kind),
}


@dataclass(slots=True)
class Entry:
    """One searchable piece of a transcript: a message or one content block of it.

    ``conversational`` marks what the transcript view shows and memory processing reads: user and
    assistant text, assistant tool calls (as ``display``), compaction events. Tool output,
    thinking and meta lines are indexed but not conversational.
    """

    role: Role
    kind: Kind
    text: str
    timestamp: str | None = None  # ISO 8601 as written by the source
    uuid: str | None = None  # the source's message id, when it has one
    sidechain: bool = False
    conversational: bool = False
    display: str | None = None  # what the transcript view shows if not ``text`` (tool calls)
    model: str | None = None
    partial: bool = False  # a reply that was cut short (cancelled, killed)
    error: bool = False  # a tool's output that reports a failure (``is_error``, ``isError``)


@dataclass(slots=True)
class SessionMeta:
    """Facts about the session a line belongs to; ``None`` means "this line does not say"."""

    session_id: str | None = None
    key: str | None = None  # session key (native / OpenClaw)
    title: str | None = None  # an AI title, OpenClaw display name, pi session name
    custom_title: str | None = None  # a name the person gave (custom-title, /rename): wins
    cwd: str | None = None
    parent_id: str | None = None
    channel: str | None = None
    created: str | None = None
    label: str | None = None  # "" means the label was cleared
    # A Claude Code summary names the session holding this message uuid, often another file's;
    # ``title`` is then that session's title, not this file's.
    title_for_uuid: str | None = None


@dataclass(slots=True)
class TokenUsage:
    """The tokens one model response used, as its line reports them (``usage``).

    ``cache_write_tokens`` counts every token written to the prompt cache; the part of it
    written for an hour (dearer than the default 5 minutes) is ``cache_write_1h_tokens``.
    ``message_id`` and ``request_id`` name the API response: Claude Code writes one response
    as several lines, and the usage index counts it once.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    model: str | None = None
    timestamp: str | None = None  # as written by the source (ISO 8601 or epoch ms)
    message_id: str | None = None
    request_id: str | None = None
    sidechain: bool = False
    fast: bool = False  # the response ran in fast mode (priced at the model's fast rate)
    cost_usd: float | None = None  # what the line itself says the response cost

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )


@dataclass(slots=True)
class ParsedLine:
    entries: list[Entry] = field(default_factory=list)
    meta: SessionMeta | None = None
    # Set when the line is valid JSON but not of a shape this parser knows; counted, not fatal.
    unknown: str | None = None
    usage: TokenUsage | None = None  # a model response's tokens (assistant lines that say)
