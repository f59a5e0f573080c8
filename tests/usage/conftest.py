"""Time zones for usage tests: days are the person's local days, so tests pick the zone."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest


@pytest.fixture
def zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """``zone("Asia/Kolkata")`` makes that the local time zone (Python's and SQLite's)."""

    def use(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield use
    monkeypatch.undo()
    time.tzset()
