"""Fixtures for the app's Pilot and snapshot tests, all on a private copy of the demo home."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from clawback.core.home import Home
from clawback.tui.app import ClawbackApp, make_app

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times on screen are local: pin the zone so assertions and snapshots are stable."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def tui(demo_home: Home) -> ClawbackApp:
    """The app on the demo home, without the file watcher (tests that need it build their own)."""
    return make_app(demo_home, watch=False)
