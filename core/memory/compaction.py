"""Compaction: a summary replaces a chat's older messages in the prompt; the transcript keeps all.

Propose (one ``claude -p`` call, nothing written), then commit (counters, ledger row and
transcript line in one transaction), then fact extraction in the background: ``docs/memory.md``.

This module must never remove or rewrite a transcript line (the compacted messages stay in the
transcript and in the index), and a compaction that fails (a ``claude`` error, a timeout, an
empty summary) must leave the session row, the transcript and the ledger exactly as they were.
"""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils
from clawback.core.chat.prompt import DEFAULT_SYSTEM_PROMPT, ContextMessage, render_message
from clawback.core.chat.sessions import ChatSession, SessionStore
from clawback.core.chat.transcript import Transcript
from clawback.core.claude import ClaudeError, ClaudeRunner
from clawback.core.config import ChatConfig
from clawback.core.db import write_transaction
from clawback.core.errors import ClawbackError, UsageError
from clawback.core.formats.native import compaction_event
from clawback.core.memory.extraction import ExtractionMessage, extract
from clawback.core.memory.facts import Action, FactChange, FactStore
from clawback.core.memory.flush import HistoryOf, IndexPath, is_no_reply
from clawback.core.memory.ledger import CompactionRecord, compacted_messages, list_compactions
from clawback.core.text import mask_secrets
from clawback.core.timeutil import format_ts
from clawback.core.tokens import CHARS_PER_TOKEN, estimate_tokens

__all__ = [
    "COMPACTION_PROMPT",
    "CompactionError",
    "CompactionProposal",
    "CompactionRecord",
    "Compactor",
    "NothingToCompact",
    "compacted_messages",
    "context_estimate",
    "describe_changes",
    "extract_compacted_facts",
    "list_compactions",
    "start_fact_extraction",
]

COMPACTION_PROMPT = """\
You compact a conversation between a user and an AI assistant. You are given the summary of \
its earliest part (if there is one) and the messages that came after it. Write one summary that \
replaces all of them: the conversation will go on with only your summary and the latest \
messages, so whatever you leave out is gone from it.

Keep, exactly as written: every decision made and the reason for it; open tasks, unanswered \
questions and agreed next steps; names of people, projects, components, files, functions, \
commands and tools; paths, URLs, numbers, versions, settings and error messages. Say what the \
user wants and prefers. Drop greetings, small talk and dead ends that changed nothing.

Write plain markdown: short sections or bullet points, in the order things happened, without a \
preamble and without addressing anyone."""

PROMPT_FOOTER = (
    "Summarize the conversation above (including the earlier summary, if there is one) as "
    "instructed. Reply with the summary only."
)
_MIN_MESSAGE_CHARS = 400  # when the messages to summarize do not fit, each keeps at least this


class CompactionError(ClawbackError):
    """A compaction could not be made; nothing was changed."""


class NothingToCompact(UsageError):
    """Every message since the last compaction is among the ones kept."""


# ---------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class CompactionProposal:
    """A summary ready to commit; nothing has been written yet.

    ``compacted`` are the messages the summary replaces (after ``previous_summary``), ``kept``
    the ones that stay verbatim; ``base_compaction_id`` is the session's latest compaction when
    this was proposed, so a stale proposal is refused.
    """

    session_id: str
    summary: str
    previous_summary: str | None
    compacted: list[ContextMessage]
    kept: list[ContextMessage]
    first_kept_id: str | None
    tokens_before: int
    tokens_after: int
    model: str | None
    base_compaction_id: str | None
    cost: float = 0.0

    @property
    def messages_removed(self) -> int:
        return len(self.compacted)

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "summary": self.summary,
            "messages_removed": self.messages_removed,
            "messages_kept": len(self.kept),
            "first_kept_id": self.first_kept_id,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "model": self.model,
        }


# --------------------------------------------------------------------------------- estimates


def context_estimate(
    system_prompt: str, summary: str | None, messages: Sequence[ContextMessage]
) -> int:
    """Estimated tokens of a chat context: system prompt, summary and messages."""
    total = estimate_tokens(system_prompt)
    if summary:
        total += estimate_tokens(f"<conversation-summary>\n{summary}\n</conversation-summary>")
    return total + sum(estimate_tokens(render_message(m) + "\n") for m in messages)


def _fit(messages: Sequence[ContextMessage], budget_tokens: int) -> list[ContextMessage]:
    """``messages`` with long contents cut in the middle so that all of them fit the budget."""
    sizes = [estimate_tokens(render_message(m) + "\n") for m in messages]
    if sum(sizes) <= budget_tokens or not messages:
        return list(messages)
    cap = max(_MIN_MESSAGE_CHARS, budget_tokens * CHARS_PER_TOKEN // len(messages) - 80)
    fitted = []
    for message in messages:
        text = message.content
        if len(text) > cap:
            head = cap * 2 // 3
            tail = cap - head
            text = f"{text[:head]}\n[… {len(text) - cap} characters cut …]\n{text[-tail:]}"
        fitted.append(
            ContextMessage(message.id, message.role, text, message.timestamp, message.partial)
        )
    return fitted


# --------------------------------------------------------------------------------- compactor


Confirm = Callable[["CompactionProposal"], bool | Awaitable[bool]]


class Compactor:
    """Compacts chat sessions: a summary from ``claude``, then counters, ledger row and
    transcript line written together.

    It gets what it uses, not the chat engine: the runner, the session store (its clock too),
    the index it writes the ledger into (in one transaction with the store's counters), the
    history callback and the index callback. ``system_prompt`` replaces
    :data:`COMPACTION_PROMPT`; ``keep`` the configured number of messages kept verbatim.
    """

    def __init__(
        self,
        *,
        runner: ClaudeRunner,
        sessions: SessionStore,
        db: sqlite_utils.Database,
        chat: ChatConfig,
        history: HistoryOf,
        index: IndexPath,
        system_prompt: str | None = None,
        keep: int | None = None,
        mask: bool = True,
    ) -> None:
        self.runner = runner
        self.sessions = sessions
        self.db = db
        self.chat = chat
        self.history = history
        self.index = index
        self.mask = mask  # mask secrets in the summary (archive.mask_secrets)
        self.system_prompt = (system_prompt or chat.compaction_prompt).strip() or COMPACTION_PROMPT
        self.keep = chat.keep_messages if keep is None else keep

    @property
    def chat_system_prompt(self) -> str:
        return self.chat.system_prompt.strip() or DEFAULT_SYSTEM_PROMPT

    def split(
        self, session: ChatSession, keep: int | None = None
    ) -> tuple[str | None, list[ContextMessage], list[ContextMessage]]:
        """``(previous summary, messages to summarize, messages kept)`` for ``session``.

        The first kept message must be in the session's own transcript (the compaction line
        points at it), so a fork keeps all of its own messages if fewer than ``keep``.
        """
        keep = self.keep if keep is None else keep
        if keep < 0:
            raise UsageError("the number of messages to keep cannot be negative")
        history = self.history(session)
        messages = history.messages
        own = {m.id for m in Transcript(session.transcript_path).read().messages}
        split = max(0, len(messages) - keep)
        while split < len(messages) and messages[split].id not in own:
            split += 1
        return history.summary, messages[:split], messages[split:]

    async def propose(self, session: ChatSession, *, keep: int | None = None) -> CompactionProposal:
        """Summarize the messages before the kept ones; writes nothing.

        Raises :class:`NothingToCompact`, a :class:`ClaudeError` (errors, timeouts) or a
        :class:`CompactionError` (an empty summary).
        """
        keep = self.keep if keep is None else keep
        previous, compacted, kept = self.split(session, keep)
        if not compacted:
            raise NothingToCompact(
                f"nothing to compact in session {session.id[:8]}: its {len(kept)} message(s)"
                f" since the last compaction are all kept (keep = {keep})"
            )
        chat = self.chat
        window = session.context_tokens or chat.context_window
        budget = max(1000, window - chat.reserve_tokens - estimate_tokens(self.system_prompt))
        prompt = self._prompt(previous, compacted, budget)
        base = Transcript(session.transcript_path).read().compaction
        result = await self.runner.run(
            prompt, system_prompt=self.system_prompt, model=session.model_override or None
        )
        summary = (result.reply or "").strip()
        if is_no_reply(summary):
            raise CompactionError(
                "claude returned an empty summary; the session was left as it was"
            )
        system = self.chat_system_prompt
        return CompactionProposal(
            session_id=session.id,
            summary=summary,
            previous_summary=previous,
            compacted=compacted,
            kept=kept,
            first_kept_id=kept[0].id if kept else None,
            tokens_before=context_estimate(system, previous, [*compacted, *kept]),
            tokens_after=context_estimate(system, summary, kept),
            model=result.model,
            base_compaction_id=base.id if base else None,
            cost=result.cost,
        )

    def _prompt(self, previous: str | None, messages: Sequence[ContextMessage], budget: int) -> str:
        parts = []
        if previous:
            parts.append(f"<earlier-summary>\n{previous}\n</earlier-summary>")
        fixed = estimate_tokens("\n\n".join(parts) + PROMPT_FOOTER) + 20
        rendered = "\n".join(render_message(m) for m in _fit(messages, budget - fixed))
        parts.append(f"<conversation>\n{rendered}\n</conversation>")
        parts.append(PROMPT_FOOTER)
        return "\n\n".join(parts)

    def commit(self, proposal: CompactionProposal) -> CompactionRecord:
        """Write the compaction: counters, ledger row and transcript line, all or nothing."""
        session = self.sessions.require(proposal.session_id)
        transcript = Transcript(session.transcript_path)
        latest = transcript.read().compaction
        if (latest.id if latest else None) != proposal.base_compaction_id:
            raise CompactionError(
                f"session {session.id[:8]} was compacted since this summary was proposed;"
                " propose again"
            )
        stamp = format_ts(self.sessions.clock())
        event_id = str(uuid.uuid4())
        ledger_summary = mask_secrets(proposal.summary) if self.mask else proposal.summary
        with write_transaction(self.db) as conn:
            self.sessions.record_compaction(
                session.id, tokens_after=proposal.tokens_after, conn=conn
            )
            cursor = conn.execute(
                """INSERT INTO compactions (session_id, created_at, tokens_before, tokens_after,
                       messages_removed, first_kept_id, summary, model)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    session.id,
                    stamp,
                    proposal.tokens_before,
                    proposal.tokens_after,
                    proposal.messages_removed,
                    proposal.first_kept_id,
                    ledger_summary,
                    proposal.model,
                ),
            )
            row_id = int(cursor.lastrowid or 0)
            # last, so that a failed write rolls the counters and the ledger back with it
            transcript.append(
                [
                    compaction_event(
                        event_id,
                        stamp,
                        proposal.summary,
                        proposal.first_kept_id,
                        proposal.tokens_before,
                        proposal.tokens_after,
                        model=proposal.model,
                    )
                ],
                sync=True,
            )
        self.index(transcript.path)  # never raises: the next ingest catches up
        return CompactionRecord(
            row_id,
            session.id,
            stamp,
            proposal.tokens_before,
            proposal.tokens_after,
            proposal.messages_removed,
            proposal.first_kept_id,
            ledger_summary,
            proposal.model,
            str(transcript.path),
        )

    async def compact(
        self,
        session: ChatSession,
        *,
        keep: int | None = None,
        confirm: Confirm | None = None,
    ) -> CompactionRecord | None:
        """Propose, ask ``confirm`` (if given; False cancels: None), and commit."""
        proposal = await self.propose(session, keep=keep)
        if confirm is not None:
            answer = confirm(proposal)
            if inspect.isawaitable(answer):
                answer = await answer
            if not answer:
                return None
        return self.commit(proposal)


# --------------------------------------------------------------------------- knowledge facts


async def extract_compacted_facts(
    db: sqlite_utils.Database, runner: ClaudeRunner, proposal: CompactionProposal
) -> list[FactChange]:
    """Extract knowledge facts from the messages a compaction replaced and store them."""
    messages = [
        ExtractionMessage(m.role, m.content, m.timestamp, m.id, proposal.session_id)
        for m in proposal.compacted
    ]
    extraction = await extract(runner, messages, session_id=proposal.session_id)
    return FactStore(db).apply(extraction.facts)


def describe_changes(changes: Sequence[FactChange]) -> str:
    counts = {action: 0 for action in Action}
    for change in changes:
        counts[change.action] += 1
    parts = [f"{counts[Action.ADD]} new fact(s)"]
    if counts[Action.UPDATE]:
        parts.append(f"{counts[Action.UPDATE]} updated")
    if counts[Action.SUPERSEDE]:
        parts.append(f"{counts[Action.SUPERSEDE]} superseding older ones")
    if counts[Action.NONE]:
        parts.append(f"{counts[Action.NONE]} already known")
    return ", ".join(parts)


def start_fact_extraction(
    db: sqlite_utils.Database,
    runner: ClaudeRunner,
    proposal: CompactionProposal,
    *,
    report: Callable[[str], None],
) -> asyncio.Task[list[FactChange]]:
    """Extract facts from a committed compaction in a task of its own; never raises.

    ``report`` receives one line saying what was stored, or why nothing was. The task's result
    is the list of changes (empty on failure). Must be called with an event loop running.
    """

    async def run() -> list[FactChange]:
        try:
            changes = await extract_compacted_facts(db, runner, proposal)
        except asyncio.CancelledError:
            raise
        except (ClaudeError, ClawbackError, sqlite3.Error) as exc:
            report(
                f"Knowledge extraction after the compaction failed: {' '.join(str(exc).split())}"
                " (`clawback process` extracts from the conversation later)."
            )
            return []
        except Exception as exc:  # a bug must not go unnoticed, nor break the chat
            report(f"Knowledge extraction after the compaction failed: {exc!r}")
            return []
        report(f"Knowledge from the compacted messages: {describe_changes(changes)}.")
        return changes

    return asyncio.get_running_loop().create_task(run(), name="clawback-compaction-facts")
