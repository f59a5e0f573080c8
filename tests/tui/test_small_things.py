"""The small things: fact ids on screen, a dialog as wide as its content needs, a failure
titled by what failed, and a context meter that reads in the order the bar does."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from clawback.core.config import ChatConfig
from clawback.core.home import Home
from clawback.core.memory.facts import Fact
from clawback.tui import background
from clawback.tui.app import make_app
from clawback.tui.screens.dialogs import ChoiceScreen
from clawback.tui.widgets.context_meter import Usage
from clawback.tui.widgets.lifecycle_views import fact_row

from .pilot import settle


def _fact(fact_id: int, superseded_by: int | None = None) -> Fact:
    return Fact(
        id=fact_id, type="decision", content="use FTS5", context=None, session_id=None,
        message_id=None, conversation_id=None, created_at="", updated_at="",
        superseded_by=superseded_by, edited=False, source_ts=None,
    )  # fmt: skip


def test_facts_show_the_ids_they_refer_to_each_other_by() -> None:
    assert fact_row(_fact(5)).plain.startswith("#5 decision")
    old = fact_row(_fact(3, superseded_by=5)).plain
    assert old.startswith("#3 decision") and old.endswith("superseded by #5")


def test_the_meter_names_each_mark_in_bar_order_and_flush_comes_first() -> None:
    usage = Usage.of(None, ChatConfig())
    assert usage.flush_at < usage.compact_at
    assert usage.describe() == "0 of 200k tokens (0%) · flush at 176k ┃ · compact at 184k ║"


def test_a_failure_is_titled_by_what_failed() -> None:
    seen: list[dict[str, object]] = []
    app = SimpleNamespace(
        log=SimpleNamespace(error=lambda *a: None),
        notify=lambda message, **kw: seen.append({"message": message, **kw}),
    )
    worker = SimpleNamespace(name="_run_flush", error=RuntimeError("boom"))
    background.report_failure(app, worker)  # type: ignore[arg-type]
    assert seen[0]["title"] == "Flush failed" and "boom" in str(seen[0]["message"])


@pytest.mark.parametrize(("size", "least", "most"), [((160, 45), 90, 100), ((80, 24), 64, 72)])
async def test_a_dialog_uses_the_room_a_wide_terminal_has(
    demo_home: Home, size: tuple[int, int], least: int, most: int
) -> None:
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.push_screen(ChoiceScreen("Write these notes?", [("yes", "Write"), ("no", "No")]))
        await pilot.pause()
        assert least <= app.screen.query_one(".dialog").region.width <= most
