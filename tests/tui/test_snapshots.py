"""Screenshots of the main panes under a fixed setup: size, zone, clock, no blink, no watcher.

Update after an intended change with ``pytest tests/tui --snapshot-update`` and look at the
report's images before committing them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.tui.app import make_app
from clawback.tui.screenshots import steady_cursors
from textual.pilot import Pilot

from .conftest import SIZE
from .pilot import settle

SnapCompare = Callable[..., bool]  # pytest-textual-snapshot's snap_compare fixture


@pytest.fixture(autouse=True)
def _fixed_clock_and_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Search shows its query time and BM25 scores (which move with the index's statistics):
    a stopped clock and a constant score keep the picture identical on every run."""
    monkeypatch.setattr(
        "clawback.core.search.engine.time", SimpleNamespace(perf_counter=lambda: 0.0)
    )
    monkeypatch.setattr("clawback.core.search.engine.score_from_rank", lambda rank: 0.5)


def steady(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A ``run_before`` that presses ``keys``, waits for every worker and stops cursor blink."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        steady_cursors(pilot.app)
        await pilot.pause()

    return run_before


def test_browsing_a_session(snap_compare: SnapCompare, demo_home: Home) -> None:
    app = make_app(demo_home, watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("down", "down", "down"))


def test_live_search_results(snap_compare: SnapCompare, demo_home: Home) -> None:
    app = make_app(demo_home, watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("ctrl+f", *"sidebar"))


def test_help_screen(snap_compare: SnapCompare, demo_home: Home) -> None:
    app = make_app(demo_home, watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("f1"))


def test_messages_as_written(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """Code-like text, HTML-like tags, a table, tool calls with their results, a fold."""
    from .test_messages import FIXTURE

    home = Home.open(tmp_path / "home")
    home.ingest_paths([FIXTURE])
    app = make_app(home, watch=False)
    try:
        assert snap_compare(app, terminal_size=(160, 45), run_before=steady("enter"))
    finally:
        home.close()


@pytest.mark.parametrize(
    "keys",
    [("enter",), ("f5",), ("ctrl+f", *"sidebar")],
    ids=["transcript", "memory", "search"],
)
def test_small_terminal(snap_compare: SnapCompare, demo_home: Home, keys: tuple[str, ...]) -> None:
    """80x24: one pane at a time, full width; the footer ends cleanly."""
    app = make_app(demo_home, watch=False)
    assert snap_compare(app, terminal_size=(80, 24), run_before=steady(*keys))
