"""The memory lifecycle in every chat turn: flush when near the window, compact when over it.

:class:`MemoryLifecycleHooks` is what :meth:`Home.chat_engine
<clawback.core.home.Home.chat_engine>` plugs into the chat engine; when each hook fires and why
compaction is measured before smart trim: ``docs/memory.md``.

This module must never raise out of a hook (except for cancellation) and never wait for
background extraction: a failed flush or compaction becomes a notice and the turn goes on.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import sqlite_utils
from clawback.core.chat.events import ThresholdHooks, TurnOutcome
from clawback.core.chat.sessions import ChatSession, SessionStore
from clawback.core.claude import ClaudeRunner
from clawback.core.config import ChatConfig
from clawback.core.errors import ClawbackError
from clawback.core.memory.compaction import (
    CompactionProposal,
    CompactionRecord,
    Compactor,
    NothingToCompact,
    context_estimate,
    start_fact_extraction,
)
from clawback.core.memory.facts import FactChange
from clawback.core.memory.flush import FlushProposal, MemoryFlush

__all__ = ["RETRY_AFTER_TURNS", "CompactionPolicy", "MemoryLifecycleHooks"]

RETRY_AFTER_TURNS = 2


@dataclass(frozen=True)
class CompactionPolicy:
    """When a prompt is too big: more than the window (the model's, else config) minus the
    reserve kept for the reply."""

    context_window: int = 200_000
    reserve_tokens: int = 16_000

    @classmethod
    def from_config(cls, chat: ChatConfig) -> CompactionPolicy:
        return cls(chat.context_window, chat.reserve_tokens)

    def limit(self, session: ChatSession) -> int:
        return (session.context_tokens or self.context_window) - self.reserve_tokens

    def should_compact(self, session: ChatSession, prompt_tokens: int) -> bool:
        return prompt_tokens > self.limit(session)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, ClawbackError):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class MemoryLifecycleHooks(ThresholdHooks):
    """Flush, compaction and knowledge extraction for the turns of chat sessions.

    Built by :meth:`Home.chat_engine <clawback.core.home.Home.chat_engine>` from the flush
    and compactor it made, the session store (to re-read a session after a flush), the chat
    settings (``flush_mode``, the compaction policy) and what fact extraction needs (the index
    and the runner). ``extract_facts`` turns the background fact extraction off.
    """

    def __init__(
        self,
        *,
        flush: MemoryFlush,
        compactor: Compactor,
        sessions: SessionStore,
        chat: ChatConfig,
        db: sqlite_utils.Database,
        runner: ClaudeRunner,
        policy: CompactionPolicy | None = None,
        extract_facts: bool = True,
    ) -> None:
        self.flush = flush
        self.compactor = compactor
        self.sessions = sessions
        self.chat = chat
        self.db = db
        self.runner = runner
        self.policy = policy or CompactionPolicy.from_config(chat)
        self.extract_facts = extract_facts
        self.tasks: set[asyncio.Task[list[FactChange]]] = set()
        self._reports: list[str] = []
        self._asked: set[tuple[str, int]] = set()
        self._flush_failed: dict[str, int] = {}  # session id -> message count at the failure
        self._compact_failed: dict[str, int] = {}

    @property
    def mode(self) -> str:
        return self.chat.flush_mode

    # -- the hooks ------------------------------------------------------------------------------

    async def maybe_flush(self, session: ChatSession) -> str | None:
        note = None
        if self.mode != "off" and self.flush.should_flush(session):
            if self.mode == "ask":
                note = self._ask(session)
            elif not self._waiting(self._flush_failed, session):
                note = await self._flush(session)
        return self._with_reports(note)

    async def maybe_compact(self, session: ChatSession, prompt_tokens: int) -> str | None:
        if not self.policy.should_compact(session, prompt_tokens):
            return self._with_reports(None)
        if self._waiting(self._compact_failed, session):
            return self._with_reports(None)
        keep, compactable = self._auto_keep(session)
        if not compactable:  # only kept messages are left: smart trim does what it can
            return self._with_reports(None)
        notes: list[str | None] = []
        flushed = self.flush.policy.flushed_this_cycle(session)
        if self.mode == "auto" and not flushed and not self._waiting(self._flush_failed, session):
            notes.append(await self._flush(session))
            session = self.sessions.require(session.id)
        notes.append(await self._compact(session, keep))
        if self.mode == "ask" and not flushed and session.id not in self._compact_failed:
            notes.append(
                "No memory flush ran before it (flush_mode = ask); the compacted messages stay"
                " searchable."
            )
        return self._with_reports("\n".join(n for n in notes if n) or None)

    async def after_turn(self, session: ChatSession, outcome: TurnOutcome) -> str | None:
        return self._with_reports(None)

    # -- background work ------------------------------------------------------------------------

    def report(self, text: str) -> None:
        """Queue a line for the user; the next hook call returns it as (part of) its notice."""
        self._reports.append(text)

    def take_reports(self) -> list[str]:
        reports, self._reports = self._reports, []
        return reports

    async def drain(self) -> None:
        """Wait for background work (fact extraction) to end: before exiting, and in tests."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    def extract_facts_later(self, proposal: CompactionProposal) -> asyncio.Task[list[FactChange]]:
        """Start fact extraction from a committed compaction (also one a UI committed): the
        task is tracked for :meth:`drain` and its report comes with the next notice."""
        task = start_fact_extraction(self.db, self.runner, proposal, report=self.report)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # -- steps ----------------------------------------------------------------------------------

    def _ask(self, session: ChatSession) -> str | None:
        cycle = (session.id, session.compaction_count)
        if cycle in self._asked:
            return None
        self._asked.add(cycle)
        window = self.flush.policy.window(session)
        return (
            f"This session is near its context window ({session.total_tokens:,} of"
            f" {window:,} tokens) and will be compacted soon: type /flush to save durable"
            f" memories first (or run `clawback flush {session.id[:8]}`)."
        )

    async def _flush(self, session: ChatSession) -> str:
        try:
            proposal: FlushProposal = await self.flush.run(session)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never the turn's failure: reported instead
            self._flush_failed[session.id] = session.message_count
            return (
                f"The memory flush failed: {_one_line(exc)}. The turn goes on; type /flush to"
                " try again."
            )
        self._flush_failed.pop(session.id, None)
        cached = ""
        if proposal.live and proposal.usage is not None:
            cached = f" (a turn of this conversation: {proposal.usage.cache_read_share:.0%} read"
            cached += " from the cache)"
        if proposal.empty:
            return f"Memory flush: nothing new worth storing{cached}."
        return f"Memory flush: saved notes from this session to {proposal.target_name}{cached}."

    def _auto_keep(self, session: ChatSession) -> tuple[int, int]:
        """How many messages to keep, and how many that leaves to compact.

        The configured number, fewer if they alone would fill half the window (so that one
        compaction is enough and the next turn does not compact again).
        """
        keep = self.compactor.keep
        _summary, compacted, kept = self.compactor.split(session, keep)
        limit = self.policy.limit(session)
        system = self.compactor.chat_system_prompt
        while keep > 1 and len(kept) > 1 and context_estimate(system, None, kept) > limit // 2:
            keep -= 1
            compacted, kept = [*compacted, kept[0]], kept[1:]
        return keep, len(compacted)

    async def _compact(self, session: ChatSession, keep: int) -> str | None:
        compactor = self.compactor
        try:
            proposal = await compactor.propose(session, keep=keep)
            record: CompactionRecord = compactor.commit(proposal)
        except asyncio.CancelledError:
            raise
        except NothingToCompact:
            return None  # only the kept messages are left: smart trim does what it can
        except Exception as exc:  # never the turn's failure: reported instead
            self._compact_failed[session.id] = session.message_count
            return (
                f"Compaction failed: {_one_line(exc)}. The session is unchanged; older messages"
                " are trimmed from this prompt instead."
            )
        self._compact_failed.pop(session.id, None)
        if self.extract_facts:
            self.extract_facts_later(proposal)
        return (
            f"Compacted the conversation: {record.messages_removed} older message(s) are now a"
            f" summary (~{record.tokens_before:,} → ~{record.tokens_after:,} tokens). They stay"
            " in the transcript and searchable; `clawback compactions` lists it."
        )

    # -- helpers --------------------------------------------------------------------------------

    def _waiting(self, failures: dict[str, int], session: ChatSession) -> bool:
        """A recent automatic attempt failed: wait a few turns before the next one."""
        failed_at = failures.get(session.id)
        return failed_at is not None and session.message_count < failed_at + 2 * RETRY_AFTER_TURNS

    def _with_reports(self, note: str | None) -> str | None:
        parts = [*([note] if note else []), *self.take_reports()]
        return "\n".join(parts) or None
