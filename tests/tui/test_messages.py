"""Messages read exactly as written: what a person typed and what tools printed is literal,
Claude's Markdown keeps code-like text intact, ``m`` shows the raw text, compaction summaries
fold, parallel tool results sit under their calls, and another model is named as such."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawback.core.archive.sessions import Message
from clawback.core.home import Home
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.widgets.markdown_text import literal_content, markdown_content
from clawback.tui.widgets.message_view import MessageView, in_reading_order, is_tool_error
from textual.widgets import Static

from .pilot import settle

FIXTURE = Path(__file__).parent / "fixtures" / "as-written.jsonl"
TRICKY = [
    "pkg/__init__.py",
    "f(*args, **kwargs)",
    "List<String>",
    "Vec<u8>",
    "__SLOW__",
    "<command-name>/clear</command-name>",
]


@pytest.mark.parametrize("text", TRICKY)
def test_code_like_text_survives_markdown(text: str) -> None:
    assert markdown_content(f"See {text} here.").plain == f"See {text} here."


def test_markdown_still_renders_what_was_meant() -> None:
    shown = markdown_content("**bold** and _really_ and `code`\n\n1. one\n2. two")
    assert shown.plain == "bold and really and code\n\n1. one\n2. two"
    assert markdown_content("a line\nthe next line").plain == "a line\nthe next line"


def test_an_html_block_does_not_swallow_the_lines_after_it() -> None:
    text = "<div>\nthis line after div\nand this one\n</div>\nthe end"
    assert markdown_content(text).plain == text


def test_tables_align_their_columns() -> None:
    table = markdown_content("| col | value |\n|---|---|\n| a | 1 |\n| longer name | 22 |")
    lines = table.plain.split("\n")
    assert lines[0].index("│") == lines[2].index("│") == lines[3].index("│")
    assert set(lines[1]) <= {"─", "┼"}


def test_literal_text_is_exactly_as_written_but_fences_are_code() -> None:
    text = "1. __init__\n2. *x*\n<div>\n```python\ndef f(*a): ...\n```\nafter"
    shown = literal_content(text).plain
    assert shown.startswith("1. __init__\n2. *x*\n<div>\n")
    assert "def f(*a): ..." in shown and "```" not in shown
    assert shown.endswith("after")


def _message(kind: str, n: int, text: str = "x") -> Message:
    role = {"tool_use": "assistant", "tool_result": "tool"}.get(kind, "user")
    return Message(
        entry_id=n, line=n, block=0, role=role, kind=kind, timestamp=None, text=text,
        display=None, sidechain=False, conversational=kind == "text", partial=False,
        model=None, file="f",
    )  # fmt: skip


def test_parallel_results_move_under_their_calls() -> None:
    kinds = ["text", "tool_use", "tool_use", "tool_result", "tool_result", "tool_use"]
    messages = [_message(kind, n) for n, kind in enumerate(kinds)]
    assert [m.entry_id for m in in_reading_order(messages)] == [0, 1, 3, 2, 4, 5]
    uneven = [_message(k, n) for n, k in enumerate(["tool_use", "tool_use", "tool_result"])]
    assert in_reading_order(uneven) == uneven  # no guessing when the counts differ


def test_tool_errors_are_recognised() -> None:
    assert is_tool_error(_message("tool_result", 1, "Exit code 2\nls: nope"))
    assert is_tool_error(_message("tool_result", 1, "<tool_use_error>File not found"))
    assert not is_tool_error(_message("tool_result", 1, "all good"))


@pytest.fixture
def written(tmp_path: Path) -> Iterator[ClawbackApp]:
    home = Home.open(tmp_path / "home")
    home.ingest_paths([FIXTURE])
    yield make_app(home, watch=False)
    home.close()


def views(app: ClawbackApp) -> list[MessageView]:
    return list(app.query(MessageView))


def body(view: MessageView) -> str:
    return "\n".join(str(s.render()) for s in view.query(".body").results(Static))


async def test_the_transcript_shows_messages_as_written(written: ClawbackApp) -> None:
    async with written.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        shown = views(written)
        original = FIXTURE.read_text().split("\n")[0]
        user = shown[0]
        assert user.message.role == "user"
        assert body(user) == user.message.text  # every character, no Markdown
        assert "<div>\nthis line after div" in body(user)
        assert "1. first\n2. second" in body(user)

        reply = shown[1]
        assert "gpt-5-codex" in str(reply.query_one(".header", Static).render())
        assert "Claude" not in str(reply.query_one(".header", Static).render())
        for text in ("pkg/__init__.py", "__SLOW__", "f(*args, **kwargs)", "List<String>"):
            assert text in body(reply), text
        assert "Vec<u8>" in original and "Vec<u8>" in body(reply)

        kinds = [v.message.kind for v in shown]  # each result right under its call
        assert kinds[2:6] == ["tool_use", "tool_result", "tool_use", "tool_result"]
        assert shown[3].message.error  # is_error, as Claude Code marked it
        assert shown[3].has_class("-error") and not shown[5].has_class("-error")
        assert "↳ error" in str(shown[3].query_one(".fold", Static).render())

        compaction = next(v for v in shown if v.message.kind == "compaction")
        assert compaction.folded and not compaction.query(".body")
        compaction.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert "1. did **x**" in body(compaction)  # the summary as written

        reply.focus()
        await pilot.press("m")
        await pilot.pause()
        assert reply.raw and body(reply) == reply.message.text
        assert "| col | value |" in body(reply)
        await pilot.press("m")
        await pilot.pause()
        assert "| col |" not in body(reply)


def test_what_the_cli_wrote_folds_under_its_own_name() -> None:
    from clawback.tui.widgets.message_view import fold_summary, is_folded

    for kind, label in [
        ("command_output", "$ command output"),
        ("hook", "⚑ hook"),
        ("notification", "ℹ notice"),
        ("interruption", "⏹ interrupted"),
    ]:
        message = _message(kind, 1, "[Request interrupted by user]\nmore")
        message.conversational = False
        assert is_folded(message)
        assert fold_summary(message) == f"{label} · [Request interrupted by user] more"


def test_a_session_row_is_two_lines_whatever_the_title() -> None:
    from clawback.core.archive.sessions import SessionSummary
    from clawback.tui.panes.sessions import session_row

    fields: dict[str, Any] = {name: None for name in SessionSummary.__dataclass_fields__}
    fields.update(
        id="s", source="claude-code", title="<command-name>/clear</command-name>\n\nnext",
        message_count=2, source_missing=False,
    )  # fmt: skip
    row = session_row(SessionSummary(**fields)).plain
    assert row.split("\n")[0] == "<command-name>/clear</command-name> next"
    assert row.count("\n") == 1
