"""The compaction pane: one chat session's memory lifecycle, run by hand and shown as it is.

Token usage against the flush and compaction thresholds; "Flush memory now" (the proposed notes
and the diff to the memory file, accepted, edited first, or discarded); "Compact now" (the
summary shown before it is committed, which then starts fact extraction); the compaction ledger,
each row expanding to the messages it replaced; and the session's knowledge facts, superseded
ones dimmed, each editable by hand (an edit is marked, and no extraction rewrites it).

Nothing is written without the user confirming it in a dialog (an editor's Save counts; its
Escape never writes), and every read and write goes through the chat engine's thread
(:mod:`..engine`), never the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from clawback.core.chat.sessions import ChatSession
from clawback.core.errors import UsageError
from clawback.core.memory import (
    CompactionProposal,
    CompactionRecord,
    Compactor,
    Fact,
    FactStore,
    FlushProposal,
    MemoryFlush,
    MemoryLifecycleHooks,
    NothingToCompact,
    list_compactions,
)
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Button, OptionList, Static

from ..format import plural
from ..screens.dialogs import ChoiceScreen
from ..screens.editor import EditorScreen
from ..store import Store
from ..widgets.context_meter import ContextMeter, Usage
from ..widgets.lifecycle_views import FactList, LedgerRow, fact_order
from ..widgets.pane import Pane, stylesheet

if TYPE_CHECKING:
    from clawback.core.chat.engine import ChatEngine
    from clawback.core.chat.host import EngineHost

DIFF_LINES = 60  # the diff shown in the flush dialog is cut after this many lines


@dataclass
class Snapshot:
    """What the pane shows, read in one go on the engine's thread."""

    session: ChatSession | None
    ledger: list[CompactionRecord]
    facts: list[Fact]


def _lifecycle(engine: ChatEngine) -> MemoryLifecycleHooks:
    """The engine's memory lifecycle (the home builds every engine with one)."""
    if not isinstance(engine.hooks, MemoryLifecycleHooks):
        raise UsageError("The memory lifecycle is off for this chat engine.")
    return engine.hooks


def _flush(engine: ChatEngine) -> MemoryFlush:
    return _lifecycle(engine).flush


def _compactor(engine: ChatEngine) -> Compactor:
    return _lifecycle(engine).compactor


class CompactionPane(Pane):
    TITLE = "Compaction"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "flush", "Flush now"),
        Binding("c", "compact", "Compact now"),
        Binding("e", "edit_fact", "Edit fact"),
        Binding("r", "refresh", "Refresh", show=False),
    ]

    def __init__(self, store: Store, host: EngineHost, **kwargs: Any) -> None:
        super().__init__(**kwargs)
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
            yield Static("No facts from this session yet.", id="facts-none", classes="none")
            yield FactList(id="facts")

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
            db = engine.db
            facts = FactStore(db).list(session_id=session_id, include_superseded=True)
            return Snapshot(
                engine.store.get(session_id), list_compactions(db, session_id), fact_order(facts)
            )

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
            missing = "is not a clawback chat: chat in it first" if snapshot else "(loading…)"
            header.update(f"Session {self.session_id[:8]} {missing}")
        else:
            header.update(
                Content(
                    f"Session {session.label or session.id[:8]} · "
                    f"{plural(session.message_count, 'message')} · "
                    f"{plural(session.compaction_count, 'compaction')}"
                )
            )  # a label is not markup
        ledger, facts = self.query_one("#ledger"), self.query_one(FactList)
        await ledger.remove_children()
        facts.show(snapshot.facts if snapshot else [])
        self.query_one("#facts-none").display = snapshot is not None and not snapshot.facts
        if snapshot is None:
            return
        await ledger.mount_all(
            [LedgerRow(r) for r in snapshot.ledger]
            or [Static("No compactions yet.", classes="none")]
        )

    # -- flush ----------------------------------------------------------------------------------

    @on(Button.Pressed, "#compaction-actions Button")
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "flush-now":
            self.action_flush()
        else:
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
            self.notify("Nothing new worth storing in memory.", title="Memory flush", markup=False)
            return
        notes = await self._review_flush(proposal)
        if notes is None or not notes.strip():
            empty = "The edited notes were empty, so the flush was discarded"
            why = empty if notes is not None else "Flush discarded"
            self.notify(f"{why}: nothing was written.", title="Memory flush", markup=False)
            return
        edited = notes != proposal.notes

        def apply(engine: ChatEngine) -> object:  # edited: against the file as it is now
            final = proposal.with_notes(notes) if edited else proposal
            return _flush(engine).apply(final)

        written = await self.host.call(apply)
        what = "your edited notes" if edited else "the notes"
        self.notify(
            f"Saved {what} to {written or proposal.target_name}.",
            title="Memory flush",
            markup=False,
        )
        self.action_refresh()

    async def _review_flush(self, proposal: FlushProposal) -> str | None:
        """The notes to write: the proposal's or the user's rewrite; None writes nothing.
        Escape in the editor goes back to the choices: a slip never loses the proposal."""
        diff = "\n".join(proposal.diff.splitlines()[:DIFF_LINES])
        while True:
            choice = await self.app.push_screen_wait(
                ChoiceScreen(
                    f"Append these notes to {proposal.target_name}?",
                    [("accept", "Write them"), ("edit", "Edit…"), ("discard", "Discard")],
                    detail=f"{proposal.notes}\n\n{diff}",
                    cancel="discard",
                )
            )
            if choice == "accept":
                return proposal.notes
            if choice != "edit":
                return None
            edited = await self.app.push_screen_wait(
                EditorScreen(
                    f"Edit the notes for {proposal.target_name}",
                    proposal.notes,
                    hint="Save writes these notes under the flush heading."
                    " Escape goes back to the choices without writing anything.",
                )
            )
            if edited is not None:
                return edited

    # -- facts ----------------------------------------------------------------------------------

    def action_edit_fact(self) -> None:
        """Move to the facts list to pick one (the list's own ``e`` and Enter edit it)."""
        facts = self.query_one(FactList)
        if not facts.option_count:
            self.notify(
                "No facts from this session to edit.", title="Knowledge facts", markup=False
            )
            return
        facts.focus()

    @on(OptionList.OptionSelected, "#facts")
    def _fact_chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self._edit_fact(int(event.option.id))

    @work(exclusive=True, group="compaction-fact", exit_on_error=False)
    async def _edit_fact(self, fact_id: int) -> None:
        facts = self.snapshot.facts if self.snapshot else []
        fact = next((f for f in facts if f.id == fact_id), None)
        say = partial(self.notify, title="Knowledge facts")
        if fact is None:
            return
        if (newer := fact.superseded_by) is not None:
            say(f"Fact #{fact.id} was superseded by #{newer}: it is history, so it cannot be"
                f" edited. Edit #{newer} instead.", severity="warning")  # fmt: skip
            return
        text = await self.app.push_screen_wait(
            EditorScreen(
                f"Edit fact #{fact.id} ({fact.type})",
                fact.content,
                hint="Saved facts are marked edited: extraction never rewrites them.",
            )
        )
        if text is None:
            return
        text = " ".join(text.split())
        if not text or text == fact.content:
            say(f"Fact #{fact.id} was left as it was" + ("." if text else ": it needs some text."))
            return
        try:
            await self.host.call(lambda engine: FactStore(engine.db).edit(fact_id, text))
        except UsageError as exc:  # superseded since it was listed, say
            say(str(exc), severity="warning")
        else:
            say(f"Saved fact #{fact.id} (marked edited: extraction never rewrites it).")
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
            self.notify(str(exc), title="Compaction", markup=False)
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
            self.notify(
                "Compaction cancelled: nothing was changed.", title="Compaction", markup=False
            )
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
            markup=False,
        )
        self.action_refresh()

    # -- helpers --------------------------------------------------------------------------------

    def _need_session(self) -> bool:
        if self.session_id is None:
            self.notify(
                "Chat first (Ctrl+N), or open a native session.", severity="warning", markup=False
            )
            return False
        return True

    def _status(self, text: str) -> None:
        status = self.query_one("#compaction-status", Static)
        status.update(Content(text))  # error messages hold brackets
        status.display = bool(text)
