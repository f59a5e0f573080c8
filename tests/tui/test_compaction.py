"""The compaction pane's review steps against the fake ``claude``: a memory flush is written as
proposed, as edited, or not at all, and a knowledge fact is corrected by hand through the fact
store (a superseded one refused), the correction outliving a reindex and extraction again."""

from __future__ import annotations

from typing import Any, TypeVar

from clawback.core.chat.sessions import ChatSession
from clawback.core.demo.chat import SESSION_ID
from clawback.core.home import Home
from clawback.core.memory.compaction import list_compactions
from clawback.core.memory.facts import FactStore, NewFact
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.panes.compaction import CompactionPane
from clawback.tui.screens.dialogs import ChoiceScreen
from clawback.tui.screens.editor import EditorScreen
from clawback.tui.widgets.lifecycle_views import FactList, LedgerRow
from textual.pilot import Pilot
from textual.widgets import Button, TextArea

from tests.memory.test_flush import seed

from ..fake_claude.fixtures import FakeClaude, fake_claude_fixture  # noqa: F401  (fixture)
from .conftest import SIZE
from .pilot import settle, until

T = TypeVar("T")

PROPOSED = "- Alice keeps bees in the xylophonic greenhouse."
EDITED = "- Alice keeps quince trees by the pond."


def memory_files(home: Home) -> dict[str, str]:
    """Every file under the workspace's memory folder (backups too), by name."""
    folder = home.paths.workspace / "memory"
    return {p.name: p.read_text() for p in sorted(folder.glob("*"))} if folder.is_dir() else {}


def notices(tui: ClawbackApp) -> str:
    return " | ".join(n.message for n in tui._notifications)


async def screen_of(pilot: Pilot[Any], kind: type[T]) -> T:
    """Wait until a ``kind`` dialog is on top and composed, and return it."""
    await until(pilot, lambda: isinstance(pilot.app.screen, kind) and pilot.app.screen.is_mounted)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, kind)
    return screen


async def flush_dialog(
    demo_home: Home, fake_claude: FakeClaude, pilot: Pilot[Any], *, key: bool = True
) -> ChatSession:
    """Open a seeded session's pane, ask for a flush (its key or its button) and wait for the
    three choices."""
    tui = pilot.app
    assert isinstance(tui, ClawbackApp)
    session = seed(demo_home.chat_engine(), 4)
    fake_claude.reply(PROPOSED)
    await settle(pilot)
    await tui.action_show_compaction(session.id)
    await settle(pilot)
    await (pilot.press("f") if key else pilot.click("#flush-now"))
    dialog = await screen_of(pilot, ChoiceScreen)
    labels = [str(b.label) for b in dialog.query(Button)]
    assert labels == ["Write them", "Edit…", "Discard"]
    assert "xylophonic" in dialog.detail and "+- Alice keeps bees" in dialog.detail  # the diff
    return session


async def open_editor(pilot: Pilot[Any]) -> EditorScreen:
    await pilot.click("#choice-edit")
    return await screen_of(pilot, EditorScreen)


async def replace_text(pilot: Pilot[Any], editor: EditorScreen, text: str) -> None:
    """Clear the editor and type ``text`` key by key, as a person would."""
    area = editor.query_one(TextArea)
    assert pilot.app.focused is area
    area.clear()
    await pilot.press(*text)
    assert area.text == text


# -- memory flush -------------------------------------------------------------------------------


async def test_flush_edit_save_writes_the_edited_notes(
    demo_home: Home, fake_claude: FakeClaude
) -> None:
    before = memory_files(demo_home)
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        session = await flush_dialog(demo_home, fake_claude, pilot)
        editor = await open_editor(pilot)
        assert editor.query_one(TextArea).text == PROPOSED  # starts from the proposal
        await replace_text(pilot, editor, EDITED)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(tui.screen, EditorScreen | ChoiceScreen)
        written = {k: v for k, v in memory_files(demo_home).items() if k not in before}
        (name,) = [k for k in written if k.endswith(".md")]
        text = written[name]
        assert text.endswith(EDITED + "\n") and "xylophonic" not in text
        assert f"(session {session.id[:8]})" in text  # under the flush heading
        assert "your edited notes" in notices(tui)
    assert demo_home.chat_engine().store.require(session.id).memory_flush_at is not None


async def test_flush_edit_cancel_goes_back_and_writes_nothing(
    demo_home: Home, fake_claude: FakeClaude
) -> None:
    before = memory_files(demo_home)
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        session = await flush_dialog(demo_home, fake_claude, pilot)
        editor = await open_editor(pilot)
        await replace_text(pilot, editor, EDITED)
        await pilot.press("escape")  # back to the three choices, nothing written
        await screen_of(pilot, ChoiceScreen)
        assert memory_files(demo_home) == before
        await pilot.press("escape")  # the dialog's safe answer: discard
        await settle(pilot)
        assert not isinstance(tui.screen, ChoiceScreen)
        assert "nothing was written" in notices(tui)
    assert memory_files(demo_home) == before
    assert demo_home.chat_engine().store.require(session.id).memory_flush_at is None


async def test_flush_discard_writes_nothing(demo_home: Home, fake_claude: FakeClaude) -> None:
    before = memory_files(demo_home)
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        session = await flush_dialog(demo_home, fake_claude, pilot, key=False)
        await pilot.click("#choice-discard")
        await settle(pilot)
        assert "Flush discarded: nothing was written." in notices(tui)
    assert memory_files(demo_home) == before
    assert demo_home.chat_engine().store.require(session.id).memory_flush_at is None


async def test_flush_edited_to_nothing_is_discarded(
    demo_home: Home, fake_claude: FakeClaude
) -> None:
    before = memory_files(demo_home)
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        session = await flush_dialog(demo_home, fake_claude, pilot)
        editor = await open_editor(pilot)
        editor.query_one(TextArea).clear()
        await pilot.press("enter", "ctrl+s")  # only blank lines left
        await settle(pilot)
        assert "edited notes were empty" in notices(tui)
    assert memory_files(demo_home) == before
    assert demo_home.chat_engine().store.require(session.id).memory_flush_at is None


# -- knowledge facts ----------------------------------------------------------------------------


async def open_demo_facts(tui: ClawbackApp, pilot: Pilot[Any]) -> FactList:
    """The demo chat session's pane, the facts list focused by its footer key."""
    await settle(pilot)
    await tui.action_show_compaction(SESSION_ID)
    await settle(pilot)
    pane = tui.query_one(CompactionPane)
    assert pane.snapshot is not None and len(pane.snapshot.facts) == 5
    await pilot.press("e")  # the pane's key moves to the list...
    facts = pane.query_one(FactList)
    assert tui.focused is facts and facts.highlighted == 0
    footer = {key: active.binding.description for key, active in tui.screen.active_bindings.items()}
    assert footer["e"] == "Edit fact" and footer["f"] == "Flush now"
    return facts


def row_text(facts: FactList, fact_id: int) -> str:
    return str(facts.get_option(str(fact_id)).prompt)


async def test_editing_a_fact_saves_it_through_the_store_and_it_stays(
    demo_home: Home,
) -> None:
    store = FactStore(demo_home.db)
    (config,) = [f for f in store.list(session_id=SESSION_ID) if f.type == "config"]
    assert not config.edited
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        facts = await open_demo_facts(tui, pilot)
        while facts.highlighted_option is not None and facts.highlighted_option.id != str(
            config.id
        ):
            await pilot.press("down")
        await pilot.press("e")  # ...where ``e`` edits the highlighted fact
        editor = await screen_of(pilot, EditorScreen)
        assert editor.query_one(TextArea).text == config.content
        corrected = "The recalled block is capped at min(3000 tokens, 10% of the window)"
        editor.query_one(TextArea).load_text(f"  {corrected}\n")
        await pilot.press("ctrl+s")
        await settle(pilot)
        saved = store.get(config.id)
        assert saved.edited and saved.content == corrected and saved.active
        assert "edited" in row_text(facts, config.id) and corrected in row_text(facts, config.id)
        assert facts.highlighted_option is not None
        assert facts.highlighted_option.id == str(config.id)  # the refresh kept the place

    # Rebuilding the archive and extracting from the same message again keeps the correction.
    demo_home.reindex()
    original = NewFact("config", config.content, session_id=SESSION_ID,
                       message_id=config.message_id)  # fmt: skip
    assert store.apply([original])[0].fact_id == config.id
    kept = store.get(config.id)
    assert kept.active and kept.edited and kept.content == corrected


async def test_escape_in_the_fact_editor_changes_nothing(demo_home: Home) -> None:
    store = FactStore(demo_home.db)
    before = [(f.id, f.content, f.edited) for f in store.list(include_superseded=True)]
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        await open_demo_facts(tui, pilot)
        await pilot.press("enter")
        editor = await screen_of(pilot, EditorScreen)
        editor.query_one(TextArea).load_text("Something else entirely")
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(tui.screen, EditorScreen)
    assert [(f.id, f.content, f.edited) for f in store.list(include_superseded=True)] == before


async def test_a_superseded_fact_refuses_to_be_edited(demo_home: Home) -> None:
    store = FactStore(demo_home.db)
    (old,) = [f for f in store.list(session_id=SESSION_ID, include_superseded=True) if not f.active]
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        facts = await open_demo_facts(tui, pilot)
        await pilot.press("end")  # superseded facts come last
        assert facts.highlighted_option is not None
        assert facts.highlighted_option.id == str(old.id)
        assert "superseded by" in row_text(facts, old.id)
        await pilot.press("e")
        await settle(pilot)
        assert not isinstance(tui.screen, EditorScreen)
        (warning,) = [n for n in tui._notifications if n.severity == "warning"]
        assert f"#{old.id} was superseded by #{old.superseded_by}" in warning.message
    assert store.get(old.id) == old


async def test_a_session_without_facts_says_so(demo_home: Home) -> None:
    session = seed(demo_home.chat_engine(), 2)
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await tui.action_show_compaction(session.id)
        await settle(pilot)
        pane = tui.query_one(CompactionPane)
        assert pane.query_one("#facts-none").display
        assert pane.query_one(FactList).option_count == 0
        await pilot.press("e")
        assert "No facts from this session" in notices(tui)


async def test_flush_accept_writes_the_memory_file(
    demo_home: Home, fake_claude: FakeClaude
) -> None:
    session = seed(demo_home.chat_engine(), 4)
    fake_claude.reply("- Alice keeps bees in the xylophonic greenhouse.")
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await tui.action_show_compaction(session.id)
        await settle(pilot)
        await pilot.press("f")
        dialog = await screen_of(pilot, ChoiceScreen)
        assert "xylophonic" in dialog.detail and "+" in dialog.detail  # notes and the diff
        await pilot.press("enter")
        await settle(pilot)
        files = list((tui.store.workspace.root / "memory").glob("*.md"))
        assert any("xylophonic greenhouse" in f.read_text() for f in files)


async def test_compact_confirm_adds_a_ledger_row(demo_home: Home, fake_claude: FakeClaude) -> None:
    session = seed(demo_home.chat_engine(), 10)
    fake_claude.reply("Alice plans a greenhouse; decided: three beds.")
    tui = make_app(demo_home, watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await tui.action_show_compaction(session.id)
        await settle(pilot)
        pane = tui.query_one(CompactionPane)
        await pilot.press("c")
        dialog = await screen_of(pilot, ChoiceScreen)
        assert "three beds" in dialog.detail
        await pilot.press("enter")
        await settle(pilot)
        (row,) = list_compactions(demo_home.db, session.id)
        assert row.messages_removed == 4
        (shown,) = pane.query(LedgerRow)
        assert shown.record.id == row.id
        shown.collapsed = False
        await settle(pilot)
        assert "message 0 about the garden" in str(shown.query_one(".ledger-messages").render())
