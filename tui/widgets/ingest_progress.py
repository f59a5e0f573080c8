"""A one-line progress bar for an ingest running in the background.

The ingest runs in a thread and reports bytes read many times a second; this widget is fed on
the event loop (via ``call_from_thread``) and stays hidden unless an ingest is running, so the
rest of the UI keeps working meanwhile.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar


class IngestProgress(Horizontal):
    DEFAULT_CSS = """
    IngestProgress {
        height: 1;
        display: none;
        &.-running { display: block; }
        Label { width: auto; padding: 0 1 0 0; color: $text-muted; }
        ProgressBar { width: 1fr; }
        Bar { width: 1fr; }
    }
    """

    def compose(self) -> ComposeResult:
        yield Label("Indexing")
        yield ProgressBar(show_eta=False, show_percentage=True)

    def start(self, files: int, total_bytes: int) -> None:
        self.query_one(Label).update(f"Indexing {files:,} files")
        self.query_one(ProgressBar).update(total=max(total_bytes, 1), progress=0)
        self.add_class("-running")

    def advance(self, done_bytes: int) -> None:
        self.query_one(ProgressBar).advance(done_bytes)

    def finish(self) -> None:
        self.remove_class("-running")
