"""The memory pane: save is atomic and re-indexed, unsaved work is never dropped silently."""

from __future__ import annotations

from datetime import date
from typing import Any

from clawback.core.search.engine import SearchFilters, search
from clawback.tui.app import ClawbackApp
from clawback.tui.panes.memory import MemoryPane, size_meter
from clawback.tui.screens.dialogs import ChoiceScreen
from clawback.tui.watcher import ArchiveChanged, ChangeBatch
from textual import events
from textual.pilot import Pilot
from textual.widgets import TextArea

from .conftest import SIZE
from .pilot import settle


async def open_memory(tui: ClawbackApp, pilot: Pilot[Any]) -> tuple[MemoryPane, TextArea]:
    await settle(pilot)
    await pilot.press("f5")
    await settle(pilot)
    pane = tui.query_one(MemoryPane)
    assert pane.current == pane.doc("MEMORY.md")
    return pane, pane.query_one(TextArea)


async def test_edit_ctrl_s_saves_and_reindexes_then_daily_note(tui: ClawbackApp) -> None:
    workspace = tui.store.workspace.root
    before = (workspace / "MEMORY.md").read_text()
    async with tui.run_test(size=SIZE) as pilot:
        pane, editor = await open_memory(tui, pilot)
        assert tui.focused is editor
        editor.move_cursor(editor.document.end)
        editor.insert("\nZebracorn lives ")
        await pilot.press(*"ok.")  # typed, as a person would
        assert pane.dirty and pane.has_class("-dirty")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not pane.dirty
        assert (workspace / "MEMORY.md").read_text().endswith("Zebracorn lives ok.")
        assert (workspace / "MEMORY.md.bak").read_text() == before
        hits = search(tui.store.home.db, "zebracorn", SearchFilters(source="memory")).hits
        assert [hit.file for hit in hits] == ["MEMORY.md"]

        await pilot.press("ctrl+t")  # today's note, in one key
        await settle(pilot)
        today = date.today().isoformat()
        assert pane.current == pane.doc(f"memory/{today}.md")
        assert (workspace / f"memory/{today}.md").exists()
        assert editor.text.startswith(f"# {today}")


async def test_external_change_offers_reload_or_keep(tui: ClawbackApp) -> None:
    path = tui.store.workspace.root / "MEMORY.md"
    async with tui.run_test(size=SIZE) as pilot:
        pane, editor = await open_memory(tui, pilot)
        path.write_text("# Memory\n\nWritten by someone else.\n")
        tui.post_message(ArchiveChanged(ChangeBatch(frozenset({path}))))  # as the watcher does
        await settle(pilot)
        assert isinstance(tui.screen, ChoiceScreen)
        assert "changed on disk" in tui.screen.question
        await pilot.click("#choice-reload")
        await settle(pilot)
        assert editor.text == "# Memory\n\nWritten by someone else.\n"
        assert not pane.dirty

        editor.focus()
        editor.move_cursor((0, 0))
        await pilot.press(*"mine ")
        path.write_text("theirs\n")
        tui.post_message(ArchiveChanged(ChangeBatch(frozenset({path}))))
        await settle(pilot)
        assert isinstance(tui.screen, ChoiceScreen)
        await pilot.press("escape")  # Escape keeps the buffer
        await settle(pilot)
        assert editor.text.startswith("mine ") and pane.dirty


async def test_unsaved_work_prompts_before_quitting(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        _, _ = await open_memory(tui, pilot)
        await pilot.press("x", "ctrl+q")
        await settle(pilot)
        assert isinstance(tui.screen, ChoiceScreen)
        await pilot.click("#choice-cancel")
        await settle(pilot)
        assert tui.is_running
        await pilot.press("ctrl+q")
        await settle(pilot)
        await pilot.click("#choice-discard")
        await settle(pilot)
    assert tui.return_code == 0
    assert not (tui.store.workspace.root / "MEMORY.md").read_text().startswith("x")


def test_size_meter_flags_memory_over_the_limits() -> None:
    assert size_meter("a\n" * 10)[1] == ""
    assert size_meter("a\n" * 170)[1] == "-near"
    assert size_meter("a\n" * 201)[1] == "-over"
    assert size_meter("x" * 26 * 1024)[1] == "-over"


async def burst(tui: ClawbackApp, *keys: str) -> None:
    """Keys as a terminal sends them when typed fast: all arrive before any is handled."""
    for key in keys:
        tui.post_message(events.Key(key, key if len(key) == 1 else None))


async def test_a_key_in_the_same_burst_as_the_typing_still_asks(tui: ClawbackApp) -> None:
    path = tui.store.workspace.root / "MEMORY.md"
    before = path.read_text()
    async with tui.run_test(size=SIZE) as pilot:
        pane, editor = await open_memory(tui, pilot)
        await burst(tui, "x", "ctrl+q")  # Ctrl+Q is the app's: it came before the letter
        await settle(pilot)
        assert isinstance(tui.screen, ChoiceScreen)
        await pilot.click("#choice-cancel")
        await settle(pilot)
        assert tui.is_running and editor.text.startswith("x")

        await burst(tui, "backspace", "ctrl+t")  # back to the text on disk: nothing to ask
        await settle(pilot)
        assert not isinstance(tui.screen, ChoiceScreen)
        assert pane.current == pane.doc(f"memory/{date.today().isoformat()}.md")
    assert path.read_text() == before
