"""The footer: the keys of the pane in front first, then the app's, as many as the width holds.

Textual's footer cuts its row at the terminal's edge, so at 80 columns the last keys were never
seen (F5-F7 and Ctrl+Q among them). Here the pane's own keys, Help and Quit always show; the
command palette's key and the app's keys that switch panes (F1 lists them all) give way from the
end when the row would not fit. The panes keep their descriptions short so theirs fit in 80.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class PaneFooter(Footer):
    def __init__(self, optional: Iterable[str], *, compact: bool = False) -> None:
        """``optional``: actions whose keys may give way (the app's pane switches)."""
        super().__init__(compact=compact)
        self.optional = frozenset(optional) | {"command_palette"}  # the last key: first to go
        self._fitted_width = 0

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        width = self.size.width or self.app.size.width
        overflow = sum(_width(key) for key in keys) - width
        for key in reversed(keys):  # the last optional keys go first
            if overflow <= 0:
                break
            if isinstance(key, FooterKey) and key.action in self.optional:
                key.display = False
                overflow -= _width(key)
        self._fitted_width = width
        yield from keys

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._fitted_width:
            self.call_after_refresh(self.recompose)


def _width(key: Widget) -> int:
    """Columns a key takes in the compact footer: its key, a space, its description, a gap."""
    if not isinstance(key, FooterKey):
        return 0
    return len(key.key_display) + len(key.description) + 2
