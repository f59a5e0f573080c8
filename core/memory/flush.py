"""The pre-compaction memory flush: durable notes from a chat, appended to today's memory file.

When it runs, what it asks ``claude`` and how a person reviews it: ``docs/memory.md``.

This module must never let the model write a file (clawback appends the notes itself), never
write anything in propose mode, never replace a memory file other than through
:meth:`Workspace.save <clawback.core.memory.files.Workspace.save>` (atomic, keeping a ``.bak``),
and never store text that has not been through :func:`mask_secrets`.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from clawback.core.chat.prompt import AssembledPrompt, History, assemble
from clawback.core.chat.sessions import ChatSession, SessionStore
from clawback.core.claude import ClaudeRunner, TurnResult, Usage
from clawback.core.config import ChatConfig
from clawback.core.errors import NotFoundError
from clawback.core.memory.files import Workspace
from clawback.core.text import mask_secrets, prompt_field
from clawback.core.timeutil import format_ts

__all__ = [
    "FLUSH_PROMPT",
    "FLUSH_SYSTEM_PROMPT",
    "NO_REPLY",
    "FlushPolicy",
    "FlushProposal",
    "MemoryFlush",
    "SilentTurn",
    "flush_turn_text",
    "is_no_reply",
]

NO_REPLY = "NO_REPLY"
HEADING_CHARS = 120  # a session's name or project in a notes heading, on one line

FLUSH_SYSTEM_PROMPT = (
    "Pre-compaction memory flush turn. The session is near auto-compaction; capture durable "
    "memories. Reply NO_REPLY if nothing should be stored."
)

FLUSH_PROMPT = """\
Before older turns of this conversation are compacted, write down what is worth remembering \
in later conversations: decisions and why they were made, facts about the user, their projects \
and preferences, open tasks and next steps, and exact names, paths, commands, versions and \
numbers. Write short markdown bullet points and nothing else (no heading, no preamble). Leave \
out small talk, what only mattered for a moment, and secrets. Reply NO_REPLY if nothing should \
be stored."""

_NO_REPLY_LINE = re.compile(r"^[\s`'\"*_.:>-]*NO_REPLY\b", re.IGNORECASE)


def flush_turn_text(system_prompt: str, prompt: str) -> str:
    """The flush as a turn of the live conversation: the instructions a one-off flush passes
    as its system prompt come first, marked as clawback's, not the user's."""
    return (
        "<memory-flush>\nThis turn comes from clawback, not from the user, and its reply is not"
        f" shown to them. {system_prompt}\n\n{prompt}\n</memory-flush>"
    )


def is_no_reply(text: str) -> bool:
    """True for an empty reply or one that says ``NO_REPLY`` (on its first line, maybe quoted)."""
    stripped = text.strip()
    return not stripped or bool(_NO_REPLY_LINE.match(stripped.splitlines()[0]))


# ------------------------------------------------------------------------------------- policy


@dataclass(frozen=True)
class FlushPolicy:
    """When a memory flush is due: the session's last prompt is within the reserve of its window.

    The floor's default (OpenClaw's, 20,000) puts the flush (176k of 200k) before compaction
    (184k, ``chat.reserve_tokens`` 16,000 below): with a 5,000 floor the flush threshold sat
    above compaction's, so it only ever ran as part of a compaction.

    ``context_window`` is used until the model reports its own (``session.context_tokens``).
    """

    context_window: int = 200_000
    reserve_tokens_floor: int = 20_000
    soft_threshold_tokens: int = 4_000

    @classmethod
    def from_config(cls, chat: ChatConfig) -> FlushPolicy:
        return cls(chat.context_window, chat.reserve_tokens_floor, chat.soft_threshold_tokens)

    def window(self, session: ChatSession) -> int:
        return session.context_tokens or self.context_window

    def threshold(self, session: ChatSession) -> int:
        """``total_tokens`` at or above this makes a flush due."""
        return self.window(session) - self.reserve_tokens_floor - self.soft_threshold_tokens

    @staticmethod
    def flushed_this_cycle(session: ChatSession) -> bool:
        """A flush already ran since the latest compaction (one per compaction cycle)."""
        return session.memory_flush_compaction_count == session.compaction_count

    def should_flush(self, session: ChatSession) -> bool:
        return session.total_tokens >= self.threshold(session) and not self.flushed_this_cycle(
            session
        )


# ----------------------------------------------------------------------------------- proposal


@dataclass(frozen=True)
class FlushProposal:
    """What a flush would write. ``notes`` is empty when the model said ``NO_REPLY``.

    ``block`` is exactly what :meth:`MemoryFlush.apply` appends (``heading``: the heading and
    the link back to the session; then the notes) and ``diff`` the unified diff it makes to the
    file as it was when proposed.
    """

    session_id: str
    notes: str
    target_name: str
    target: Path
    block: str
    diff: str
    created_at: str
    compaction_count: int
    model: str | None = None
    cost: float = 0.0
    heading: str = ""
    chat_session: bool = True  # False: a session clawback only reads (nothing to record)
    usage: Usage | None = None  # the flush request's tokens (None: no claude call)
    live: bool = False  # it was a silent turn of the session's live conversation

    @property
    def empty(self) -> bool:
        return not self.notes

    def with_notes(self, text: str, *, current: str | None = None) -> FlushProposal:
        """This proposal with ``text`` (a person's rewrite) as its notes; writes nothing.

        The text is masked like the model's notes, since it is stored and indexed the same way,
        and goes under the same heading. The diff is recomputed against ``current``, else the
        target file as it is now: the person sees what their words, not the model's, would add.
        Blank text gives an empty proposal, which :meth:`MemoryFlush.apply` does not write.
        """
        notes = mask_secrets(text.strip())
        block = f"{self.heading}{notes}\n" if notes else ""
        if current is None:
            try:
                current = self.target.read_text(encoding="utf-8")
            except FileNotFoundError:
                current = ""
        diff = _diff(current, block, self.target_name) if notes else ""
        return replace(self, notes=notes, block=block, diff=diff)

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "notes": self.notes,
            "empty": self.empty,
            "target": self.target_name,
            "path": str(self.target),
            "block": self.block,
            "diff": self.diff,
            "created_at": self.created_at,
            "model": self.model,
            "live": self.live,
        }


def _diff(current: str, block: str, name: str) -> str:
    """The unified diff appending ``block`` makes to the memory file ``name``."""
    return "".join(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            _appended(current, block, Path(name).stem).splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


def _appended(current: str, block: str, title: str) -> str:
    """``current`` with ``block`` added after a blank line (a new file starts with a title)."""
    if not current.strip():
        return f"# {title}\n\n{block}"
    if not current.endswith("\n"):
        current += "\n"
    return current + "\n" + block


HistoryOf = Callable[[ChatSession], History]
"""What the model sees of a session (``ChatEngine.history``): its summary and messages."""

IndexPath = Callable[[Path], None]
"""Index a file now; never raises (``ChatEngine.index``: the next ingest catches up)."""

SilentTurn = Callable[[ChatSession, str], Awaitable[TurnResult | None]]
"""Run a text as a turn of the session's live conversation, storing nothing, or ``None`` when
no live process holds the session (``ChatEngine.silent_turn``)."""


class MemoryFlush:
    """Runs memory flushes for chat sessions: one ``claude`` turn per flush, notes appended to
    the day's memory file.

    It gets what it uses, not the chat engine: the runner for the flush turn, the session
    store (to read and mark sessions, and its clock and time zone), the history callback that
    gives a session's context, and the index callback for the file it wrote. ``live`` (a host
    with live conversations): the flush is first tried as a silent turn of the session's live
    process, whose request reads the conversation from the prompt cache instead of sending it
    again; its reply is never shown nor stored in the transcript.
    """

    def __init__(
        self,
        *,
        runner: ClaudeRunner,
        sessions: SessionStore,
        chat: ChatConfig,
        history: HistoryOf,
        index: IndexPath,
        workspace: Workspace,
        policy: FlushPolicy | None = None,
        system_prompt: str | None = None,
        prompt: str = FLUSH_PROMPT,
        live: SilentTurn | None = None,
    ) -> None:
        self.live = live
        self.runner = runner
        self.sessions = sessions
        self.chat = chat
        self.history = history
        self.index = index
        self.workspace = workspace
        self.policy = policy or FlushPolicy.from_config(chat)
        self.system_prompt = system_prompt or chat.flush_prompt.strip() or FLUSH_SYSTEM_PROMPT
        self.prompt = prompt

    def should_flush(self, session: ChatSession) -> bool:
        return self.policy.should_flush(session)

    def context(self, session: ChatSession) -> AssembledPrompt:
        """The flush turn's prompt: the session's current context, then the flush request.

        Assembled like a chat turn (summary, messages since it, smart trim to the window), but
        without recall: the notes must come from this conversation, not from the archive.
        """
        window = session.context_tokens or self.chat.context_window
        return assemble(
            self.chat, self.history(session), self.prompt, context_window=window, recaller=None
        )

    async def propose(self, session: ChatSession) -> FlushProposal:
        """Run the flush turn and return what it would write; writes nothing.

        A session with nothing said yet proposes nothing without calling ``claude``. Errors are
        :class:`~clawback.core.claude.errors.ClaudeError`\\ s.
        """
        ridden: TurnResult | None = None
        if self.live is not None:
            ridden = await self.live(session, flush_turn_text(self.system_prompt, self.prompt))
        return await self._propose(
            self.context(session),
            session_id=session.id,
            compaction_count=session.compaction_count,
            model=session.model_override or None,
            heading=lambda when, target: self._heading(session, when, target),
            answered=ridden,
        )

    async def propose_archived(
        self,
        session_id: str,
        history: History,
        *,
        project: str,
        transcript: Path,
        compaction_count: int,
    ) -> FlushProposal:
        """The flush of a session clawback only reads (a Claude Code session, from its hook).

        ``history`` is the session as the index holds it (the latest compaction summary and
        what followed); the notes go under a heading naming the project and the session, and
        applying them records nothing in clawback's chat sessions.
        """
        prompt = assemble(
            self.chat, history, self.prompt, context_window=self.chat.context_window, recaller=None
        )
        proposal = await self._propose(
            prompt,
            session_id=session_id,
            compaction_count=compaction_count,
            model=None,
            heading=lambda when, target: _archived_heading(
                session_id, project, transcript, when, target
            ),
        )
        return replace(proposal, chat_session=False)

    async def _propose(
        self,
        prompt: AssembledPrompt,
        *,
        session_id: str,
        compaction_count: int,
        model: str | None,
        heading: Callable[[datetime, Path], str],
        answered: TurnResult | None = None,
    ) -> FlushProposal:
        """``answered``: the live conversation already ran the flush turn; else, when there
        is anything to flush, one ``claude -p`` call with the whole context does."""
        notes, used, cost, usage = "", None, 0.0, None
        result = answered
        if result is None and (prompt.messages or prompt.summary):
            result = await self.runner.run(
                prompt.prompt, system_prompt=self.system_prompt, model=model
            )
        if result is not None:
            used, cost, usage = result.model, result.cost, result.usage
            reply = result.reply or result.partial
            notes = "" if is_no_reply(reply) else reply
        now = self.sessions.clock()
        tz = self.sessions.tz
        local = now.astimezone(tz) if tz else now.astimezone()
        name = self.workspace.daily_name(local.date())
        path = self.workspace.resolve(name)
        blank = FlushProposal(
            session_id=session_id,
            notes="",
            target_name=name,
            target=path,
            block="",
            diff="",
            created_at=format_ts(now),
            compaction_count=compaction_count,
            model=used,
            cost=cost,
            heading=heading(local, path),
            usage=usage,
            live=answered is not None,
        )
        return blank.with_notes(notes, current=self._read(name))  # masked, block and diff built

    def apply(self, proposal: FlushProposal) -> Path | None:
        """Append the notes (if any) to their file, index it, and record the flush.

        The notes are appended to the file as it is now (an edit made since the proposal is
        kept). Returns the file written, or None when there was nothing to store.
        """
        store = self.sessions
        if proposal.chat_session:
            store.require(proposal.session_id)
        written: Path | None = None
        if proposal.notes:
            self.workspace.ensure()
            current = self._read(proposal.target_name)
            title = Path(proposal.target_name).stem
            written = self.workspace.save(
                proposal.target_name, _appended(current, proposal.block, title)
            )
            self.index(written)  # never raises: the watcher or the next ingest catches up
        if proposal.chat_session:
            store.mark_memory_flush(proposal.session_id, now=store.clock())
        return written

    async def run(self, session: ChatSession) -> FlushProposal:
        """Propose and apply in one go (the automatic flush)."""
        proposal = await self.propose(session)
        self.apply(proposal)
        return proposal

    # -- helpers --------------------------------------------------------------------------------

    def _read(self, name: str) -> str:
        try:
            return self.workspace.read(name)
        except NotFoundError:
            return ""

    @staticmethod
    def _heading(session: ChatSession, when: datetime, target: Path) -> str:
        """What the notes go under: the session and the time, then the link back to it."""
        name = prompt_field(session.label or session.key, HEADING_CHARS)
        short = prompt_field(session.id[:8], 8)
        link = os.path.relpath(session.transcript_path, target.parent)
        return (
            f"## {when:%H:%M} · {name} (session {short})\n\n"
            f"Memory flush from [session {short}]({Path(link).as_posix()})"
            f" · `clawback show {session.id}`\n\n"
        )


def _archived_heading(
    session_id: str, project: str, transcript: Path, when: datetime, target: Path
) -> str:
    """The heading of notes flushed from a Claude Code session: the project, the session."""
    # The session's id and folder come from its transcript: one line each, or a forged id
    # would write a heading of its own into the notes the next brief reads.
    short = prompt_field(session_id[:8], 8)
    project = prompt_field(project, HEADING_CHARS)
    link = prompt_field(Path(os.path.relpath(transcript, target.parent)).as_posix(), 400)
    return (
        f"## {when:%H:%M} · {project} (Claude Code session {short})\n\n"
        f"Memory flush from Claude Code [session {short}]({link}) before it was compacted"
        f" · `clawback show {prompt_field(session_id, 120)}`\n\n"
    )
