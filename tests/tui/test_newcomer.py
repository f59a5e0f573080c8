"""What a newcomer meets in the app (issue 37 item 5), at 80x24 and 160x45."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from clawback.core.home import Home
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.format import local_time
from clawback.tui.panes.search import SearchPane
from clawback.tui.panes.sessions import SessionsPane
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.screens.help import HelpScreen
from clawback.tui.widgets.message_view import MessageView
from clawback.tui.widgets.message_window import MessageWindow
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Input, OptionList, Static

from ..helpers import cc_assistant, cc_user, write_lines
from .pilot import every_notification, settle
from .test_browse import session_id

Size = tuple[int, int]
SMALL: Size = (80, 24)
WIDE: Size = (160, 45)


async def test_quitting_while_the_chat_dock_mounts_raises_nothing(tui: ClawbackApp) -> None:
    """Ctrl+Q as the first screen appears prunes the dock before its children mount; its
    start-up must not look for them (it printed a ``NoMatches: '#chat-header'`` traceback)."""
    async with tui.run_test(size=SMALL) as pilot:
        await settle(pilot)
        pane = tui.query_one(TranscriptPane)
        if pane.dock.is_mounted:
            await pane.dock.remove()
        pane.mount(pane.dock)  # registered and started, its compose not yet run ...
        pane.dock.remove()  # ... when the app prunes it, as quitting prunes every screen
        await settle(pilot)
    assert tui.return_code in (None, 0)


LONG_TITLE = (
    "Choosing the search index for every transcript we keep, and whether FTS5's tokenizer "
    "handles Japanese and Chinese text without an extension"
)


def label_session(home: Home, title_prefix: str, label: str) -> None:
    """A long title, as real first prompts are: the demo's are short."""
    with sqlite3.connect(home.paths.database) as conn:
        conn.execute(
            "UPDATE sessions SET label = ? WHERE title LIKE ?", (label, f"{title_prefix}%")
        )


def screen_lines(widget: Widget) -> list[str]:
    """What ``widget`` shows, line by line, as a person reads it on the screen."""
    return [widget.render_line(y).text for y in range(widget.content_region.height)]


@pytest.mark.parametrize("size", [SMALL, WIDE])
async def test_a_results_source_and_date_are_never_cut(demo_home: Home, size: Size) -> None:
    label_session(demo_home, "Choosing the search index", LONG_TITLE)
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"tantivy")
        await settle(pilot)
        results = app.query_one("#search-results", OptionList)
        hits = [h for h in app.query_one(SearchPane)._hits if h.session_title == LONG_TITLE]
        assert hits
        shown = screen_lines(results)
        for hit in hits:
            when = local_time(hit.timestamp)
            rows = [line for line in shown if when in line]  # the date whole ...
            assert rows, f"{when} is cut: {shown}"
            assert rows[0].split()[0] == hit.strength  # how strong it is leads the row
            assert "Claude Code" in rows[0]  # ... and the source
            assert "Choosing the search" in rows[0]  # and the title, as much as fits


LONG_SESSION = "5e551011-0000-4000-8000-00000000b0d5"


def long_session(home: Home, turns: int = 12) -> str:
    """A Claude Code session longer than any screen: a question, a tool call and its output per
    turn, each folded but the question."""
    lines = []
    for n in range(turns):
        question = f"step {n}: what does the build print now?\n" + "and why?\n" * 2
        lines.append(cc_user(LONG_SESSION, f"u{n}", question))
        call = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "make"}}
        lines.append(cc_assistant(LONG_SESSION, f"a{n}", [call]))
        output = "\n".join(f"line {i} of the build's output" for i in range(30))
        result = [{"type": "tool_result", "tool_use_id": f"t{n}", "content": output}]
        lines.append(cc_user(LONG_SESSION, f"r{n}", result))
    root = Path(home.config.sources.claude_code_path).expanduser()
    write_lines(root / "-home-u-proj" / f"{LONG_SESSION}.jsonl", lines)
    home.ingest_all()
    return LONG_SESSION


@pytest.mark.parametrize("size", [SMALL, WIDE])
async def test_unfolding_on_the_last_line_brings_the_output_into_view(
    demo_home: Home, size: Size
) -> None:
    session = long_session(demo_home)
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.query_one(SessionsPane).post_message(SessionsPane.SessionChosen(session, True))
        await settle(pilot)
        window = app.query_one(MessageWindow)
        seen = window.scrollable_content_region
        view = next(  # the first tool output below the first screen
            v
            for v in app.query(MessageView)
            if v.message.kind == "tool_result" and v.virtual_region.y >= seen.height
        )
        window.scroll_to(y=view.virtual_region.y - seen.height + 1, animate=False)
        view.focus(scroll_visible=False)
        await settle(pilot)
        assert view.region.y == seen.bottom - 1  # its fold line is the last one shown
        await pilot.press("enter")
        await settle(pilot)
        body = view.query_one(".body").region
        assert view.region.y >= seen.y  # the fold line is still there, and under it as much
        shown = min(body.bottom, seen.bottom) - max(body.y, seen.y)  # of the output as fits
        assert shown >= min(body.height, seen.height - 1)


@pytest.mark.parametrize("size", [SMALL, WIDE])
async def test_help_lists_one_line_for_j_and_k(tui: ClawbackApp, size: Size) -> None:
    """It listed "j/k Move" and "k Previous message": one binding, two lines."""
    async with tui.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(tui.screen, HelpScreen)
        shown = [
            " ".join(line.split())
            for keys in tui.screen.query(".help-keys").results(Static)
            for line in keys.render().plain.splitlines()  # type: ignore[union-attr]
        ]
        moving = [line for line in shown if line.split()[0] in ("j", "k", "j/k")]
        assert moving == ["j/k Next or previous message"]


@pytest.mark.parametrize("size", [SMALL, WIDE])
async def test_f6_on_a_claude_code_session_says_compaction_is_for_clawbacks_chats(
    tui: ClawbackApp, size: Size
) -> None:
    notified = every_notification(tui)
    async with tui.run_test(size=size) as pilot:
        await settle(pilot)
        session = session_id(tui, "Choosing the search index")
        tui.query_one(SessionsPane).post_message(SessionsPane.SessionChosen(session, True))
        await settle(pilot)
        await pilot.press("f6")
        await settle(pilot)
        [said] = [n.message for n in notified]
        assert "clawback's own chats" in said and "Claude Code session" in said
        assert "Choosing the search index" in said
        assert tui.query_one("#main", ContentSwitcher).current == "transcript"  # stays put
        # Once a reply has forked a clawback chat from it, F6 shows that chat's compaction.
        tui.query_one(TranscriptPane).dock.session_id = "a-native-chat"
        await pilot.press("f6")
        await settle(pilot)
        assert tui.query_one("#main", ContentSwitcher).current == "compaction"


@pytest.mark.parametrize("size", [SMALL, WIDE])
async def test_the_sessions_filter_finds_what_was_said_and_where(
    tui: ClawbackApp, size: Size
) -> None:
    """It matched titles and keys only: a word from the conversation, the tool a session came
    from or a folder and a word together found nothing."""
    async with tui.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f2", "f")  # the sessions list, then its filter
        await settle(pilot)
        listed = tui.query_one("#session-list", OptionList)

        async def shown_for(text: str) -> list[str]:
            tui.query_one("#session-filter", Input).value = ""
            await pilot.press(*text)
            await settle(pilot)
            return [line.strip() for line in screen_lines(listed) if line.strip()]

        assert (await shown_for("kyoto"))[0] == "Trip planning with Alice"  # said, not a title
        assert len(await shown_for("kyoto")) == 2  # that session's two lines, no other
        both = await shown_for("openclaw")
        assert both[0] == "Weekly review" and "Trip planning with Alice" in both
        assert not any("Textual layout" in line for line in both)
        assert (await shown_for("clawback columns"))[0] == "Textual layout bug in the sidebar"
