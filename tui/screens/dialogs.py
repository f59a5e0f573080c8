"""Small modal dialogs: a question with a few answers, and a question with a typed answer.

Every prompt in the app (unsaved work, a file changed on disk, first-run ingest, an export
path) goes through these two, so they all look and behave alike: Escape always means the
safe answer, and the result comes back through ``push_screen``'s callback.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static


class ChoiceScreen(ModalScreen[str]):
    """Ask ``question``; returns the key of the chosen answer (``cancel`` on Escape).

    A long ``detail`` (a flush's notes and diff) scrolls inside the dialog, so the question and
    the answers always stay on screen.
    """

    CSS_PATH = "dialogs.tcss"
    DEFAULT_CSS = """
    ChoiceScreen .detail-scroll {
        height: auto;
        max-height: 60vh;
        margin: 0 0 1 0;
        scrollbar-size-vertical: 1;
        & > .detail { margin: 0; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        question: str,
        choices: list[tuple[str, str]],
        *,
        detail: str = "",
        cancel: str = "cancel",
        primary: str | None = None,
    ) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.choices = choices
        self.cancel = cancel
        self.primary = primary or choices[0][0]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="question")
            if self.detail:
                with VerticalScroll(classes="detail-scroll"):
                    yield Static(self.detail, classes="detail", markup=False)
            with Horizontal(classes="buttons"):
                for key, label in self.choices:
                    yield Button(
                        label,
                        id=f"choice-{key}",
                        compact=True,
                        variant="primary" if key == self.primary else "default",
                    )

    def on_mount(self) -> None:
        self.query_one(f"#choice-{self.primary}", Button).focus()

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        assert event.button.id is not None
        self.dismiss(event.button.id.removeprefix("choice-"))

    def action_cancel(self) -> None:
        self.dismiss(self.cancel)


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line of text; returns it, or ``None`` on Escape."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, value: str = "") -> None:
        super().__init__()
        self.question = question
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="question")
            yield Input(self.value, id="prompt-input")
            yield Static("Enter to confirm · Escape to cancel", classes="detail")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
