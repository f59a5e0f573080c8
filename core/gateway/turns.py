"""A chat's turn on the engine's thread, as the gateway's loop sees it.

The engine runs on a thread of its own (:class:`~clawback.core.chat.host.EngineHost`); the
gateway's loop hands it a turn with :func:`run_turn` and keeps a :class:`TurnHandle` that
``/stop`` and shutdown cancel through, before the turn exists on that thread or while it runs.
"""

from __future__ import annotations

import threading

from clawback.core.chat.engine import ChatEngine, ChatTurn, Notice
from clawback.core.chat.events import ApiRetrying, TurnOutcome

__all__ = ["TurnHandle", "run_turn"]


class TurnHandle:
    """Cancels one chat's turn from any thread, whether or not it has started yet."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turn: ChatTurn | None = None
        self._cancelled = False

    def attach(self, turn: ChatTurn) -> None:
        """Called on the engine's thread once the turn exists; cancels it if asked already."""
        with self._lock:
            self._turn = turn
            cancelled = self._cancelled
        if cancelled:
            turn.cancel()

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            turn = self._turn
        if turn is not None:
            turn.cancel()


async def run_turn(
    engine: ChatEngine, text: str, key: str, handle: TurnHandle
) -> tuple[list[str], TurnOutcome | None]:
    """One turn, run on the engine's thread: the notices worth passing on, and its outcome."""
    notes: list[str] = []
    turn = engine.turn(text, key=key)
    handle.attach(turn)
    async for event in turn:
        if isinstance(event, Notice) and not isinstance(event, ApiRetrying):
            notes.append(event.text)
    return notes, turn.outcome
