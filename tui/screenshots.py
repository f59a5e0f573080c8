"""Regenerate ``screenshots/``: run the app headless on the demo archive and save each pane.

    python -m clawback.tui.screenshots [OUTPUT_FOLDER]

Screenshots are never made by hand, so they always show the app as it is. Times are shown in
UTC, the usage pane's periods end on a fixed day, and the demo home is thrown away afterwards,
so two runs give the same pictures.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any

from clawback.core.demo import build_demo_home
from clawback.core.demo.chat import SESSION_ID as DEMO_CHAT_SESSION
from clawback.core.home import Home
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from . import panes
from .app import ClawbackApp, make_app
from .panes.compaction import LedgerRow

SIZE = (130, 38)
SMALL = (80, 24)  # below the narrow threshold: one pane at a time


def steady_cursors(app: App[Any]) -> None:
    """Show every text cursor without blinking, as a picture must.

    Textual 8.2's TextArea keeps rendered lines under a key that stops seeing the cursor once
    blinking is off: a line painted while the blink had hidden it would be reused without it
    (a slow machine takes the picture long after the first half-second blink), so that cache
    is dropped after the switch.
    """
    for widget in app.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False
        if isinstance(widget, TextArea):
            widget.notify_style_update()
            widget.refresh()


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for every worker (but the watcher, which is off here) and a quiet screen."""
    app = pilot.app
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    steady_cursors(app)
    await pilot.pause()


async def press(pilot: Pilot[Any], *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
    await settle(pilot)


async def compaction(pilot: Pilot[Any]) -> None:
    """The demo's chat session (ledger row and facts), its compaction expanded, a fact picked."""
    app = pilot.app
    assert isinstance(app, ClawbackApp)
    await app.action_show_compaction(DEMO_CHAT_SESSION)
    await settle(pilot)
    for row in app.query(LedgerRow):
        row.collapsed = False
    await settle(pilot)
    await press(pilot, "e")  # the facts list, its first fact highlighted


Scene = Callable[[Pilot[Any]], Awaitable[None]]


async def usage(pilot: Pilot[Any]) -> None:
    """The usage pane on the demo's days, the newest day's figures under the chart."""
    await press(pilot, "f8")


SCENES: list[tuple[str, Scene]] = [
    ("sessions-and-transcript", lambda pilot: press(pilot, "down", "down", "down", "enter")),
    ("live-search", lambda pilot: press(pilot, "ctrl+f", *"sidebar")),
    ("search-hit-opened", lambda pilot: press(pilot, "ctrl+f", *"soft threshold", "enter")),
    ("memory-editor", lambda pilot: press(pilot, "f5")),
    ("chat", lambda pilot: press(pilot, "enter", "r", "/", "c", "o")),
    ("compaction", compaction),
    ("usage", usage),
    ("help", lambda pilot: press(pilot, "f1")),
    ("command-palette", lambda pilot: press(pilot, "ctrl+p")),
]


async def shoot(
    path: Path,
    out: Path,
    name: str,
    scene: Scene,
    theme: str | None,
    size: tuple[int, int] = SIZE,
) -> Path:
    home = Home.open(path)
    app: ClawbackApp = make_app(home, watch=False)
    try:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            if theme:
                app.theme = theme
            await scene(pilot)
            return Path(app.save_screenshot(f"{name}.svg", str(out)))
    finally:
        home.close()


async def main(out: Path) -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    panes.usage.today = lambda: date(2026, 11, 24)  # the usage pane's periods end here
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="clawback-screens-") as folder:
        home = build_demo_home(Path(folder) / "home")
        for name, scene in SCENES:
            print(await shoot(home, out, name, scene, None))
        light = SCENES[0][1]
        print(await shoot(home, out, "theme-light", light, "clawback-light"))
        print(await shoot(home, out, "theme-dusk", light, "clawback-dusk"))
        opened = SCENES[0][1]
        print(await shoot(home, out, "small-terminal", opened, None, SMALL))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd() / "screenshots"))
