"""The app's panes, one module each beside its stylesheet, and the set the app holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clawback.core.chat.host import EngineHost
from clawback.core.home import engine_host
from textual.widget import AwaitMount
from textual.widgets import ContentSwitcher

from ..store import Store
from ..widgets.pane import Pane
from .compaction import CompactionPane
from .memory import MemoryPane
from .search import SearchPane
from .sessions import SessionsPane
from .transcript import TranscriptPane
from .usage import UsagePane

if TYPE_CHECKING:
    from clawback.core.claude import ClaudeRunner


@dataclass
class Panes:
    """Every pane, built up front so routing never depends on what is mounted yet."""

    sessions: SessionsPane
    transcript: TranscriptPane
    search: SearchPane
    memory: MemoryPane
    compaction: CompactionPane
    usage: UsagePane
    host: EngineHost  # the chat engine's thread, shared by the chat input and compaction
    _mounting: dict[Pane, AwaitMount] = field(default_factory=dict)

    @classmethod
    def build(cls, store: Store, runner: ClaudeRunner | None = None) -> Panes:
        host = engine_host(store.paths.home, runner)
        return cls(
            SessionsPane(store, id="sessions"),
            TranscriptPane(store, host, id="transcript"),
            SearchPane(store, id="search"),
            MemoryPane(store, id="memory"),
            CompactionPane(store, host, id="compaction"),
            UsagePane(store, id="usage"),
            host,
        )

    def all(self) -> list[Pane]:
        return [
            self.sessions, self.transcript, self.search, self.memory, self.compaction, self.usage,
        ]  # fmt: skip

    async def mount(self, pane: Pane, switcher: ContentSwitcher) -> None:
        """Mount ``pane`` the first time it is shown: start-up builds only what is on screen."""
        if pane.is_mounted:
            return
        if pane not in self._mounting:
            pane.display = False  # the switcher shows it when it becomes current
            self._mounting[pane] = switcher.mount(pane)
        await self._mounting[pane]
