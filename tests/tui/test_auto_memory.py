"""Claude Code's own auto memory in the memory pane: listed per project under its own branch,
opened, edited and saved like clawback's files, and where a search hit on it leads."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from clawback.core.home import Home
from clawback.core.search.engine import SearchFilters, search
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.panes.memory import MemoryPane
from clawback.tui.panes.memory_tree import CLAUDE_CODE_BRANCH, MemoryTree
from clawback.tui.panes.search import SearchPane, hit_row
from clawback.tui.screens.dialogs import ChoiceScreen
from clawback.tui.watcher import ArchiveChanged, ChangeBatch
from textual.pilot import Pilot
from textual.widgets import Static, TextArea
from textual.widgets.tree import TreeNode

from .conftest import SIZE
from .pilot import settle, wait_until

PROJECT = "-home-demo-projects-clawback"  # the demo's sessions ran in /home/demo/projects/clawback
MEMORY = "# Project memory\n\n- Uploads go to the quokka bucket.\n- See deploys.md.\n"


def plant(home: Home, project: str = PROJECT) -> Path:
    """Claude Code's auto memory for ``project``, as Claude Code writes it; indexed. (The demo
    has some for its clawback project: ``MEMORY.md`` is replaced, ``releasing.md`` stays.)"""
    folder = Path(home.config.sources.claude_code_path) / project / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text(MEMORY)
    (folder / "deploys.md").write_text(
        "# Deploys\n\nWeekly.\n\n## Jobs\n\nThe wombat job runs on Sundays.\n"
    )
    home.ingest_all()
    return folder


def outline(tree: MemoryTree) -> list[str]:
    """The tree as shown: one indented label per visible line, sizes left out."""
    lines = []
    for line in range(tree.last_line + 1):
        node: TreeNode[Any] | None = tree.get_node_at_line(line)
        assert node is not None
        depth, parent = 0, node.parent
        while parent is not None and parent is not tree.root:
            depth, parent = depth + 1, parent.parent
        lines.append("  " * depth + str(node.label).split("  ")[0])
    return lines


async def open_memory(app: ClawbackApp, pilot: Pilot[Any]) -> MemoryPane:
    await settle(pilot)
    await pilot.press("f5")
    await settle(pilot)
    return app.query_one(MemoryPane)


async def open_node(pilot: Pilot[Any], tree: MemoryTree, label: str, under: str) -> None:
    """Move to ``label`` below the line ``under`` with the keys, as a person would."""
    tree.focus()
    shown = outline(tree)
    start = shown.index(next(line for line in shown if line.strip() == under))
    target = next(i for i in range(start + 1, len(shown)) if shown[i].strip() == label)
    tree.move_cursor_to_line(0)
    await pilot.press(*["down"] * target, "enter")
    await settle(pilot)


async def test_the_pane_lists_auto_memory_per_project_by_the_name_a_person_knows(
    demo_home: Home,
) -> None:
    plant(demo_home)
    plant(demo_home, "-srv-no-sessions")  # nothing indexed ran there: its folder name is shown
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_memory(app, pilot)
        shown = outline(pane.query_one(MemoryTree))
    assert shown[: shown.index(CLAUDE_CODE_BRANCH)] == ["MEMORY.md", "memory/", "  2026-11-18.md"]
    assert shown[shown.index(CLAUDE_CODE_BRANCH) :] == [
        CLAUDE_CODE_BRANCH,
        "  -srv-no-sessions",  # the most recently changed first
        "    MEMORY.md",
        "    deploys.md",
        "  clawback",
        "    MEMORY.md",
        "    deploys.md",
        "    releasing.md",
    ]


async def test_open_edit_and_save_an_auto_memory_file(demo_home: Home) -> None:
    folder = plant(demo_home)
    own = (demo_home.workspace / "MEMORY.md").read_text()
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_memory(app, pilot)
        await open_node(pilot, pane.query_one(MemoryTree), "MEMORY.md", "clawback")
        editor = pane.query_one(TextArea)
        assert pane.current is not None and pane.current.path == folder / "MEMORY.md"
        assert editor.text == MEMORY and app.focused is editor
        name = str(pane.query_one("#memory-name", Static).render())
        assert name == "Claude Code · clawback · MEMORY.md"
        assert pane.query_one("#memory-meter").display  # Claude Code loads only its head

        editor.move_cursor(editor.document.end)
        await pilot.press(*"- Pangolin keys rotate monthly.")
        assert pane.dirty
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not pane.dirty
    assert (folder / "MEMORY.md").read_text() == MEMORY + "- Pangolin keys rotate monthly."
    assert (folder / "MEMORY.md.bak").read_text() == MEMORY
    assert (demo_home.workspace / "MEMORY.md").read_text() == own  # clawback's own untouched
    hits = search(demo_home.db, "pangolin", SearchFilters(source="memory")).hits
    assert [hit.file for hit in hits] == [f"{PROJECT}/memory/MEMORY.md"]  # re-indexed at once


async def test_an_outside_change_while_editing_is_offered_not_lost(demo_home: Home) -> None:
    folder = plant(demo_home)
    path = folder / "deploys.md"
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_memory(app, pilot)
        await open_node(pilot, pane.query_one(MemoryTree), "deploys.md", "clawback")
        editor = pane.query_one(TextArea)
        editor.move_cursor((0, 0))
        await pilot.press(*"mine ")
        path.write_text("Claude wrote this meanwhile.\n")  # Claude Code saving its memory
        app.post_message(ArchiveChanged(ChangeBatch(frozenset({path}))))  # as the watcher does
        await settle(pilot)
        assert isinstance(app.screen, ChoiceScreen)
        assert app.screen.question == "Claude Code · clawback · deploys.md changed on disk."
        await pilot.press("escape")  # keeps the buffer
        await settle(pilot)
        assert editor.text.startswith("mine ") and pane.dirty
        await pilot.press("ctrl+r")  # reload: unsaved work is asked about first
        await settle(pilot)
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.click("#choice-discard")
        await settle(pilot)
        assert editor.text == "Claude wrote this meanwhile.\n" and not pane.dirty


async def test_the_list_follows_files_that_appear_and_go(demo_home: Home) -> None:
    folder = plant(demo_home)
    app = make_app(demo_home)  # with the watcher
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_memory(app, pilot)
        tree = pane.query_one(MemoryTree)
        await wait_until(pilot, app.watching.is_set)
        (folder / "testing.md").write_text("# Testing\n\nRun the suite with -n 2.\n")
        await wait_until(pilot, lambda: "    testing.md" in outline(tree))
        (folder / "deploys.md").unlink()
        await wait_until(pilot, lambda: "    deploys.md" not in outline(tree))
        assert outline(tree)[-3:] == ["    MEMORY.md", "    releasing.md", "    testing.md"]


async def test_a_search_hit_on_auto_memory_opens_it_in_the_pane(demo_home: Home) -> None:
    folder = plant(demo_home)
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"wombat")
        await settle(pilot)
        [hit] = app.query_one(SearchPane)._hits  # named as the memory pane names the file
        assert str(hit_row(hit)).startswith(
            "strong  memory · System  Claude Code · clawback · deploys.md"
        )
        await pilot.press("enter")
        await settle(pilot)
        pane = app.query_one(MemoryPane)
        editor = pane.query_one(TextArea)
        assert pane.current is not None and pane.current.path == folder / "deploys.md"
        assert pane.current.title == "Claude Code · clawback · deploys.md"
        assert app.focused is editor and editor.cursor_location[0] == 4  # at the hit's section
        assert "wombat" in editor.text


async def test_a_project_folded_stays_folded_when_the_list_refreshes(demo_home: Home) -> None:
    plant(demo_home)
    other = plant(demo_home, "-srv-no-sessions")
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_memory(app, pilot)
        tree = pane.query_one(MemoryTree)
        tree.focus()
        tree.move_cursor_to_line(outline(tree).index("  clawback"))
        await pilot.press("enter")  # folds it
        await settle(pilot)
        (other / "new.md").write_text("# New\n")
        app.post_message(ArchiveChanged(ChangeBatch(frozenset({other / "new.md"}))))
        await settle(pilot)
        shown = outline(tree)
    assert "    new.md" in shown
    assert shown[-1] == "  clawback"  # folded: its files stay out of sight


async def test_a_memory_hit_from_neither_folder_is_named_not_opened(
    demo_home: Home, tmp_path: Path
) -> None:
    """A memory file indexed from a folder that is no longer the workspace (its setting
    changed) cannot be edited here: one notification names it, the pane stays as it was."""
    plant(demo_home)
    [hit] = search(demo_home.db, "wombat", SearchFilters(source="memory")).hits
    moved = replace(hit, path=str(tmp_path / "old-workspace" / "memory" / "x.md"))
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_memory(app, pilot)
        before = pane.current
        app.post_message(SearchPane.HitChosen(moved))
        await settle(pilot)
        assert pane.current == before
        assert any("not a memory file this app edits" in str(n.message) for n in app._notifications)
