"""The app's chat keeps one ``claude`` process per session between turns (the fake ``claude``,
real processes), and leaves none behind when it quits."""

from __future__ import annotations

from clawback.tui.app import ClawbackApp
from clawback.tui.widgets.chat_dock import ChatDock
from textual.widgets import Static

from ..fake_claude.fixtures import FakeClaude, fake_claude_fixture, wait_gone  # noqa: F401
from .conftest import SIZE
from .pilot import settle
from .test_chat import chat, shown


async def test_the_apps_turns_share_one_process_that_ends_with_the_app(
    tui: ClawbackApp, fake_claude: FakeClaude
) -> None:
    fake_claude.set_env("FAKE_CLAUDE_SPAWN_CHILD", "1")  # as claude's MCP server would be
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "hello there")
        await settle(pilot)
        await pilot.press(*"and again", "enter")
        await settle(pilot)
        assert [role for role, _ in shown(pane)] == ["user", "assistant"] * 2
        calls = fake_claude.calls()
        assert [c["turn"] for c in calls] == [1, 2] and calls[0]["pid"] == calls[1]["pid"]
        assert calls[1]["stdin"] == "<current-message>\nand again\n</current-message>"
        dock = tui.query_one(ChatDock)
        assert not dock.busy
        spend = str(dock.query_one("#chat-spend", Static).render())
        assert spend.startswith("last turn: ") and "cache read" in spend and "out · $" in spend
        assert dock.has_class("-spent")
        header = str(dock.query_one("#chat-header", Static).render())
        assert "session: 2 turns" in header and "from the cache" in header
        await pilot.press("ctrl+q")
    assert await wait_gone(calls[0]["pid"], 10) and await wait_gone(calls[0]["child_pid"], 10)
