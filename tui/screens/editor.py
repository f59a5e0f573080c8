"""A modal editor for a short text the user reviews before it is stored (notes, a fact).

It only returns text: the caller decides what saving means, so nothing is ever written from
here. Escape and Cancel return ``None`` and leave the caller's data as it was; Ctrl+S and Save
return the text as typed (the caller trims and checks it).
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from ..widgets.text_editor import TextEditor


class EditorScreen(ModalScreen[str | None]):
    """Edit ``text`` under ``title``; returns the edited text, or ``None`` when cancelled."""

    CSS_PATH = "editor.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: the TextArea would otherwise take the keys it knows before the screen
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, title: str, text: str, *, hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="editor"):
            yield Static(self.title_text, classes="editor-title", markup=False)
            if self.hint:
                yield Static(self.hint, classes="editor-hint", markup=False)
            yield TextEditor(self.text, id="editor-text", soft_wrap=True)
            with Horizontal(classes="editor-buttons"):
                yield Static("Ctrl+S saves · Escape cancels", classes="editor-keys")
                yield Button("Save", id="editor-save", variant="primary", compact=True)
                yield Button("Cancel", id="editor-cancel", compact=True)

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    @property
    def edited(self) -> str:
        return self.query_one(TextArea).text

    @on(Button.Pressed, "#editor-save")
    def action_save(self) -> None:
        self.dismiss(self.edited)

    @on(Button.Pressed, "#editor-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
