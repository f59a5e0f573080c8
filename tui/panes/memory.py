"""The memory pane: edit ``MEMORY.md`` and the daily notes, saved safely and searchable at once.

People keep hand-written facts here that matter more than any transcript, so the pane is
careful: saves are atomic with a ``.bak`` (via the core's :class:`Workspace`), a save re-indexes
the file before it reports success, unsaved work is never dropped without asking, and an edit
made on disk by someone else (or the memory flush) is offered, never silently merged or lost.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, ClassVar

from clawback.core.errors import NotFoundError
from clawback.core.memory.files import (
    MAX_BYTES,
    MAX_LINES,
    MEMORY_FILE,
    MemoryFile,
    broken_links,
)
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static, TextArea, Tree
from textual.widgets.text_area import LanguageDoesNotExist

from ..screens.dialogs import ChoiceScreen
from ..store import Store
from ..widgets.pane import Pane, stylesheet
from ..widgets.text_editor import TextEditor

UNSAVED_CHOICES = [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")]


def size_meter(text: str) -> tuple[Content, str]:
    """``MEMORY.md``'s lines and bytes against the limits Claude Code loads, and a CSS class."""
    data = text.encode("utf-8")
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    ratio = max(lines / MAX_LINES, len(data) / MAX_BYTES)
    level = "-over" if ratio > 1 else "-near" if ratio > 0.8 else ""
    meter = f"{lines}/{MAX_LINES} lines · {len(data) / 1024:.1f}/{MAX_BYTES // 1024} KB"
    return Content(meter), level


class MemoryPane(Pane):
    TITLE = "Memory"
    DEFAULT_CSS = stylesheet(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+t", "new_daily", "Today's note"),
        Binding("ctrl+r", "reload", "Reload"),
    ]

    current: var[str | None] = var(None, init=False)
    dirty: var[bool] = var(False, init=False)

    def __init__(self, store: Store, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        self._disk_text = ""  # the file as last read or written by this pane
        self._asking = False

    def compose(self) -> ComposeResult:
        with Horizontal():
            tree: Tree[str] = Tree("workspace", id="memory-tree")
            tree.show_root = False
            yield tree
            with Vertical(id="memory-editor-box"):
                with Horizontal(id="memory-bar"):
                    yield Static("No file open", id="memory-name")
                    yield Static("● unsaved", id="memory-dirty")
                    yield Static("", id="memory-links")
                    yield Static("", id="memory-meter")
                yield TextEditor(
                    id="memory-editor",
                    soft_wrap=True,
                    show_line_numbers=True,
                    read_only=True,
                    tab_behavior="indent",
                )

    def on_mount(self) -> None:
        self.border_title = self.TITLE
        editor = self.query_one(TextArea)
        with suppress(LanguageDoesNotExist):  # no tree-sitter-markdown: plain text edits fine
            editor.language = "markdown"
        self.refresh_files(open_first=True)

    def focus_default(self) -> None:
        target = self.query_one(TextArea) if self.current else self.query_one(Tree)
        target.focus()

    # -- the file list ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="memory-list", exit_on_error=False)
    def refresh_files(self, open_first: bool = False) -> None:
        files = self.store.workspace.list()
        self.app.call_from_thread(self._show_files, files, open_first)

    def _show_files(self, files: list[MemoryFile], open_first: bool) -> None:
        tree: Tree[str] = self.query_one(Tree)
        tree.clear()
        daily = None
        for file in files:
            # Tree labels are Rich text; "dim" keeps the size quiet without naming a colour.
            label = Text.assemble(Path(file.name).name, (f"  {file.size / 1024:.1f} KB", "dim"))
            if "/" not in file.name:
                tree.root.add_leaf(label, data=file.name)
                continue
            if daily is None:
                daily = tree.root.add("memory/", expand=True)
            daily.add_leaf(label, data=file.name)
        self._move_tree_cursor()
        if open_first and self.current is None and files:
            # Arriving in the pane (F5) lands in the editor once MEMORY.md is read.
            self.open_file(files[0].name, focus=self.has_focus_within)

    def _move_tree_cursor(self) -> None:
        tree: Tree[str] = self.query_one(Tree)
        for line in range(tree.last_line + 1):
            node = tree.get_node_at_line(line)
            if node is not None and node.data == self.current:
                tree.move_cursor(node)
                return

    @on(Tree.NodeSelected, "#memory-tree")
    def _node_selected(self, event: Tree.NodeSelected[str]) -> None:
        if event.node.data is not None:
            self.open_file(event.node.data, focus=True)

    # -- opening and saving -------------------------------------------------------------------

    def open_file(self, name: str, *, line: int | None = None, focus: bool = False) -> None:
        """Open ``name``, asking first if the file being edited has unsaved changes."""
        if name == self.current:
            self._place_cursor(line, focus)
            return
        self.when_saved(lambda: self._read(name, line, focus))

    @work(thread=True, exclusive=True, group="memory-read", exit_on_error=False)
    def _read(self, name: str, line: int | None, focus: bool) -> None:
        text = self.store.workspace.read(name)
        self.app.call_from_thread(self._loaded, name, text, line, focus)

    def _loaded(self, name: str, text: str, line: int | None = None, focus: bool = False) -> None:
        self._disk_text = text
        self.current = name
        editor = self.query_one(TextArea)
        editor.read_only = False
        editor.load_text(text)
        self.dirty = False
        self._show_broken_links()
        self._move_tree_cursor()
        self._place_cursor(line, focus)

    def _place_cursor(self, line: int | None, focus: bool) -> None:
        editor = self.query_one(TextArea)
        if line is not None:
            editor.move_cursor((max(0, line - 1), 0), center=True)
        if focus:
            editor.focus()

    @on(TextArea.Changed, "#memory-editor")
    def _edited(self) -> None:
        self.dirty = self.current is not None and self.query_one(TextArea).text != self._disk_text
        self._show_meter()
        self._show_broken_links()

    def _show_broken_links(self) -> None:
        """The links `clawback memory check` would flag, as the text stands (a few stats)."""
        label = self.query_one("#memory-links", Static)
        found = []
        if self.current is not None:
            folder = (self.store.workspace.root / self.current).parent
            found = broken_links(self.query_one(TextArea).text, folder)
        label.display = bool(found)
        if found:
            count = "a broken link" if len(found) == 1 else f"{len(found)} broken links"
            label.update(Content(f"⚠ {count}"))  # which, and where: in its tooltip
            label.tooltip = "\n".join(f"line {line}: {target}" for line, target in found)

    def watch_dirty(self, dirty: bool) -> None:
        self.set_class(dirty, "-dirty")

    def watch_current(self, name: str | None) -> None:
        self.query_one("#memory-name", Static).update(Content(name or "No file open"))
        self.border_title = Content(f"{self.TITLE} · {name}" if name else self.TITLE)
        self._show_meter()

    def _show_meter(self) -> None:
        meter = self.query_one("#memory-meter", Static)
        meter.display = self.current == MEMORY_FILE
        if self.current == MEMORY_FILE:
            content, level = size_meter(self.query_one(TextArea).text)
            meter.update(content)
            meter.set_class(level == "-near", "-near")
            meter.set_class(level == "-over", "-over")

    def action_save(self) -> None:
        if self.current is None:
            self.notify("No memory file is open.", severity="warning", markup=False)
            return
        self._save(self.current, self.query_one(TextArea).text)

    @work(thread=True, exclusive=True, group="memory-save", exit_on_error=False)
    def _save(self, name: str, text: str) -> None:
        self.store.save_memory(name, text)
        self.app.call_from_thread(self._saved, name, text)

    def _saved(self, name: str, text: str) -> None:
        if name == self.current:
            self._disk_text = text
            self._edited()
        self.notify(f"Saved {name} and re-indexed it.", title="Memory", markup=False)
        self.refresh_files()

    def when_saved(self, then: object) -> None:
        """Run ``then`` once unsaved changes are saved or discarded; Cancel drops it."""
        assert callable(then)
        if not self.dirty or self.current is None:
            then()
            return
        name, text = self.current, self.query_one(TextArea).text

        def answered(choice: str | None) -> None:
            if choice == "save":
                self._save_then(name, text, then)
            elif choice == "discard":
                self.dirty = False
                then()

        self.app.push_screen(ChoiceScreen(f"Save changes to {name}?", UNSAVED_CHOICES), answered)

    @work(thread=True, group="memory-save", exit_on_error=False)
    def _save_then(self, name: str, text: str, then: Callable[[], object]) -> None:
        self.store.save_memory(name, text)
        self.app.call_from_thread(self._saved, name, text)
        self.app.call_from_thread(then)

    # -- daily notes and outside changes ------------------------------------------------------

    def action_new_daily(self) -> None:
        self.when_saved(self._create_daily)

    @work(thread=True, group="memory-daily", exit_on_error=False)
    def _create_daily(self) -> None:
        path = self.store.workspace.new_daily()
        self.store.ingest_changed({path})
        name = self.store.workspace.name_of(path)
        text = self.store.workspace.read(name)
        self.app.call_from_thread(self._loaded, name, text, None, True)
        self.app.call_from_thread(self.refresh_files)

    def action_reload(self) -> None:
        if self.current is not None:
            name = self.current
            self.when_saved(lambda: self._read(name, None, True))

    def files_changed(self, paths: frozenset[Path]) -> None:
        """The watcher saw ``paths`` change: refresh the list, check the open file."""
        root = self.store.workspace.root
        if not self.is_mounted or not any(path.is_relative_to(root) for path in paths):
            return
        self.refresh_files()
        if self.current is not None and root / self.current in paths:
            self._check_disk(self.current)

    @work(thread=True, exclusive=True, group="memory-check", exit_on_error=False)
    def _check_disk(self, name: str) -> None:
        try:
            text: str | None = self.store.workspace.read(name)
        except NotFoundError:
            text = None
        self.app.call_from_thread(self._disk_changed, name, text)

    def _disk_changed(self, name: str, text: str | None) -> None:
        if name != self.current or text == self._disk_text or self._asking:
            return  # our own save, or a prompt for this file is already up
        if text is None:
            self.notify(
                f"{name} was deleted on disk; Ctrl+S writes it back.",
                severity="warning",
                markup=False,
            )
            self._disk_text = ""
            self._edited()
            return
        self._asking = True
        detail = "You have unsaved changes here." if self.dirty else "No unsaved changes here."

        def answered(choice: str | None) -> None:
            self._asking = False
            if choice == "reload":
                self._loaded(name, text)
            else:  # keep this version: it now differs from the disk
                self._disk_text = text
                self._edited()

        self.app.push_screen(
            ChoiceScreen(
                f"{name} changed on disk.",
                [("reload", "Reload from disk"), ("keep", "Keep mine")],
                detail=detail,
                cancel="keep",
                primary="keep" if self.dirty else "reload",
            ),
            answered,
        )
