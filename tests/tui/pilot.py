"""Waiting helpers for Pilot tests: wait on workers and conditions, never on fixed sleeps."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.notifications import Notification, Notifications
from textual.pilot import Pilot
from textual.worker import Worker, WorkerFailed


def _busy(app: App[Any]) -> list[Worker[Any]]:
    """Running workers, except the live-update watcher, which runs until the app exits."""
    return [w for w in app.workers if w.group != "watcher" and not w.is_finished]


async def settle(pilot: Pilot[Any], rounds: int = 100, quiet: int = 3) -> None:
    """Wait until every worker has finished and what they posted is handled and painted.

    A finished worker's messages may start more work a few hops later (a page of sessions
    highlights a row, which opens its transcript), so the app must look idle ``quiet`` times
    in a row.
    """
    app = pilot.app
    idle = 0
    for _ in range(rounds):
        await pilot.pause()
        busy = _busy(app)
        if busy:
            idle = 0
            # A worker that fails has finished too: what the app makes of its failure (a
            # notification) is for the test to check. Whether it was still running when looked
            # at is timing alone, so its error must not escape here only on a busy machine.
            with contextlib.suppress(WorkerFailed):
                await app.workers.wait_for_complete(busy)
            continue
        idle += 1
        if idle >= quiet:
            await pilot.wait_for_scheduled_animations()
            return
    raise AssertionError(f"workers still running: {_busy(app)}")


async def wait_until(
    pilot: Pilot[Any], condition: Callable[[], object], timeout: float = 10.0
) -> None:
    """For events from outside the app (a file watcher): poll ``condition`` until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)
    await settle(pilot)


async def until(pilot: Pilot[Any], condition: Callable[[], object], timeout: float = 15.0) -> None:
    """Poll ``condition`` while a worker is still running (``settle`` would wait for it to end:
    a reply half-way through streaming, say)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await pilot.pause(0.02)


def every_notification(app: App[Any]) -> list[Notification]:
    """Every notification the app posts from now on, kept for the test to read.

    ``app._notifications`` drops each one once its timeout has passed, which a loaded machine
    reaches between a step and its assertion (a broken-config error read 0 of 1 that way).
    """
    seen: list[Notification] = []
    add = app._notifications.add

    def keep(notification: Notification) -> Notifications:
        seen.append(notification)
        return add(notification)

    app._notifications.add = keep  # type: ignore[method-assign]
    return seen
