"""What a newcomer meets in the app (issue 37 item 5), at 80x24 and 160x45."""

from __future__ import annotations

from clawback.tui.app import ClawbackApp
from clawback.tui.panes.transcript import TranscriptPane

from .pilot import settle

SMALL, WIDE = (80, 24), (160, 45)


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
