"""Turns in order per chat, concurrent across chats up to a bound, with a debounce window.

Each chat has one lane: a queue worked by one task, so a message that arrives while its chat's
turn runs waits for it, and turns run in arrival order. Messages from the same sender that
follow each other within ``debounce_s`` become one batch (one turn); a command is always a
batch of its own. At most ``limit`` batches run at once across all chats. This module schedules;
what a batch does is the ``run`` callback's business, and a failure there never stops a lane.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from clawback.core.gateway.store import InboxEntry

__all__ = ["Lanes", "next_batch"]

log = logging.getLogger(__name__)


def next_batch(queue: list[InboxEntry], debounce_s: float) -> list[InboxEntry]:
    """The entries at the head of ``queue`` that make one turn: consecutive messages of one
    sender, each within ``debounce_s`` of the one before; a command or an entry whose reply is
    stored already (to be sent, not run) stands alone or with entries sharing that reply."""
    first = queue[0]
    batch = [first]
    if first.command:
        return batch
    for entry in queue[1:]:
        if first.reply is not None:
            if entry.reply != first.reply:
                break
        elif (
            entry.command
            or entry.reply is not None
            or entry.sender_id != first.sender_id
            or entry.at - batch[-1].at >= debounce_s
        ):
            break
        batch.append(entry)
    return batch


@dataclass
class _Lane:
    queue: list[InboxEntry] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class Lanes:
    """One ordered lane per chat; ``run(batch)`` does a batch's turn and its reply."""

    def __init__(
        self,
        run: Callable[[list[InboxEntry]], Awaitable[None]],
        *,
        debounce_s: float,
        limit: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.run = run
        self.debounce_s = debounce_s
        self.slots = asyncio.Semaphore(max(1, limit))
        self.clock = clock
        self.lanes: dict[int, _Lane] = {}
        self.busy: set[int] = set()  # chats whose batch is running now

    def submit(self, entry: InboxEntry) -> None:
        lane = self.lanes.setdefault(entry.chat_id, _Lane())
        lane.queue.append(entry)
        lane.wake.set()
        if lane.task is None or lane.task.done():
            lane.task = asyncio.create_task(self._work(entry.chat_id, lane))

    def waiting(self) -> int:
        """Entries queued and not yet running, across every chat."""
        return sum(len(lane.queue) for lane in self.lanes.values())

    async def _work(self, chat_id: int, lane: _Lane) -> None:
        while lane.queue:
            batch = next_batch(lane.queue, self.debounce_s)
            last = batch[-1]
            if not last.command and last.reply is None and len(batch) == len(lane.queue):
                # Nothing after the batch yet: the sender may still be typing.
                wait = last.at + self.debounce_s - self.clock()
                if wait > 0:
                    lane.wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(lane.wake.wait(), wait)
                    continue
            del lane.queue[: len(batch)]
            async with self.slots:
                self.busy.add(chat_id)
                try:
                    await self.run(batch)
                except asyncio.CancelledError:
                    raise
                except Exception:  # the entries stay open in the inbox: answered on restart
                    log.exception("a gateway turn failed in chat %s", chat_id)
                finally:
                    self.busy.discard(chat_id)
        self.lanes.pop(chat_id, None)

    async def close(self) -> None:
        """Stop every lane now; what was queued stays open in the inbox."""
        tasks = [lane.task for lane in self.lanes.values() if lane.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.lanes.clear()

    async def idle(self) -> None:
        """Wait until every lane has emptied (tests and the bench)."""
        while any(lane.task is not None and not lane.task.done() for lane in self.lanes.values()):
            await asyncio.sleep(0.01)
