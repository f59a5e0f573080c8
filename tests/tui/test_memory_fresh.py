"""A fresh home's memory pane offers ``MEMORY.md``: a hint says what it is for, the editor
takes typing at once, Ctrl+S creates the file, and a person who only looks writes nothing."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from clawback.core.home import Home
from clawback.core.search.engine import SearchFilters, search
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.panes.memory import MemoryPane
from clawback.tui.panes.memory_tree import MemoryTree
from clawback.tui.screens.dialogs import ChoiceScreen
from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from .conftest import SIZE
from .pilot import settle


async def open_memory(app: ClawbackApp, pilot: Pilot[Any]) -> tuple[MemoryPane, TextArea]:
    await settle(pilot)
    await pilot.press("f5")
    await settle(pilot)
    pane = app.query_one(MemoryPane)
    return pane, pane.query_one(TextArea)


def memory_file(home: Home) -> Path:
    return home.workspace / "MEMORY.md"


async def test_a_fresh_home_offers_memory_md_and_ctrl_s_creates_it(home: Home) -> None:
    app = make_app(home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane, editor = await open_memory(app, pilot)
        assert pane.current == pane.doc("MEMORY.md") and pane.is_new
        tree = pane.query_one(MemoryTree)
        listed = tree.get_node_at_line(0)
        assert listed is not None and listed.data == pane.doc("MEMORY.md")
        assert "new" in str(listed.label)
        hint = str(editor.placeholder)
        assert "every session" in hint and "Ctrl+S creates it" in hint and "Ctrl+T" in hint
        assert "new" in str(pane.query_one("#memory-new", Static).render())
        assert pane.query_one("#memory-new").display
        assert app.focused is editor and not editor.read_only

        await pilot.press(*"- I prefer tabs.")
        assert pane.dirty and not memory_file(home).exists()  # nothing written before Ctrl+S
        assert not pane.query_one("#memory-new").display  # "● unsaved" says it, on 80 columns
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not pane.dirty and not pane.is_new
        assert not pane.query_one("#memory-new").display
        assert memory_file(home).read_text() == "- I prefer tabs."
        assert stat.S_IMODE(memory_file(home).stat().st_mode) == 0o600
        assert not (home.workspace / "MEMORY.md.bak").exists()  # nothing was there before
        listed = tree.get_node_at_line(0)
        assert listed is not None and "new" not in str(listed.label)
    hits = search(home.db, "tabs", SearchFilters(source="memory")).hits
    assert [hit.file for hit in hits] == ["MEMORY.md"]  # re-indexed as it was saved


async def test_looking_without_typing_writes_nothing(home: Home) -> None:
    app = make_app(home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane, editor = await open_memory(app, pilot)
        assert pane.is_new and not pane.dirty
        await pilot.press("f2")  # away, and back again
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        assert app.focused is editor
        await pilot.press("ctrl+q")  # nothing typed: no question
        await settle(pilot)
    assert app.return_code == 0
    assert not memory_file(home).exists()
    assert [p.name for p in home.workspace.rglob("*") if p.is_file()] == []


async def test_quitting_with_typed_text_in_the_new_file_asks(home: Home) -> None:
    app = make_app(home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane, _ = await open_memory(app, pilot)
        await pilot.press(*"decided: ship on Fridays", "ctrl+q")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceScreen)
        assert app.screen.question == "Save changes to MEMORY.md?"
        await pilot.click("#choice-cancel")
        await settle(pilot)
        assert app.is_running and pane.dirty and not memory_file(home).exists()
        await pilot.press("ctrl+q")
        await settle(pilot)
        await pilot.click("#choice-save")
        await settle(pilot)
    assert app.return_code == 0
    assert memory_file(home).read_text() == "decided: ship on Fridays"


async def test_ctrl_t_still_makes_todays_note_and_memory_md_stays_offered(home: Home) -> None:
    app = make_app(home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane, editor = await open_memory(app, pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert pane.current is not None and pane.current.name.startswith("memory/")
        assert not pane.is_new and editor.placeholder == ""
        assert not memory_file(home).exists()
        tree = pane.query_one(MemoryTree)
        first = tree.get_node_at_line(0)
        assert first is not None and first.data == pane.doc("MEMORY.md")  # still offered
        tree.focus()
        tree.move_cursor_to_line(0)
        await pilot.press("enter")
        await settle(pilot)
        assert pane.current == pane.doc("MEMORY.md") and pane.is_new and editor.text == ""
    assert not memory_file(home).exists()
