"""A text area that also goes to the start and the end of the document (Ctrl+Home, Ctrl+End).

Textual's ``TextArea`` binds Home and End to the line only, so in a long ``MEMORY.md`` the end
was a long way down; every editor in the app uses this one.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import TextArea


class TextEditor(TextArea):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+home", "document_start", "Start of the text", show=False),
        Binding("ctrl+end", "document_end", "End of the text", show=False),
        Binding("ctrl+shift+home", "document_start(True)", show=False),
        Binding("ctrl+shift+end", "document_end(True)", show=False),
    ]

    def action_document_start(self, select: bool = False) -> None:
        self.move_cursor((0, 0), select=select)

    def action_document_end(self, select: bool = False) -> None:
        self.move_cursor(self.document.end, select=select)
