"""The chat engine: one turn of a conversation, from what the user typed to a stored reply.

Every client (``clawback chat``, the app) runs turns through :class:`ChatEngine`, which picks
the session and the context; :mod:`clawback.core.chat.turn` runs the turn. The pipeline and
its failure modes: ``docs/chat.md``.

This module must never lose what the user typed, never store a recalled block in a transcript,
and never import UI code: it yields plain dataclass events a UI turns into its own messages.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path

import sqlite_utils
from clawback.core.archive import resolve_session, session_messages
from clawback.core.chat.events import (
    ChatEvent,
    Notice,
    PreparedTurn,
    PromptAssembled,
    ReplyDelta,
    SessionChanged,
    ThresholdHooks,
    ToolCalled,
    TurnFinished,
    TurnOutcome,
)
from clawback.core.chat.live import LiveConversation, LiveConversations, ProcessSpec
from clawback.core.chat.prompt import (
    AssembledPrompt,
    ContextMessage,
    History,
    assemble,
    system_prompt_for,
)
from clawback.core.chat.sessions import (
    ChatSession,
    Clock,
    SessionStore,
    local_session_key,
    parse_label_command,
    parse_reset_trigger,
    resolve_model,
)
from clawback.core.chat.transcript import Transcript
from clawback.core.chat.turn import ChatTurn, TurnPlan
from clawback.core.claude import (
    AssistantMessage,
    ClaudeBadOutput,
    ClaudeError,
    ClaudeRunner,
    McpTools,
    Result,
    TextDelta,
    TurnResult,
    chat_tools,
    config_block,
)
from clawback.core.config import ChatConfig
from clawback.core.errors import NotFoundError
from clawback.core.paths import Paths
from clawback.core.recall import FactsProvider, RecallBlock, recall
from clawback.core.safejson import clean_text
from clawback.core.search import NearestChunks
from clawback.core.timeutil import normalize_ts

__all__ = [
    "ChatEngine",
    "ChatEvent",
    "ChatTarget",
    "ChatTurn",
    "LiveConversations",
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

MAX_FORK_DEPTH = 16


@dataclass(frozen=True)
class ChatTarget:
    """Where a turn goes (:meth:`ChatEngine.target`): a key, or a session id; ``forked`` is the
    fork made for it, ``fork_of`` the archived session it continues (alone in a dry run)."""

    key: str | None = None
    session_id: str | None = None
    forked: ChatSession | None = None
    fork_of: str | None = None


class ChatEngine:
    """Runs chat turns for one clawback home. Safe to share; each turn is a :class:`ChatTurn`.

    ``runner`` defaults to one built from ``config.chat``; ``hooks`` to :class:`ThresholdHooks`
    (no-ops); ``facts_provider`` (``(query, limit) -> facts``) feeds the recalled knowledge;
    ``clock`` / ``tz`` make session freshness and timestamps testable. ``live``: keep a
    ``claude`` process per session between turns (:mod:`clawback.core.chat.live`), for a host
    that runs many turns (``True``: as ``chat.live_idle_minutes`` and ``chat.live_sessions``
    say, none when the first is 0); such a host calls :meth:`aclose` when it ends.
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        paths: Paths,
        chat: ChatConfig,
        *,
        index: Callable[[set[Path]], object] = lambda paths: None,
        runner: ClaudeRunner | None = None,
        hooks: ThresholdHooks | None = None,
        facts_provider: FactsProvider | None = None,
        clock: Clock | None = None,
        tz: tzinfo | None = None,
        store: SessionStore | None = None,
        nearest: NearestChunks | None = None,
        live: LiveConversations | bool = False,
    ) -> None:
        self.db = db
        self.paths = paths
        self.chat = chat
        self._index_paths = index
        self.runner = runner or ClaudeRunner.from_config(chat, cwd=paths.home / "claude-cwd")
        self.hooks = hooks or ThresholdHooks()
        self.facts_provider = facts_provider
        self.nearest = nearest  # the vector side of recall, when the archive has embeddings
        self.store = store or SessionStore(db, paths, chat, clock=clock, tz=tz, on_write=self.index)
        self.clock: Callable[[], datetime] = self.store.clock
        self.running: set[ChatTurn] = set()  # turns in flight, for cancel()
        self.live: LiveConversations | None = None
        if isinstance(live, LiveConversations):
            self.live = live
        elif live and chat.live_idle_minutes > 0:
            self.live = LiveConversations(
                self.runner, idle_seconds=chat.live_idle_minutes * 60.0, most=chat.live_sessions
            )

    # -- public API -----------------------------------------------------------------------------

    def turn(
        self,
        text: str,
        *,
        key: str | None = None,
        session_id: str | None = None,
        model: str | None = None,
        new: bool = False,
    ) -> ChatTurn:
        """A turn, ready to iterate (``async for event in turn``); nothing runs before that.

        ``key`` defaults to ``local:<user>``; ``session_id`` continues that exact session even if
        stale (forks, a session picked in a list); ``model`` is for this turn only; ``new``
        starts a new session first (as ``/new`` does).
        """
        # Text from argv or a pipe may hold lone surrogates (bytes that were not UTF-8): they
        # could be neither written to the transcript nor sent to claude.
        text = clean_text(text)
        return ChatTurn(self, text, key=key, session_id=session_id, model=model, new=new)

    def cancel(self) -> None:
        """Cancel every running turn (from any thread)."""
        for turn in list(self.running):
            turn.cancel()

    async def aclose(self) -> None:
        """End the live conversations' processes (a host that ends calls this; a one-shot
        engine has none). Turns still running are cancelled first."""
        self.cancel()
        if self.live is not None:
            await self.live.aclose()

    # -- live conversations ---------------------------------------------------------------------

    def process_spec(self, model: str | None) -> ProcessSpec:
        """What a live process for a turn with ``model`` is started with."""
        return ProcessSpec(system_prompt_for(self.chat), model or self.runner.model,
                           self.memory_tools())  # fmt: skip

    def conversation(
        self, session: ChatSession, history: History, model: str | None
    ) -> LiveConversation | None:
        """The live process that holds exactly ``history`` for ``session`` with ``model``,
        if one runs (its next turn sends only the new message)."""
        if self.live is None:
            return None
        return self.live.find(session.id, self.process_spec(model), history)

    async def silent_turn(self, session: ChatSession, text: str) -> TurnResult | None:
        """Run ``text`` as a turn of ``session``'s live conversation and return the reply,
        storing nothing (the memory flush: its prompt reads the cached conversation). ``None``
        when no live process holds the session's conversation (nothing is sent then)."""
        found = self.live.get(session.id) if self.live is not None else None
        if found is None or not found.usable:
            return None
        if not found.holds_the_start_of(self.history(session)):
            return None
        streamed: list[str] = []
        result: Result | None = None
        try:
            async with contextlib.aclosing(found.process.turn(text)) as events:
                async for event in events:
                    if isinstance(event, TextDelta | AssistantMessage) and event.text:
                        if isinstance(event, TextDelta) or not streamed:  # deltas, else whole
                            streamed.append(event.text)
                    elif isinstance(event, Result):
                        result = event
        finally:
            if self.live is not None:
                self.live.touch(found)
        if result is None:  # turn() raises instead; this is only a guard
            raise ClaudeBadOutput("(no result line)")
        return TurnResult.from_result(result, "".join(streamed))

    def prepare(
        self,
        text: str,
        *,
        key: str | None = None,
        session_id: str | None = None,
        model: str | None = None,
        new: bool = False,
        fork_of: str | None = None,
    ) -> PreparedTurn:
        """What the turn would send, without creating a session or writing a line.

        ``fork_of`` previews the first turn of a fork of that session (chat or archived).
        """
        plan = self.plan(
            text, key=key, session_id=session_id, model=model, new=new or bool(fork_of), dry=True
        )
        argv_model = plan.model
        prompt = None
        if plan.command is None:
            if fork_of:
                history = self._history_of(fork_of, None, 1)
            else:
                history = self.history(plan.session) if plan.session else History()
            prompt = self.assemble(plan.session, history, plan.message)
        try:
            executable = self.runner.executable()
        except ClaudeError:
            executable = self.runner.command
        tools = self.memory_tools(write=False)
        argv = self.runner.build_argv(
            executable,
            system_prompt=prompt.system_prompt if prompt else "",
            model=argv_model,
            tools=tools,
        )
        return PreparedTurn(
            session_key=plan.key,
            session=plan.session,
            new_session=plan.new_session,
            model=argv_model or self.runner.model,
            command=plan.command,
            message=plan.message,
            prompt=prompt,
            argv=argv,
            mcp_config=config_block(self.paths.home) if tools is not None else None,
        )

    def target(self, ref: str, *, dry: bool = False) -> ChatTarget:
        """Where a message to the session ``ref`` goes, for every client alike.

        ``ref`` is a chat key (it has a ``:``), a chat session's id or id prefix, or any archived
        session (an id, prefix or key, as ``clawback show`` takes). A chat session is continued
        as it is. An archived one (Claude Code, OpenClaw, or a native transcript this chat never
        ran) is continued in a fork: the fresh fork made earlier if there is one, else a new
        one, made now unless ``dry`` (a dry run only says which session it would fork).
        """
        ref = ref.strip()
        if ":" in ref:
            return ChatTarget(key=self.store.normalize_key(ref))
        found = self.store.find(ref)
        if found is not None:
            return ChatTarget(session_id=found.id)
        try:
            parent = resolve_session(self.db, ref).id
        except NotFoundError:
            raise NotFoundError(
                f"no session {ref!r}: give a key such as {local_session_key()} or a "
                "session id (see `clawback sessions`)"
            ) from None
        live = self.store.live_fork(parent)
        if live is not None:
            return ChatTarget(session_id=live.id)
        if dry:
            return ChatTarget(fork_of=parent)
        fork = self.fork(parent)
        return ChatTarget(session_id=fork.id, forked=fork, fork_of=parent)

    def memory_tools(self, *, write: bool = True) -> McpTools | None:
        """The MCP flags that offer clawback's memory tools to ``claude`` (``chat.memory_tools``).

        The config file runs ``clawback mcp`` on this home; ``write=False`` only names it.
        """
        if not self.chat.memory_tools:
            return None
        return chat_tools(self.paths, write=write)

    def fork(self, parent_id: str, *, key: str | None = None) -> ChatSession:
        """A new session continuing ``parent_id`` (a chat, or any archived session)."""
        return self.store.fork(parent_id, key=key)

    # -- history --------------------------------------------------------------------------------

    def history(self, session: ChatSession, *, skip_ids: Sequence[str] = ()) -> History:
        """The conversation the model sees for ``session``: forks start from their parent."""
        history = self._native_history(
            Transcript(session.transcript_path), session.parent_id, None, 0
        )
        if skip_ids:
            history.messages = [m for m in history.messages if m.id not in skip_ids]
        return history

    def _native_history(
        self, transcript: Transcript, parent_id: str | None, until: str | None, depth: int
    ) -> History:
        view = transcript.read(until=until)
        own = [
            ContextMessage(m.id, m.role, m.content, m.timestamp, m.partial)
            for m in view.live_messages
            if m.role in ("user", "assistant") and m.content.strip()
        ]
        if view.compaction is not None:
            return History(view.compaction.summary, own)
        parent = view.parent_id or parent_id
        if parent and depth < MAX_FORK_DEPTH:
            cutoff = view.created or until
            if until and cutoff and (normalize_ts(until) or "") < (normalize_ts(cutoff) or ""):
                cutoff = until
            base = self._history_of(parent, cutoff, depth + 1)
            return History(base.summary, base.messages + own)
        return History(None, own)

    def _history_of(self, session_id: str, until: str | None, depth: int) -> History:
        row = self.store.get(session_id)
        path = row.transcript_path if row else self.paths.sessions / f"{session_id}.jsonl"
        if path.is_file():
            return self._native_history(Transcript(path), None, until, depth)
        return self._archive_history(session_id, until)

    def archived_history(self, session_id: str) -> History:
        """A session clawback only reads (Claude Code, OpenClaw), as the model would see it now:
        the latest compaction summary and what followed (its memory flush works on this)."""
        return self._archive_history(session_id, None)

    def _archive_history(self, session_id: str, until: str | None) -> History:
        """A Claude Code / OpenClaw session from the archive, as a fork's starting context."""
        cutoff = normalize_ts(until) if until else None
        summary: str | None = None
        messages: list[ContextMessage] = []
        found = session_messages(self.db, session_id, conversational_only=True, sidechains=False)
        for m in found:
            if cutoff and m.timestamp and m.timestamp > cutoff:
                break
            if m.kind == "compaction":
                summary, messages = m.text, []
                continue
            if m.role not in ("user", "assistant") or m.kind != "text" or not m.text.strip():
                continue
            messages.append(
                ContextMessage(f"entry:{m.entry_id}", m.role, m.text, m.timestamp, m.partial)
            )
        return History(summary, messages)

    # -- steps shared by turns and dry runs -----------------------------------------------------

    def _resolve_model(self, model: str | None) -> str | None:
        if not model:
            return None
        return resolve_model(model, self.chat) or model

    def plan(
        self,
        text: str,
        *,
        key: str | None,
        session_id: str | None,
        model: str | None,
        new: bool,
        dry: bool,
    ) -> TurnPlan:
        store = self.store
        trigger = parse_reset_trigger(text, self.chat)
        label = parse_label_command(text) if trigger is None else None
        message = trigger.message if trigger else text
        command = "label" if label is not None else None
        wants_new = new or trigger is not None
        if trigger is not None and not message.strip():
            command = "new"
        current: ChatSession | None
        if session_id:
            current = store.require(session_id)
            key = current.key
        else:
            key = store.normalize_key(key or local_session_key())
            current = store.peek(key) if dry else None
        override = trigger.model if trigger else None
        if wants_new:
            reason = "reset" if trigger is not None and trigger.command == "reset" else "new"
            session = None if dry else store.reset(key, model_override=override)
            new_session = True
        elif session_id:
            session, new_session, reason = current, False, None
        elif dry:
            session, new_session = current, current is None
            reason = "stale" if new_session else None
        else:
            before = store.current(key)
            session, new_session = store.get_or_create(key)
            reason = ("stale" if before else "first") if new_session else None
        chosen = self._resolve_model(model) or override
        if chosen is None and session is not None:
            chosen = session.model_override
        return TurnPlan(
            key, session, new_session, reason, message, chosen, override, command, label
        )

    def assemble(
        self,
        session: ChatSession | None,
        history: History,
        message: str,
        *,
        message_id: str | None = None,
        held: LiveConversation | None = None,
    ) -> AssembledPrompt:
        """The prompt for ``message`` after ``history``. ``message_id``: the message's own line,
        when a turn stored (and indexed) it already; recall leaves it out like the history it
        carries, so a turn recalls what its dry run (which stores nothing) shows.
        ``held``: the live process that holds ``history``, so only the new turn is sent, and
        recall leaves out what the process's earlier recalled blocks brought."""
        window = (session.context_tokens if session else None) or self.chat.context_window
        recaller = functools.partial(self._recall, message_id=message_id, held=held)
        continues = held is not None
        return assemble(
            self.chat, history, message, context_window=window, recaller=recaller,
            continues=continues,
        )  # fmt: skip

    def _recall(
        self,
        user_texts: Sequence[str],
        cap: int,
        kept: Sequence[ContextMessage],
        others: Sequence[str],
        *,
        message_id: str | None = None,
        held: LiveConversation | None = None,
    ) -> RecallBlock:
        ids = [m.id for m in kept] + ([message_id] if message_id else [])
        texts = [m.content for m in kept] + list(others)
        if held is not None:  # the process holds the earlier turns' recalled blocks too
            ids += sorted(held.recalled_ids)
            texts += held.recalled_texts
        try:
            return recall(
                self.db,
                user_texts,
                cap=cap,
                present_ids=ids,
                present_texts=texts,
                facts_provider=self.facts_provider,
                nearest=self.nearest,
            )
        except sqlite3.Error:
            return RecallBlock(query="", cap=cap)  # recall is a bonus; a busy index skips it

    def index(self, path: Path) -> None:
        """Index a transcript now (the same-process notification); never fails a turn."""
        with contextlib.suppress(sqlite3.Error, OSError):
            self._index_paths({path})
