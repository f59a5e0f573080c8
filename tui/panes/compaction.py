"""The compaction pane: one chat session's memory lifecycle, run by hand and shown as it is.

Token usage against the flush and compaction thresholds; "Flush memory now" (the proposed notes
and the diff to the memory file, accepted or discarded); "Compact now" (the summary shown before
it is committed, which then starts fact extraction); the compaction ledger, each row expanding to
the messages it replaced; and the session's knowledge facts, superseded ones dimmed.

Nothing is written without the user confirming it in a dialog, and every read and write goes
through the chat engine's thread (:mod:`..engine`), never the event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from clawback.core.chat_sessions import ChatSession
from clawback.core.compaction import (
    CompactionProposal,
    CompactionRecord,
    Compactor,
    NothingToCompact,
    compacted_messages,
    list_compactions,
)
from clawback.core.facts import Fact, FactStore
from clawback.core.flush import FlushProposal, MemoryFlush
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Collapsible, Static

from ..format import local_time, plural
from ..screens.dialogs import ChoiceScreen
from ..store import Store
from ..widgets.context_meter import ContextMeter, Usage
from ..widgets.pane import Pane, stylesheet

if TYPE_CHECKING:
    from clawback.core.chat import ChatEngine

    from ..engine import EngineHost

DIFF_LINES = 60  # the diff shown in the flush dialog is cut after this many lines


@dataclass
class Snapshot:
    """What the pane shows, read in one go on the engine's thread."""

    session: ChatSession | None
    ledger: list[CompactionRecord]
    facts: list[Fact]


def _flush(engine: ChatEngine) -> MemoryFlush:
    return getattr(engine.hooks, "flush", None) or MemoryFlush(engine)


def _compactor(engine: ChatEngine) -> Compactor:
    return getattr(engine.hooks, "compactor", None) or Compactor(engine)


class LedgerRow(Collapsible):
    """One compaction; its compacted messages are read from the transcript when expanded."""

    def __init__(self, record: CompactionRecord) -> None:
        title = (
            f"{local_time(record.created_at)} · {record.tokens_before:,} → "
            f"{record.tokens_after:,} tokens · {plural(record.messages_removed, 'message')}"
        )
        super().__init__(
            Static(record.summary, classes="ledger-summary", markup=False),
            Static("", classes="ledger-messages", markup=False),
            title=title,
            collapsed=True,
            classes="ledger-row",
        )
        self.record = record
        self._loaded = False

    @on(Collapsible.Expanded)
    def _expanded(self) -> None:
        if not self._loaded:
            self._loaded = True
            self._load()

    @work(thread=True, group="ledger-messages", exit_on_error=False)
    def _load(self) -> None:
        messages = compacted_messages(self.record)
        lines = [f"{m.role}: {' '.join(m.content.split())[:200]}" for m in messages]
        text = "Compacted messages:\n" + "\n".join(lines) if lines else "(messages not found)"
        target = self.query_one(".ledger-messages", Static)
        self.app.call_from_thread(target.update, text)


class CompactionPane(Pane):
    TITLE = "Compaction"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "flush", "Flush now"),
        Binding("c", "compact", "Compact now"),
        Binding("r", "refresh", "Refresh", show=False),
    ]

    def __init__(self, store: Store, host: EngineHost, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.host = host
        self.session_id: str | None = None
        self.snapshot: Snapshot | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="compaction-header")
        yield ContextMeter(id="compaction-meter")
        with Horizontal(id="compaction-actions"):
            yield Button("Flush memory now (f)", id="flush-now", compact=True)
            yield Button("Compact now (c)", id="compact-now", compact=True)
        yield Static("", id="compaction-status")
        with VerticalScroll(id="compaction-body"):
            yield Static("Compaction ledger", classes="section")
            yield VerticalScroll(id="ledger")
            yield Static("Knowledge facts", classes="section")
            yield VerticalScroll(id="facts")

    async def on_mount(self) -> None:
        self.border_title = self.TITLE
        await self._render_snapshot()

    def focus_default(self) -> None:
        self.query_one("#flush-now", Button).focus()

    async def show(self, session_id: str | None) -> None:
        """Show ``session_id`` (a native chat session), or say how to get one."""
        if session_id == self.session_id and self.snapshot is not None:
            self.action_refresh()
            return
        self.session_id = session_id
        self.snapshot = None
        if self.is_mounted:
            await self._render_snapshot()
        if session_id is not None:
            self.action_refresh()

    # -- reading ------------------------------------------------------------------------------

    def action_refresh(self) -> None:
        if self.session_id is not None:
            self._refresh(self.session_id)

    @work(exclusive=True, group="compaction-refresh", exit_on_error=False)
    async def _refresh(self, session_id: str) -> None:
        def read(engine: ChatEngine) -> Snapshot:
            db = engine.app.db
            facts = FactStore(db).list(session_id=session_id, include_superseded=True)
            return Snapshot(engine.store.get(session_id), list_compactions(db, session_id), facts)

        snapshot = await self.host.call(read)
        if session_id == self.session_id:
            self.snapshot = snapshot
            await self._render_snapshot()

    async def _render_snapshot(self) -> None:
        header = self.query_one("#compaction-header", Static)
        snapshot, chat = self.snapshot, self.store.config.chat
        session = snapshot.session if snapshot else None
        self.query_one(ContextMeter).usage = Usage.of(session, chat)
        self.set_class(self.session_id is None, "-empty")
        if self.session_id is None:
            header.update(
                "No chat session here. Chat (Ctrl+N), or open a native session, then come back."
            )
        elif session is None:
            header.update(f"Session {self.session_id[:8]} (loading…)")
        else:
            header.update(
                f"Session {session.label or session.id[:8]} · "
                f"{plural(session.message_count, 'message')} · "
                f"{plural(session.compaction_count, 'compaction')}"
            )
        ledger, facts = self.query_one("#ledger"), self.query_one("#facts")
        await ledger.remove_children()
        await facts.remove_children()
        if snapshot is None:
            return
        await ledger.mount_all(
            [LedgerRow(r) for r in snapshot.ledger]
            or [Static("No compactions yet.", classes="none")]
        )
        await facts.mount_all(_fact_rows(snapshot.facts))

    # -- flush ----------------------------------------------------------------------------------

    @on(Button.Pressed, "#flush-now")
    def _flush_pressed(self) -> None:
        self.action_flush()

    @on(Button.Pressed, "#compact-now")
    def _compact_pressed(self) -> None:
        self.action_compact()

    def action_flush(self) -> None:
        if self._need_session():
            self._run_flush(self.session_id)

    @work(exclusive=True, group="compaction-action", exit_on_error=False)
    async def _run_flush(self, session_id: str) -> None:
        async def propose(engine: ChatEngine) -> FlushProposal:
            return await _flush(engine).propose(engine.store.require(session_id))

        self._status("Asking Claude which notes are worth keeping…")
        try:
            proposal = await self.host.submit(propose)
        finally:
            self._status("")
        if proposal.empty:
            self.notify("Nothing new worth storing in memory.", title="Memory flush")
            return
        diff = "\n".join(proposal.diff.splitlines()[:DIFF_LINES])
        choice = await self.app.push_screen_wait(
            ChoiceScreen(
                f"Append these notes to {proposal.target_name}?",
                [("accept", "Write them"), ("discard", "Discard")],
                detail=f"{proposal.notes}\n\n{diff}",
                cancel="discard",
            )
        )
        if choice != "accept":
            self.notify("Flush discarded: nothing was written.", title="Memory flush")
            return
        written = await self.host.call(lambda engine: _flush(engine).apply(proposal))
        self.notify(f"Saved notes to {written or proposal.target_name}.", title="Memory flush")
        self.action_refresh()

    # -- compaction -----------------------------------------------------------------------------

    def action_compact(self) -> None:
        if self._need_session():
            self._run_compact(self.session_id)

    @work(exclusive=True, group="compaction-action", exit_on_error=False)
    async def _run_compact(self, session_id: str) -> None:
        async def propose(engine: ChatEngine) -> CompactionProposal:
            return await _compactor(engine).propose(engine.store.require(session_id))

        self._status("Asking Claude to summarize the older messages…")
        try:
            proposal = await self.host.submit(propose)
        except NothingToCompact as exc:
            self.notify(str(exc), title="Compaction")
            return
        finally:
            self._status("")
        choice = await self.app.push_screen_wait(
            ChoiceScreen(
                f"Replace {plural(proposal.messages_removed, 'message')} with this summary"
                f" ({proposal.tokens_before:,} → {proposal.tokens_after:,} tokens)?",
                [("confirm", "Compact"), ("cancel", "Cancel")],
                detail=proposal.summary,
            )
        )
        if choice != "confirm":
            self.notify("Compaction cancelled: nothing was changed.", title="Compaction")
            return

        def commit(engine: ChatEngine) -> CompactionRecord:
            record = _compactor(engine).commit(proposal)
            extract = getattr(engine.hooks, "extract_facts_later", None)
            if extract is not None:
                extract(proposal)  # on the engine's loop; reported with the next chat notice
            return record

        record = await self.host.call(commit)
        self.notify(
            f"Compacted {plural(record.messages_removed, 'message')}; extracting facts from"
            " them in the background.",
            title="Compaction",
        )
        self.action_refresh()

    # -- helpers --------------------------------------------------------------------------------

    def _need_session(self) -> bool:
        if self.session_id is None:
            self.notify("Chat first (Ctrl+N), or open a native session.", severity="warning")
            return False
        return True

    def _status(self, text: str) -> None:
        status = self.query_one("#compaction-status", Static)
        status.update(text)
        status.display = bool(text)


def _fact_rows(facts: Sequence[Fact]) -> list[Any]:
    if not facts:
        return [Static("No facts from this session yet.", classes="none")]
    rows = []
    for fact in facts:
        row = Static(f"[{fact.type}] {fact.content}", classes="fact", markup=False)
        row.set_class(fact.superseded_by is not None, "-superseded")
        rows.append(row)
    return rows
