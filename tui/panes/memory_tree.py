"""The memory pane's file list: clawback's own memory files, then Claude Code's auto memory.

Both kinds open in the same editor, so each node carries a :class:`MemoryDoc` naming the file
by the folder it lives in. Claude Code's files sit under their own branch, one project per
node, labelled by the project's folder name as a person knows it, so nobody mistakes them for
clawback's. A ``MEMORY.md`` not written yet is listed first all the same, marked new, so a
fresh home shows where to begin. The list is rebuilt whenever files appear or go; a project the
user folded stays folded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawback.core.memory import MemoryFile, ProjectMemory, Workspace, auto_memory_title
from rich.text import Text
from textual import on
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

CLAUDE_CODE_BRANCH = "Claude Code's memory"


@dataclass(frozen=True)
class MemoryDoc:
    """A memory file the pane opens: ``name`` inside ``folder`` (clawback's workspace, or one
    Claude Code project's memory folder, then ``project`` is how that project is called)."""

    folder: Path
    name: str
    project: str | None = field(default=None, compare=False)  # a label, not the identity

    @property
    def path(self) -> Path:
        return self.folder / self.name

    @property
    def workspace(self) -> Workspace:
        """What reads and saves it: the same careful rules for both kinds of file."""
        return Workspace(self.folder)

    @property
    def title(self) -> str:
        if self.project is None:
            return self.name
        return auto_memory_title(self.project, self.name)


def _label(file: MemoryFile) -> Text:
    # Tree labels are Rich text; "dim" keeps the size quiet without naming a colour.
    return Text.assemble(Path(file.name).name, (f"  {file.size / 1024:.1f} KB", "dim"))


def _new_label(name: str) -> Text:
    return Text.assemble(name, ("  new", "dim italic"))


class MemoryTree(Tree[MemoryDoc]):
    """Every memory file the pane can open; branches (``memory/``, projects) carry no doc."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("memory", **kwargs)
        self.show_root = False
        self._folded: set[Path] = set()  # projects the user folded, kept across refreshes
        self._projects: dict[TreeNode[MemoryDoc], Path] = {}

    def show(
        self,
        workspace: Path,
        files: list[MemoryFile],
        projects: list[ProjectMemory],
        offered: str | None = None,
    ) -> None:
        """Rebuild the list: ``offered`` (a file not written yet), ``files`` of the workspace,
        then each project's auto memory."""
        self.clear()
        self._projects = {}
        if offered is not None:
            self.root.add_leaf(_new_label(offered), data=MemoryDoc(workspace, offered))
        daily = None
        for file in files:
            doc = MemoryDoc(workspace, file.name)
            if "/" not in file.name:
                self.root.add_leaf(_label(file), data=doc)
                continue
            if daily is None:
                daily = self.root.add("memory/", expand=True)
            daily.add_leaf(_label(file), data=doc)
        if not projects:
            return
        branch = self.root.add(CLAUDE_CODE_BRANCH, expand=True)
        # Two projects both called "api" are told apart by where they are.
        seen = Counter(project.label for project in projects)
        for project in projects:
            label = project.label if seen[project.label] == 1 else project.place
            node = branch.add(label, expand=project.folder not in self._folded)
            self._projects[node] = project.folder
            for file in project.files:
                node.add_leaf(_label(file), data=MemoryDoc(project.folder, file.name, label))

    def doc_at(self, folder: Path, name: str) -> MemoryDoc | None:
        """The listed doc for ``name`` in ``folder`` (with its project's label), if listed."""
        wanted = MemoryDoc(folder, name)
        for node in self._nodes_with_docs():
            if node.data == wanted:
                return node.data
        return None

    def move_to(self, doc: MemoryDoc | None) -> None:
        """Put the cursor on ``doc``'s line (unfolding its project if need be)."""
        for node in self._nodes_with_docs():
            if node.data == doc and node.parent is not None and not node.parent.is_expanded:
                node.parent.expand()
                self._folded.discard(self._projects.get(node.parent, Path()))
        for line in range(self.last_line + 1):  # the lines as shown now (built on demand)
            shown = self.get_node_at_line(line)
            if shown is not None and shown.data is not None and shown.data == doc:
                self.move_cursor(shown)
                return

    def _nodes_with_docs(self) -> list[TreeNode[MemoryDoc]]:
        found = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.data is not None:
                found.append(node)
            stack.extend(reversed(node.children))
        return found

    @on(Tree.NodeCollapsed)
    def _folded_by_user(self, event: Tree.NodeCollapsed[MemoryDoc]) -> None:
        if event.node in self._projects:
            self._folded.add(self._projects[event.node])

    @on(Tree.NodeExpanded)
    def _unfolded_by_user(self, event: Tree.NodeExpanded[MemoryDoc]) -> None:
        if event.node in self._projects:
            self._folded.discard(self._projects[event.node])
