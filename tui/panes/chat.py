"""The chat pane: a slot for native chat sessions, filled in once the chat engine lands.

The app already routes Ctrl+N here and hands the pane the ``runner`` given to ``make_app``, so
wiring the engine in means filling this module (input, streaming reply, slash commands, context
meter) without touching the app's layout or keys.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Static

from ..store import Store
from ..widgets.pane import Pane, stylesheet


class ChatPane(Pane):
    TITLE = "Chat"
    DEFAULT_CSS = stylesheet(__file__)

    def __init__(self, store: Store, runner: Any = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.runner = runner

    def compose(self) -> ComposeResult:
        yield Static(
            "New chat session\n\n"
            "Chatting with Claude from clawback arrives with the chat engine.\n"
            "Until then, browse (F2), read (F3), search (/) and edit memory (F5).",
            id="chat-placeholder",
        )

    def on_mount(self) -> None:
        self.border_title = self.TITLE

    def new_session(self) -> None:
        """Start a fresh native session (for now: say that chat is on its way)."""
        self.notify("The chat engine is not wired in yet.", title="New chat session")
