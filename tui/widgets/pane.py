"""The base of every pane: its stylesheet beside it, and worker failures passed up to the app.

Textual delivers ``Worker.StateChanged`` only to the widget that started the worker, so without
this each pane would need its own error handling. Instead every pane forwards failures as a
bubbling :class:`Pane.WorkerFailed`, and the app turns them into notifications in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual.containers import Vertical
from textual.message import Message
from textual.worker import Worker, WorkerState


def stylesheet(module_file: str) -> str:
    """The ``.tcss`` file beside a module, read once at import (widgets have no CSS_PATH)."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")


class Pane(Vertical):
    """A top-level area of the app, reachable by a key shown in the footer."""

    TITLE: ClassVar[str] = ""

    @dataclass
    class WorkerFailed(Message):
        worker: Worker[object]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            event.stop()
            self.post_message(Pane.WorkerFailed(event.worker))

    def focus_default(self) -> None:
        """Focus the widget a person most likely wants on arriving in this pane."""
        self.focus()
