"""The memory pane: edit ``MEMORY.md`` and the daily notes, saved safely and searchable at once,
and Claude Code's own auto memory (``<project>/memory/*.md``) beside them, just as safely.

People keep hand-written facts here that matter more than any transcript, so the pane is
careful: saves are atomic with a ``.bak`` (via the core's :class:`Workspace`), a save re-indexes
the file before it reports success, unsaved work is never dropped without asking, and an edit
made on disk by someone else (or the memory flush) is offered, never silently merged or lost.
A home without ``MEMORY.md`` is offered one, open and empty with a hint, and nothing is written
until the person saves: looking never leaves an empty file behind.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, ClassVar

from clawback.core.errors import NotFoundError
from clawback.core.memory import (
    MAX_BYTES,
    MAX_LINES,
    MEMORY_FILE,
    MemoryFile,
    ProjectMemory,
    broken_links,
    locate,
)
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static, TextArea
from textual.widgets.text_area import LanguageDoesNotExist

from ..screens.dialogs import ChoiceScreen
from ..store import Store
from ..widgets.pane import Pane, stylesheet
from ..widgets.text_editor import TextEditor
from .memory_tree import MemoryDoc, MemoryTree

UNSAVED_CHOICES = [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")]
# Shown in the empty editor of a MEMORY.md not written yet: what it is for, and how to begin.
NEW_MEMORY_HINT = (
    "MEMORY.md holds what Claude should always know: your preferences, the decisions made, "
    "facts about your projects and tools. Its head is loaded into every session's brief.\n\n"
    "Type here; Ctrl+S creates it. Ctrl+T starts today's note instead."
)


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

    current: var[MemoryDoc | None] = var(None, init=False)
    dirty: var[bool] = var(False, init=False)
    is_new: var[bool] = var(False, init=False)  # the open file is not on disk yet

    def __init__(self, store: Store, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        self._disk_text = ""  # the file as last read or written by this pane
        self._asking = False
        self._asked: MemoryDoc | None = None  # the file last asked for
        self._arrived = False  # focus came to the pane before its first file was read

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield MemoryTree(id="memory-tree")
            with Vertical(id="memory-editor-box"):
                with Horizontal(id="memory-bar"):
                    yield Static("No file open", id="memory-name")
                    yield Static("● unsaved", id="memory-dirty")
                    yield Static("new file", id="memory-new")
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
        # Before the first file is read the list takes the focus, and the editor takes it from
        # the list once the file is there (focus moves later than it is asked for, so whether
        # the pane had it is not a question that file's arrival can ask).
        self._arrived = self.current is None
        target = self.query_one(TextArea) if self.current else self.query_one(MemoryTree)
        target.focus()

    # -- the file list ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="memory-list", exit_on_error=False)
    def refresh_files(self, open_first: bool = False) -> None:
        files = self.store.workspace.list()
        offered = None if self.store.workspace.has(MEMORY_FILE) else MEMORY_FILE
        projects = self.store.auto_memory()
        self.app.call_from_thread(self._show_files, files, projects, offered, open_first)

    def _show_files(
        self,
        files: list[MemoryFile],
        projects: list[ProjectMemory],
        offered: str | None,
        open_first: bool,
    ) -> None:
        tree = self.query_one(MemoryTree)
        tree.show(self.store.workspace.root, files, projects, offered)
        tree.move_to(self.current)
        if self.current is not None:
            listed = tree.doc_at(self.current.folder, self.current.name)
            if listed is not None and listed.project != self.current.project:
                # the same file (equal), better named: show the project as the list does
                self.set_reactive(MemoryPane.current, listed)
                self.watch_current(listed)
        first = offered or (files[0].name if files else None)
        if open_first and self.current is None and self._asked is None and first:
            # Arriving in the pane (F5) lands in the editor once MEMORY.md is read.
            self.open_file(self.doc(first), focus=None)

    @on(MemoryTree.NodeSelected, "#memory-tree")
    def _node_selected(self, event: MemoryTree.NodeSelected[MemoryDoc]) -> None:
        if event.node.data is not None:
            self.open_file(event.node.data, focus=True)

    def doc(self, name: str) -> MemoryDoc:
        """clawback's own memory file ``name`` (relative to the workspace)."""
        return MemoryDoc(self.store.workspace.root, name)

    def doc_at(self, path: Path, name: str) -> MemoryDoc | None:
        """The file an indexed memory file's ``path`` is (``name``: its key), or ``None`` when
        it is neither the workspace's nor Claude Code's auto memory (nothing to open here)."""
        if self.store.workspace.holds(path):
            return self.doc(name)
        found = locate(self.store.auto_memory_roots(), path)
        if found is None:
            return None
        folder, file = found
        trees = self.query(MemoryTree)  # none before the pane's first showing
        listed = trees.first().doc_at(folder, file) if trees else None
        # Not listed yet: named by its folder until the list comes (see _show_files).
        return listed or MemoryDoc(folder, file, folder.parent.name)

    # -- opening and saving -------------------------------------------------------------------

    def open_file(
        self, doc: MemoryDoc, *, line: int | None = None, focus: bool | None = False
    ) -> None:
        """Open ``doc``, asking first if the file being edited has unsaved changes.

        ``focus`` ``None``: the editor takes the focus if the pane was shown meanwhile.
        """
        self._asked = doc  # a search hit may arrive before the list: MEMORY.md must not win
        if doc == self.current:
            self._place_cursor(line, focus)
            return
        self.when_saved(lambda: self._read(doc, line, focus))

    @work(thread=True, exclusive=True, group="memory-read", exit_on_error=False)
    def _read(self, doc: MemoryDoc, line: int | None, focus: bool | None) -> None:
        try:
            text, new = doc.workspace.read(doc.name), False
        except NotFoundError:
            if doc != self.doc(MEMORY_FILE):
                raise
            text, new = "", True  # offered: created by the first save, not before
        self.app.call_from_thread(self._loaded, doc, text, line, focus, new)

    def _loaded(
        self,
        doc: MemoryDoc,
        text: str,
        line: int | None = None,
        focus: bool | None = False,
        new: bool = False,
    ) -> None:
        self._disk_text = text
        # as the list names it, if it came meanwhile (a search hit's doc is named by its folder)
        self.current = self.query_one(MemoryTree).doc_at(doc.folder, doc.name) or doc
        self.is_new = new
        editor = self.query_one(TextArea)
        editor.read_only = False
        editor.load_text(text)
        self.dirty = False
        self._show_broken_links()
        self.query_one(MemoryTree).move_to(doc)
        self._place_cursor(line, focus)

    def _place_cursor(self, line: int | None, focus: bool | None) -> None:
        editor = self.query_one(TextArea)
        if line is not None:
            editor.move_cursor((max(0, line - 1), 0), center=True)
        if focus or (focus is None and (self._arrived or self.has_focus_within)):
            editor.focus()
        self._arrived = False

    @on(TextArea.Changed, "#memory-editor")
    def _edited(self) -> None:
        self.dirty = self._unsaved()
        self._show_meter()
        self._show_broken_links()

    def _unsaved(self) -> bool:
        """Asked of the text itself, not of ``dirty``: a key that comes in the same burst as
        the typing (Ctrl+Q or Ctrl+T right after a letter or a Backspace) is handled before
        the editor's ``Changed`` message, so ``dirty`` may still be the old answer."""
        return self.current is not None and self.query_one(TextArea).text != self._disk_text

    def _show_broken_links(self) -> None:
        """The links `clawback memory check` would flag, as the text stands (a few stats)."""
        label = self.query_one("#memory-links", Static)
        found = []
        if self.current is not None:
            found = broken_links(self.query_one(TextArea).text, self.current.path.parent)
        label.display = bool(found)
        if found:
            count = "a broken link" if len(found) == 1 else f"{len(found)} broken links"
            label.update(Content(f"⚠ {count}"))  # which, and where: in its tooltip
            label.tooltip = "\n".join(f"line {line}: {target}" for line, target in found)

    def watch_dirty(self, dirty: bool) -> None:
        self.set_class(dirty, "-dirty")

    def watch_is_new(self, new: bool) -> None:
        self.set_class(new, "-new")
        self.query_one(TextArea).placeholder = NEW_MEMORY_HINT if new else ""

    def watch_current(self, doc: MemoryDoc | None) -> None:
        title = doc.title if doc else None
        label = self.query_one("#memory-name", Static)
        label.update(Content(title or "No file open"))
        label.tooltip = str(doc.path) if doc else None
        self.set_class(doc is not None and doc.project is not None, "-claude-code")
        self.border_title = Content(f"{self.TITLE} · {title}" if title else self.TITLE)
        self._show_meter()

    def _show_meter(self) -> None:
        """Claude Code loads only the head of a ``MEMORY.md``: its own auto memory's too."""
        meter = self.query_one("#memory-meter", Static)
        shown = self.current is not None and self.current.name == MEMORY_FILE
        meter.display = shown
        if shown:
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
    def _save(self, doc: MemoryDoc, text: str) -> None:
        self.store.save_memory(doc.workspace, doc.name, text)
        self.app.call_from_thread(self._saved, doc, text)

    def _saved(self, doc: MemoryDoc, text: str) -> None:
        if doc == self.current:
            self._disk_text = text
            self.is_new = False
            self._edited()
        self.notify(f"Saved {doc.title} and re-indexed it.", title="Memory", markup=False)
        self.refresh_files()

    def when_saved(self, then: object) -> None:
        """Run ``then`` once unsaved changes are saved or discarded; Cancel drops it.

        Asked once the editor has taken the keys already sent to it: Ctrl+Q is the app's key,
        handled before a letter typed just ahead of it, which would otherwise be lost unasked.
        """
        assert callable(then)
        if self.current is None:  # no file open (the pane may not even be built yet)
            then()
            return
        self.query_one(TextArea).call_later(self._ask_if_unsaved, then)

    def _ask_if_unsaved(self, then: Callable[[], object]) -> None:
        if self.current is None or not self._unsaved():
            then()
            return
        doc, text = self.current, self.query_one(TextArea).text

        def answered(choice: str | None) -> None:
            if choice == "save":
                self._save_then(doc, text, then)
            elif choice == "discard":
                self.dirty = False
                then()

        question = f"Save changes to {doc.title}?"
        self.app.push_screen(ChoiceScreen(question, UNSAVED_CHOICES), answered)

    @work(thread=True, group="memory-save", exit_on_error=False)
    def _save_then(self, doc: MemoryDoc, text: str, then: Callable[[], object]) -> None:
        self.store.save_memory(doc.workspace, doc.name, text)
        self.app.call_from_thread(self._saved, doc, text)
        self.app.call_from_thread(then)

    # -- daily notes and outside changes ------------------------------------------------------

    def action_new_daily(self) -> None:
        self.when_saved(self._create_daily)

    @work(thread=True, group="memory-daily", exit_on_error=False)
    def _create_daily(self) -> None:
        path = self.store.workspace.new_daily()
        self.store.ingest_changed({path})
        doc = self.doc(self.store.workspace.name_of(path))
        text = doc.workspace.read(doc.name)
        self.app.call_from_thread(self._loaded, doc, text, None, True)
        self.app.call_from_thread(self.refresh_files)

    def action_reload(self) -> None:
        if self.current is not None:
            doc = self.current
            self.when_saved(lambda: self._read(doc, None, True))

    def files_changed(self, paths: frozenset[Path]) -> None:
        """The watcher saw ``paths`` change: refresh the list, check the open file."""
        root, auto = self.store.workspace.root, self.store.auto_memory_roots()
        if not self.is_mounted or not any(
            path.is_relative_to(root) or locate(auto, path) for path in paths
        ):
            return
        self.refresh_files()
        if self.current is not None and self.current.path in paths:
            self._check_disk(self.current)

    @work(thread=True, exclusive=True, group="memory-check", exit_on_error=False)
    def _check_disk(self, doc: MemoryDoc) -> None:
        try:
            text: str | None = doc.workspace.read(doc.name)
        except NotFoundError:
            text = None
        self.app.call_from_thread(self._disk_changed, doc, text)

    def _disk_changed(self, doc: MemoryDoc, text: str | None) -> None:
        if doc == self.current:  # a file made or removed elsewhere is no longer (or now) new
            self.is_new = text is None and doc == self.doc(MEMORY_FILE)
        if doc != self.current or text == self._disk_text or self._asking:
            return  # our own save, or a prompt for this file is already up
        if text is None:
            self.notify(
                f"{doc.title} was deleted on disk; Ctrl+S writes it back.",
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
                self._loaded(doc, text)
            else:  # keep this version: it now differs from the disk
                self._disk_text = text
                self._edited()

        self.app.push_screen(
            ChoiceScreen(
                f"{doc.title} changed on disk.",
                [("reload", "Reload from disk"), ("keep", "Keep mine")],
                detail=detail,
                cancel="keep",
                primary="keep" if self.dirty else "reload",
            ),
            answered,
        )
