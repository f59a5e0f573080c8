"""A chat turn in which Claude searched the memory shows the call as a folded tool line."""

from __future__ import annotations

from clawback.core.config import update_setting
from clawback.core.home import Home
from clawback.tui.app import make_app
from clawback.tui.widgets.message_view import MessageView, fold_summary

from tests.mcp.test_transcript import ReplayRunner

from .conftest import SIZE
from .pilot import settle
from .test_chat import chat, shown


async def test_the_tool_call_is_folded_between_the_question_and_the_reply(demo_home: Home) -> None:
    # the replay stands in for one-shot calls: a process per turn, as the setting's 0 asks
    update_setting(demo_home.paths, "chat.live_idle_minutes", 0)
    tui = make_app(demo_home, runner=ReplayRunner("claude"), watch=False)
    async with tui.run_test(size=SIZE) as pilot:
        pane = await chat(tui, pilot, "what about sqlite?")
        await settle(pilot)
        assert shown(pane) == [
            ("user", "what about sqlite?"),
            ("assistant", '{"query": "sqlite wal"}'),
            ("assistant", "Done."),
        ]
        [call] = [v for v in pane.query(MessageView) if v.message.kind == "tool_use"]
        assert call.folded and fold_summary(call.message) == "⚙ memory_search: sqlite wal"
