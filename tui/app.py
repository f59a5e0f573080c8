"""The terminal app: routes messages between the panes (``panes/``, which own all behaviour),
starts the app-wide workers (``background.py``) and holds no logic. Build it with ``make_app``."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from clawback.core.home import Home
from clawback.themes import LoadedThemes, load_themes
from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import ModalScreen, Screen
from textual.widgets import ContentSwitcher, Header
from textual.worker import Worker, WorkerState

from . import background, commands
from .panes import Panes
from .panes.search import SearchPane
from .panes.sessions import SessionsPane
from .panes.transcript import Target, TranscriptPane
from .panes.usage import UsagePane
from .screens.help import HelpScreen
from .store import Store
from .theming import ThemeKeeper
from .watcher import ArchiveChanged
from .widgets.chat_dock import ChatDock
from .widgets.footer import PaneFooter
from .widgets.pane import Pane

if TYPE_CHECKING:  # the chat loads claude's runner when it starts, not the app
    from clawback.core.claude import ClaudeRunner

PANE_ACTIONS = {"show_pane", "show_compaction", "chat", "new_chat", "toggle_sessions", "help"}
# Below this width the sessions list and the pane beside it would both be too narrow to use,
# so one shows at a time, full width (as lazygit and k9s do): the list while it has focus.
NARROW = 110
PANE_SWITCHES = (
    "show_pane('search')", "show_pane('sessions')", "show_pane('transcript')",
    "show_pane('memory')", "show_compaction", "chat", "new_chat", "show_pane('usage')",
)  # fmt: skip
QUIT_WAIT = 10.0  # seconds a cancelled reply gets to be stored when the app quits


class ClawbackApp(App[int]):
    TITLE = "clawback"
    CSS_PATH = "app.tcss"
    # The footer shows the focused pane's own keys first, then these; the pane switches
    # (PANE_SWITCHES, all listed by F1) give way when the row would not fit (80 columns).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+f", "show_pane('search')", "Search", priority=True),  # even inside inputs
        Binding("slash", "show_pane('search')", "Search", show=False),
        Binding("f1,question_mark", "help", "Help"),
        Binding("f2", "show_pane('sessions')", "Sessions"),
        Binding("ctrl+b", "toggle_sessions", "Sessions list", show=False),
        Binding("f3", "show_pane('transcript')", "Transcript"),
        Binding("f4", "show_pane('search')", "Search", show=False),
        Binding("f5", "show_pane('memory')", "Memory"),
        # TextArea binds F6/F7 (select line / all): pane keys must win inside the editors too
        Binding("f6", "show_compaction", "Compaction", priority=True),
        Binding("f7", "chat", "Chat", priority=True),
        Binding("ctrl+n", "new_chat", "New chat", priority=True),
        Binding("f8", "show_pane('usage')", "Usage", priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, store: Store, themes: LoadedThemes, *, runner: ClaudeRunner | None = None,
                 watch: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.store, self.live_updates = store, watch
        self.stop_watching, self.watching = threading.Event(), threading.Event()
        self.themes = ThemeKeeper(themes, store.config.ui.theme)
        self.panes = Panes.build(store, runner)
        self._previous = "transcript"
        self.show_sessions = store.config.ui.show_sessions  # the wide layout's choice

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            yield self.panes.sessions
            with ContentSwitcher(initial="transcript", id="main"):
                yield self.panes.transcript
        yield PaneFooter(PANE_SWITCHES, compact=True)

    def on_mount(self) -> None:
        self.themes.install(self)
        self.sub_title = TranscriptPane.TITLE
        self.query_one("#body").set_class(self.size.width < NARROW, "-narrow")
        self._arrange(self.show_sessions)
        start = self.panes.sessions if self.show_sessions else self.panes.transcript
        start.focus_default()
        background.start(self)

    # -- fitting the terminal -------------------------------------------------------------------

    @property
    def narrow(self) -> bool:
        return self.query_one("#body").has_class("-narrow")

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.query_one("#body").set_class(width < NARROW, "-narrow")
        self._arrange(self.panes.sessions.has_focus_within if self.narrow else self.show_sessions)

    def _arrange(self, sessions: bool) -> None:
        """Show the sessions list or not; when narrow, it takes the place of the main pane."""
        self.panes.sessions.display = sessions
        self.query_one("#main").display = not (sessions and self.narrow)

    def _show_main(self) -> None:
        """Before focusing into the main pane: on a narrow terminal it may be hidden behind
        the list, which goes once focus has moved (:meth:`on_descendant_focus`)."""
        self.query_one("#main").display = True

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if self.narrow:  # focus left the list (a session opened, a pane key): the pane returns
            self._arrange(self.panes.sessions.has_focus_within)

    def on_unmount(self) -> None:
        self.stop_watching.set()  # the watcher thread checks it every 50 ms
        self.panes.host.close()
        self.store.close()

    async def action_show_pane(self, name: str, focus: bool = True) -> None:
        pane: Pane = getattr(self.panes, name)
        if name == "sessions" and not pane.display:
            self.action_toggle_sessions()
        elif focus and self.narrow and name != "sessions":
            # Show the pane first and let the list go once focus has moved into it: hiding
            # the focused list first made Textual move focus on its own, after ours, to
            # whatever came next (the search results, not the input).
            self._show_main()
        switcher = self.query_one("#main", ContentSwitcher)
        await self.panes.mount(pane, switcher)
        if name != "sessions" and switcher.current != name:
            if switcher.current != "search":
                self._previous = switcher.current or "transcript"
            switcher.current, self.sub_title = name, pane.TITLE
        if focus:
            pane.focus_default()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Pane keys wait while a dialog is open: switching panes under it would hide what the
        dialog is about (its own keys, and Ctrl+Q, still work)."""
        return not (action in PANE_ACTIONS and isinstance(self.screen, ModalScreen))

    def action_toggle_sessions(self) -> None:
        """Hide or show the sessions list (more room for a transcript); remembered, except on
        a narrow terminal, where it swaps the list and the pane beside it."""
        sessions = self.panes.sessions
        shown = not sessions.display
        self._arrange(shown)
        if shown and self.narrow:
            sessions.focus_default()
        elif not shown and sessions.has_focus_within:
            shown_pane = self.query_one("#main", ContentSwitcher).visible_content
            if isinstance(shown_pane, Pane):
                shown_pane.focus_default()
        if self.narrow:
            return
        self.show_sessions = shown
        background.save_settings(
            self, self.store, "the panes shown", lambda: {"ui.show_sessions": shown}
        )

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self))  # its own keys close it, so it never stacks

    async def action_new_chat(self) -> None:
        self._show_main()
        await self.action_show_pane("transcript", focus=False)
        await self.panes.transcript.new_chat()

    async def action_chat(self) -> None:
        """The chat input under the open transcript (a new chat when none is open)."""
        self._show_main()
        await self.action_show_pane("transcript", focus=False)
        await self.panes.transcript.action_chat()

    async def action_show_compaction(self, session_id: str | None = None) -> bool:
        """The compaction pane for ``session_id``, else for the session the chat input continues
        (the native session on screen, or the one the last turn wrote to). A Claude Code or
        OpenClaw session on screen, with no chat of its own, gets a notification saying why
        instead: whether the pane is shown."""
        if session_id is None:
            session_id = self.panes.transcript.chat_session_id
            why_not = self.panes.transcript.not_compactable()
            if session_id is None and why_not:
                self.notify(why_not, title="Compaction", timeout=8, markup=False)
                return False
        await self.action_show_pane("compaction")
        await self.panes.compaction.show(session_id)
        return True

    async def action_quit(self) -> None:
        self.panes.memory.when_saved(self._quit)

    def _quit(self) -> None:
        self.run_worker(self._stop_turn_then_exit(), group="quit", exclusive=True)

    async def _stop_turn_then_exit(self) -> None:
        """Quit; a reply still streaming is cancelled first, as Escape does, so its partial text
        is stored (marked cut short) before the chat engine stops with the app."""
        dock = self.panes.transcript.dock
        turns = [w for w in self.workers if w.node is dock and w.group == "chat-turn"]
        if dock.busy and turns:
            self.notify(
                "Stopping the reply; what came of it is kept.", title="Quitting", markup=False
            )
            self.panes.host.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.workers.wait_for_complete(turns), QUIT_WAIT)
        self.exit()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from commands.app_commands(self)

    async def open_session(
        self, sid: str, target: Target | None = None, focus: bool = True
    ) -> None:
        if self.is_running:  # a late preview can arrive while the app shuts down
            self.panes.transcript.open(sid, target, focus=focus)
            self.panes.search.current_session_id = sid
            # A preview (the list's cursor moving, or its first page arriving) brings the
            # transcript forward only while one is in the list: the start-up preview must not
            # pull the screen away from a search typed into meanwhile.
            if focus or self.panes.sessions.has_focus_within:
                await self.action_show_pane("transcript", focus=focus)

    @on(SessionsPane.SessionChosen)
    async def _session_chosen(self, event: SessionsPane.SessionChosen) -> None:
        await self.open_session(event.session_id, focus=event.focus)  # no focus: a preview

    @on(SessionsPane.ListedNothing)
    async def _listed_nothing(self) -> None:
        await self.panes.transcript.show_nothing()

    @on(SearchPane.HitChosen)
    async def _hit_chosen(self, event: SearchPane.HitChosen) -> None:
        hit = event.hit
        if hit.source == "memory":
            # clawback's own memory files and Claude Code's auto memory open alike
            doc = self.panes.memory.doc_at(Path(hit.path), hit.file)
            if doc is None:
                self.notify(f"{hit.path} is not a memory file this app edits.", markup=False)
                return
            await self.action_show_pane("memory")
            self.panes.memory.open_file(doc, line=hit.line, focus=True)
        elif hit.session_id is not None:
            self.panes.sessions.reveal(hit.session_id)
            await self.open_session(hit.session_id, Target.of(hit))

    @on(UsagePane.SessionChosen)
    async def _usage_session_chosen(self, event: UsagePane.SessionChosen) -> None:
        self.panes.sessions.reveal(event.session_id)
        await self.open_session(event.session_id)

    @on(ChatDock.TurnEnded)
    def _turn_ended(self, event: ChatDock.TurnEnded) -> None:
        self.panes.sessions.archive_changed()  # the engine indexed the transcript already
        self.panes.usage.archive_changed()
        if event.session_id and self.panes.compaction.session_id == event.session_id:
            self.panes.compaction.action_refresh()

    @on(ChatDock.LifecycleRequested)
    async def _lifecycle_requested(self, event: ChatDock.LifecycleRequested) -> None:
        await self.action_show_compaction(event.session_id)
        if event.action == "flush":
            self.panes.compaction.action_flush()
        else:
            self.panes.compaction.action_compact()

    @on(SearchPane.Left)
    async def _search_left(self) -> None:
        await self.action_show_pane(self._previous)

    @on(ArchiveChanged)
    def _archive_changed(self, event: ArchiveChanged) -> None:
        if self.is_running:
            self.panes.sessions.archive_changed()
            self.panes.transcript.archive_changed()
            self.panes.usage.archive_changed()
            self.panes.memory.files_changed(event.batch.paths)
        for problem in event.batch.errors:
            self.notify(problem, title="Live update", severity="warning", markup=False)

    def watch_theme(self, name: str) -> None:
        self.themes.changed(self, name)

    @on(Pane.WorkerFailed)
    def _pane_worker_failed(self, event: Pane.WorkerFailed) -> None:
        background.report_failure(self, event.worker)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            background.report_failure(self, event.worker)


def make_app(home: Home, *, runner: ClaudeRunner | None = None, watch: bool = True) -> ClawbackApp:
    """The app on an opened home. ``runner`` runs ``claude`` for the chat (default: one built
    from the home's config); ``watch`` turns the live updates on."""
    themes = load_themes(home.paths.home / "themes")
    return ClawbackApp(Store(home), themes, runner=runner, watch=watch)
