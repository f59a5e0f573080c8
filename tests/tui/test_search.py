"""Live search: results as you type, stale results dropped, Enter jumps to the message, and
the filters kept in config.toml for the next start."""

from __future__ import annotations

import tomllib

from clawback.core.home import Home
from clawback.core.search.engine import SearchResults
from clawback.core.search.front import as_you_type, too_short
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.panes.search import SearchPane
from clawback.tui.panes.transcript import TranscriptPane
from clawback.tui.widgets.message_view import MessageView
from textual.content import Content
from textual.widgets import Checkbox, ContentSwitcher, Input, OptionList, Select, Static

from .conftest import SIZE
from .pilot import settle


async def test_search_then_enter_jumps_to_the_message(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"soft")
        tui.query_one("#search-input", Input).insert_text_at_cursor(" threshold")
        await settle(pilot)
        pane = tui.query_one(SearchPane)
        results = pane.query_one("#search-results", OptionList)
        assert results.option_count >= 1
        status = str(pane.query_one("#search-status", Static).render())
        assert "ms" in status and "shown of" in status
        hit = pane._hits[0]
        pane._show_results(pane._generation - 1, SearchResults(query="older"))  # a late worker
        assert results.option_count == len(pane._hits) >= 1  # stale results were dropped
        await pilot.press("enter")
        await settle(pilot)
        transcript = tui.query_one(TranscriptPane)
        assert transcript.session is not None and transcript.session.id == hit.session_id
        focused = tui.focused
        assert isinstance(focused, MessageView)
        assert focused.has_class("-target") and "soft threshold" in focused.message.text
        assert focused.match is not None and "threshold" in focused.match
        body = focused.query_one(".body", Static).render()
        assert isinstance(body, Content)
        assert any("$accent" in str(span.style) for span in body.spans)  # the words lit up
        await pilot.press("ctrl+f")
        assert tui.focused is pane.query_one("#search-input")


async def test_slash_filters_bad_dates_and_escape(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        pane = tui.query_one(SearchPane)
        assert tui.focused is pane.query_one("#search-input")
        await pilot.press(*"side", "slash")
        assert pane.query_one("#search-input", Input).value == "side/"  # "/" types in inputs
        await pilot.press("backspace", *"bar")
        await settle(pilot)
        everything = len(pane._hits)
        pane.query_one("#search-role", Select).value = "user"
        await settle(pilot)
        assert 0 < len(pane._hits) < everything
        assert all(hit.role == "user" for hit in pane._hits)
        pane.query_one("#search-since", Input).value = "not a date"
        await settle(pilot)
        assert "not a date" in str(pane.query_one("#search-status", Static).render())
        pane.query_one("#search-input", Input).focus()
        await pilot.press("escape")
        await settle(pilot)
        assert tui.query_one("#main", ContentSwitcher).current == "transcript"


def test_the_word_being_typed_is_a_prefix() -> None:
    assert as_you_type("comp") == "comp*"
    assert as_you_type("soft thres") == "soft thres*"
    assert as_you_type("soft ") == "soft "  # a finished word stays exact
    assert as_you_type('"a phrase"') == '"a phrase"'
    assert as_you_type('"a phr') == '"a phr'
    assert as_you_type("wal*") == "wal*"
    assert as_you_type("sqlite -wal") == "sqlite -wal"
    assert as_you_type("") == ""


async def test_short_prefixes_wait_for_more_letters(tui: ClawbackApp) -> None:
    assert (
        too_short("so")
        and too_short("ab*")
        and not too_short("a b")
        and not too_short("sof")
        and not too_short("so ")
    )
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        pane = tui.query_one(SearchPane)
        # What typing shows, before any pause: the pause's own search ("sof" read as a finished
        # word, which finds nothing) came MEANING_PAUSE (0.35 s) later, inside ``settle`` on a
        # loaded machine, and replaced these results (it failed under ``-n auto``, never alone).
        # That search has its own test (test_a_question_ends_as_the_command_line_answers_it).
        pane.meaning_pause = 3600
        await pilot.press("s", "o")
        await settle(pilot)
        assert "Keep typing" in str(pane.query_one("#search-status", Static).render())
        assert pane.query_one("#search-results", OptionList).option_count == 0
        await pilot.press("f")
        await settle(pilot)
        assert pane._meaning_timer is not None  # the finished query's search is still to come
        assert pane.query_one("#search-results", OptionList).option_count >= 1
        # The pause comes at once: "sof" read as finished matches nothing, and the list keeps
        # what "sof*" found rather than going blank.
        pane.meaning_pause = 0
        await pilot.press("backspace", "f")
        await settle(pilot)
        assert pane.query_one("#search-results", OptionList).option_count >= 1


async def test_search_filters_are_kept_for_the_next_start(demo_home: Home) -> None:
    def saved() -> dict[str, object]:
        return dict(tomllib.loads(demo_home.paths.config.read_text()).get("ui", {}))

    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        pane = app.query_one(SearchPane)
        pane.query_one("#search-source", Select).value = "claude-code"
        pane.query_one("#search-role", Select).value = "assistant"
        pane.query_one("#search-since", Input).focus()
        await pilot.press(*"2026-11-1")
        await settle(pilot)
        assert "search_since" not in saved()  # half a date is never written
        await pilot.press("9")
        await pilot.press("ctrl+t")  # this session only
        await settle(pilot)
    assert saved() == {
        "search_source": "claude-code",
        "search_role": "assistant",
        "search_since": "2026-11-19",
        "search_this_session": True,
    }

    reopened = Home.open(demo_home.paths.home)
    again = make_app(reopened, watch=False)
    try:
        async with again.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("ctrl+f")
            await settle(pilot)
            pane = again.query_one(SearchPane)
            assert pane.query_one("#search-source", Select).value == "claude-code"
            assert pane.query_one("#search-role", Select).value == "assistant"
            assert pane.query_one("#search-since", Input).value == "2026-11-19"
            assert pane.query_one("#search-this-session", Checkbox).value is True
            opened = again.query_one(TranscriptPane).session
            assert opened is not None  # the newest session opens at start: "this session"
            filters = pane.filters()
            assert (filters.source, filters.role, filters.since, filters.until) == (
                "claude-code",
                "assistant",
                "2026-11-19",
                None,
            )
            assert filters.session_id == opened.id
            await pilot.press("ctrl+t")  # changed again: saved again
            await settle(pilot)
    finally:
        reopened.close()
    assert "search_this_session" not in saved() and saved()["search_role"] == "assistant"


async def test_two_cjk_characters_are_searched_as_you_type(tui: ClawbackApp) -> None:
    assert not too_short("世界") and too_short("世") and too_short("ab")
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"世界")
        await settle(pilot)
        pane = tui.query_one(SearchPane)
        assert pane._hits and "世界" in pane._hits[0].snippet
        assert "Keep typing" not in str(pane.query_one("#search-status", Static).render())


async def test_kind_filter_and_active_filters_are_shown(tui: ClawbackApp) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"sidebar")
        await settle(pilot)
        pane = tui.query_one(SearchPane)
        kinds = {hit.kind for hit in pane._hits}
        assert "tool_result" in kinds and "text" in kinds
        pane.query_one("#search-kind", Select).value = "tool"
        await settle(pilot)
        assert pane._hits and {hit.kind for hit in pane._hits} <= {"tool_use", "tool_result"}
        status = str(pane.query_one("#search-status", Static).render())
        assert "filtered by kind" in status and "matches before the filters" in status
    saved = tomllib.loads(tui.store.paths.config.read_text())
    assert saved["ui"]["search_kind"] == "tool"


def test_a_result_header_is_one_line_whatever_the_title() -> None:
    from clawback.core.search.engine import SearchHit
    from clawback.tui.panes.search import hit_row

    hit = SearchHit(
        entry_id=1, session_id="s", session_key=None, source="claude-code", role="user",
        session_title="<command-name>/clear</command-name>\n<command-message>x\n" + "y" * 200,
        kind="text", timestamp=None, snippet="a \x02b\x03 c", score=0.5, file="f", path="f",
        line=1, sidechain=False,
    )  # fmt: skip
    header, snippet = hit_row(hit).plain.split("\n")
    assert snippet == "a b c"
    assert header.startswith("weak    Claude Code · You  <command-name>/clear</command-name> <co")


async def test_searching_at_once_is_not_pulled_back_by_the_first_preview(
    tui: ClawbackApp,
) -> None:
    async with tui.run_test(size=SIZE) as pilot:
        await pilot.pause()  # mounted (start-up focuses the list), the first page still coming
        await pilot.press("ctrl+f", *"sidebar")
        await settle(pilot)  # ...which previews the newest session
        assert tui.query_one("#main", ContentSwitcher).current == "search"
        assert tui.query_one("#search-input", Input).value == "sidebar"
        assert tui.query_one(TranscriptPane).session is not None  # loaded all the same


async def test_a_question_ends_as_the_command_line_answers_it(
    tui: ClawbackApp, demo_home: Home
) -> None:
    """In a home without vectors, typing read "choose?" as the prefix "choose?*" and no pause
    ever searched the finished question: the app showed nothing where the CLI found the note."""
    from clawback.core.search.engine import SearchFilters
    from clawback.core.search.front import find

    question = "which search index did we choose?"
    expected = [hit.entry_id for hit in find(demo_home.db, question, SearchFilters()).results.hits]
    assert expected  # the memory note saying FTS5 was chosen
    async with tui.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        pane = tui.query_one(SearchPane)
        pane.meaning_pause = 0  # the person stops typing at once
        tui.query_one("#search-input", Input).insert_text_at_cursor(question)
        await settle(pilot)
        assert [hit.entry_id for hit in pane._hits] == expected
