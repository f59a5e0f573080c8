"""Fixtures for the app's Pilot and snapshot tests, all on a private copy of the demo home."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.tui.app import ClawbackApp, make_app
from textual.app import App

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times on screen are local: pin the zone so assertions and snapshots are stable."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(autouse=True)
def _toasts_stay(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A toast lasts 3-10 s and then leaves ``app._notifications``, where the tests read it; a
    loaded machine can spend that long in ``settle()`` before the test looks (three tests
    failed that way under ``-n auto``, never alone). In tests a toast stays; snapshots keep
    the app's own timing, which their pictures were taken with."""
    if request.node.path.name == "test_snapshots.py":
        return
    notify = App.notify

    def staying(self: App[Any], message: str, **kwargs: Any) -> None:
        notify(self, message, **{**kwargs, "timeout": 3600})

    monkeypatch.setattr(App, "notify", staying)


@pytest.fixture
def tui(demo_home: Home) -> ClawbackApp:
    """The app on the demo home, without the file watcher (tests that need it build their own)."""
    return make_app(demo_home, watch=False)
