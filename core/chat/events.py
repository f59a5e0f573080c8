"""What a chat turn tells its caller: events, the outcome, a dry run, and the lifecycle hooks.

:class:`~clawback.core.chat.engine.ChatEngine` yields these plain frozen dataclasses while a turn
runs (:data:`ChatEvent`); a UI turns them into its own messages. :class:`ThresholdHooks` is
where the memory lifecycle (flush, compaction, the threshold check) plugs into every turn.

This module only describes; it must never run anything, write anything or import UI code.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from clawback.core.chat.prompt import AssembledPrompt
from clawback.core.chat.sessions import ChatSession
from clawback.core.claude import Usage

__all__ = [
    "ApiRetrying",
    "ChatEvent",
    "Notice",
    "PreparedTurn",
    "PromptAssembled",
    "ReplyDelta",
    "SessionChanged",
    "ThresholdHooks",
    "ToolCalled",
    "TurnFinished",
    "TurnOutcome",
]


# --------------------------------------------------------------------------------- the hooks


class ThresholdHooks:
    """Where the memory lifecycle plugs into a turn; every default does nothing.

    Each method may return a short note for the user (shown as a :class:`Notice`); returning a
    note from :meth:`maybe_flush` or :meth:`maybe_compact` also tells the engine the session
    changed, so it re-reads the session row and the transcript before going on.
    """

    async def maybe_flush(self, session: ChatSession) -> str | None:
        """Before the prompt is assembled: flush memories if the session is near its limit.

        The user's new message is already in the transcript.
        """
        return None

    async def maybe_compact(self, session: ChatSession, prompt_tokens: int) -> str | None:
        """After assembly: ``prompt_tokens`` is the estimated size of the whole prompt before
        smart trim. Compact (append a compaction line to ``session.transcript`` and call
        ``SessionStore.record_compaction``) if it will not fit; the engine then re-assembles."""
        return None

    async def after_turn(self, session: ChatSession, outcome: TurnOutcome) -> str | None:
        """After every turn that did not raise (``outcome.cancelled`` tells a cancelled one),
        with the real usage recorded on ``session``: the threshold check."""
        return None


# ---------------------------------------------------------------------------------- events


@dataclass(frozen=True)
class SessionChanged:
    """This turn started a new session: ``reason`` is new, reset, stale or first."""

    session: ChatSession
    reason: str
    previous_id: str | None = None


@dataclass(frozen=True)
class Notice:
    """Something to tell the user that is not reply text (a label set, claude retrying...)."""

    text: str


@dataclass(frozen=True)
class ToolCalled:
    """Claude called a tool during the reply; ``summary`` says which and what it asked."""

    name: str
    input: dict[str, Any]
    summary: str


@dataclass(frozen=True)
class ApiRetrying(Notice):
    """``claude`` is retrying a failing API call on its own (a 429 or 529 can keep it at it
    for minutes): a UI shows it as the turn's state, not as a passing note."""

    attempt: int = 0
    max_retries: int = 0
    status: int | None = None


@dataclass(frozen=True)
class PromptAssembled:
    """The prompt is ready and ``claude`` is about to run."""

    session: ChatSession
    prompt: AssembledPrompt
    model: str | None


@dataclass(frozen=True)
class ReplyDelta:
    """A piece of reply text, as it streams."""

    text: str


@dataclass
class TurnOutcome:
    """How a turn ended. ``command`` is ``"new"`` or ``"label"`` when no ``claude`` ran."""

    session: ChatSession
    reply: str = ""
    partial: bool = False
    cancelled: bool = False
    is_error: bool = False
    error: str | None = None
    usage: Usage | None = None
    model: str | None = None
    context_window: int | None = None
    cost: float = 0.0
    user_message_id: str | None = None
    reply_message_id: str | None = None
    new_session: bool = False
    command: str | None = None
    prompt: AssembledPrompt | None = field(default=None, repr=False)

    @property
    def session_key(self) -> str:
        return self.session.key

    def to_json(self) -> dict[str, Any]:
        """The ``clawback chat --json`` object."""
        usage = None
        if self.usage is not None:
            usage = {
                "input_tokens": self.usage.input,
                "output_tokens": self.usage.output,
                "cache_read_tokens": self.usage.cache_read,
                "cache_write_tokens": self.usage.cache_write,
                "total_tokens": self.usage.total_tokens,
                "cache_read_share": round(self.usage.cache_read_share, 4),
            }
        return {
            "session_id": self.session.id,
            "session_key": self.session.key,
            "reply": self.reply,
            "usage": usage,
            "is_error": self.is_error,
            "error": self.error,
            "partial": self.partial,
            "cancelled": self.cancelled,
            "model": self.model,
            "context_window": self.context_window,
            "cost_usd": self.cost,
            "new_session": self.new_session,
            "command": self.command,
            "label": self.session.label,
            "user_message_id": self.user_message_id,
            "reply_message_id": self.reply_message_id,
            "transcript": self.session.transcript,
        }


@dataclass(frozen=True)
class TurnFinished:
    """The last event of every turn that was not an error."""

    outcome: TurnOutcome


ChatEvent = SessionChanged | Notice | PromptAssembled | ReplyDelta | ToolCalled | TurnFinished


@dataclass
class PreparedTurn:
    """What a turn would do, computed without writing anything (``clawback chat --dry-run``)."""

    session_key: str
    session: ChatSession | None  # None: a new session would start
    new_session: bool
    model: str | None
    command: str | None
    message: str
    prompt: AssembledPrompt | None
    argv: list[str]
    mcp_config: dict[str, Any] | None = None  # what --mcp-config's file holds, if passed

    def render(self) -> str:
        """The prompt exactly as it would be sent: the command, the system prompt, stdin."""
        if self.prompt is None:
            return f"(no prompt: {self.command or 'nothing'} is handled by clawback itself)\n"
        system = self.prompt.system_prompt
        shown = [("<system prompt>" if arg == system else arg) for arg in self.argv]
        command = " ".join(_shell_quote(arg) for arg in shown)
        tools = ""
        if self.mcp_config is not None:
            tools = "=== MCP config (--mcp-config) ===\n" + json.dumps(self.mcp_config, indent=2)
            tools += "\n"
        return (
            f"# command: {command}\n"
            f"# session: {self.session.id if self.session else '(new)'} ({self.session_key})\n"
            f"# {self.prompt.summary_line()}\n"
            "=== system prompt (--system-prompt) ===\n"
            f"{self.prompt.system_prompt}\n"
            f"{tools}"
            "=== prompt (stdin) ===\n"
            f"{self.prompt.prompt}\n"
        )

    def to_json(self) -> dict[str, Any]:
        prompt = self.prompt
        return {
            "session_id": self.session.id if self.session else None,
            "session_key": self.session_key,
            "new_session": self.new_session,
            "model": self.model,
            "command": self.command,
            "argv": self.argv,
            "mcp_config": self.mcp_config,
            "system_prompt": prompt.system_prompt if prompt else None,
            "prompt": prompt.prompt if prompt else None,
            "tokens": prompt.tokens if prompt else 0,
            "messages": len(prompt.messages) if prompt else 0,
            "trimmed": len(prompt.dropped) if prompt else 0,
            "recalled_tokens": prompt.recalled.tokens if prompt and prompt.recalled else 0,
        }


def _shell_quote(arg: str) -> str:
    return shlex.quote(arg)
