"""The help screen: every key of the app, grouped by where it works.

Built from the bindings themselves (the app's, each pane's, the message view's), so it can
never drift from what the keys actually do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from ..app import ClawbackApp

# Keys handled by widgets rather than bindings of ours, worth saying out loud.
EXTRA = {
    "Everywhere": [
        ("ctrl+p", "Command palette: every action"),
        ("tab", "Next control"),
    ],
    "Sessions": [
        ("enter", "Open the session's transcript"),
        ("type", "In the filter: narrow (project:NAME for a project)"),
    ],
    "Transcript": [("pageup/pagedown", "Scroll")],
    "Search": [("enter", "Open the highlighted result")],
    "Usage": [
        ("left/right", "On the chart: the day before or after"),
        ("enter", "Open the highlighted session"),
    ],
    "Chat": [
        ("enter", "Send the message"),
        ("shift+enter", "New line, where the terminal reports it"),
        ("tab", "Complete a /command (/help lists them)"),
    ],
}


def binding_rows(app: ClawbackApp, bindings: list[BindingType]) -> list[tuple[str, str]]:
    """One row per action: every key that triggers it, then what it does."""
    rows: dict[str, tuple[list[str], str]] = {}
    # A key one label already names ("j/k") has no line of its own: it said "k Previous message"
    # under "j/k Move".
    labels = [b.key_display for b in bindings if isinstance(b, Binding) and b.key_display]
    named = {key for label in labels for key in label.split("/")}
    for binding in bindings:
        if not isinstance(binding, Binding) or not binding.description:
            continue
        if not binding.key_display and set(binding.key.split(",")) <= named:
            continue
        keys, _ = rows.setdefault(binding.action, ([], binding.tooltip or binding.description))
        if binding.key_display:  # one label for several keys, as the footer shows it ("j/k")
            keys.append(binding.key_display)
            continue
        keys += [app.get_key_display(Binding(k, binding.action)) for k in binding.key.split(",")]
    # ", " between keys: " / " read "^f / / / f4" when one of the keys is the slash
    return [(", ".join(keys), description) for keys, description in rows.values()]


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,question_mark,q", "dismiss", "Close")
    ]

    def __init__(self, app: ClawbackApp) -> None:
        super().__init__()
        from ..widgets.chat_dock import ChatDock
        from ..widgets.message_view import MessageView

        self.sections: list[tuple[str, list[tuple[str, str]]]] = [
            ("Everywhere", binding_rows(app, app.BINDINGS))
        ]
        for pane in app.panes.all():
            bindings = list(pane.BINDINGS)
            if pane.TITLE == "Transcript":
                bindings += MessageView.BINDINGS
            self.sections.append((pane.TITLE, binding_rows(app, bindings)))
            if pane.TITLE == "Transcript":
                self.sections.append(("Chat", binding_rows(app, ChatDock.BINDINGS)))
        for title, rows in self.sections:
            rows += [(app.get_key_display(Binding(k, "")), d) for k, d in EXTRA.get(title, [])]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static("Keys", id="help-title")
            for title, rows in self.sections:
                if not rows:
                    continue
                yield Static(title, classes="help-section")
                width = max(len(keys) for keys, _ in rows) + 2
                yield Static(
                    Content("\n").join(
                        Content.assemble((keys.ljust(width), "bold $text-accent"), what)
                        for keys, what in rows
                    ),
                    classes="help-keys",
                )
            yield Static("Escape closes this screen.", id="help-footer")
