"""The chat engine on a thread of its own, so a turn never blocks its host's loop.

The engine writes through one SQLite connection (transcripts fsynced, recall, indexing) and runs
asyncio subprocesses (the live ``claude`` process of each session, kept between turns),
background fact extraction included, on whatever loop it is called from. On the host's own loop
(the app's, painting; the gateway's, polling and sending) every such write would hold up
everything else, and share a connection other workers use. So the engine gets its own home
(its own connection: :func:`clawback.core.home.engine_host` opens it), in its own thread, which
runs an event loop for as long as the host does; the host awaits work there through
:meth:`EngineHost.submit` without ever blocking. Cancelling a turn (``ChatTurn.cancel``,
``EngineHost.cancel``) is safe from any thread.

Callers pass plain callbacks and get plain results (no widget, no loop object crosses over).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from clawback.core.chat.engine import ChatEngine

T = TypeVar("T")

DRAIN_SECONDS = 10.0  # background fact extraction gets this long to finish when the host quits


class EngineHost:
    """Starts the engine's thread on first use; :meth:`close` stops it (closes the live
    conversations, waits for background work up to ``DRAIN_SECONDS``).

    ``open_engine`` is entered on the thread: the engine, with what it holds (its home's
    connection) released when the thread ends."""

    def __init__(self, open_engine: Callable[[], AbstractContextManager[ChatEngine]]) -> None:
        self._open_engine = open_engine
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._engine: ChatEngine | None = None
        self._error: BaseException | None = None
        self._closed = False

    async def submit(self, work: Callable[[ChatEngine], Awaitable[T]]) -> T:
        """Run ``work(engine)`` on the engine's loop and await its result from another loop.

        Cancelling the awaiting task cancels ``work`` too (a turn then keeps its partial reply).
        """
        engine, loop = await self._started()
        future = asyncio.run_coroutine_threadsafe(_call(work, engine), loop)
        return await asyncio.wrap_future(future)

    async def call(self, work: Callable[[ChatEngine], T]) -> T:
        """Run a plain function on the engine's thread (its SQLite connection lives there)."""

        async def run(engine: ChatEngine) -> T:
            return work(engine)

        return await self.submit(run)

    def cancel(self) -> None:
        """Cancel every running turn; safe from any thread, a no-op before the first turn."""
        if self._engine is not None:
            self._engine.cancel()

    def close(self) -> None:
        """Stop the thread: live ``claude`` processes closed, background work drained. Blocks
        (up to ``DRAIN_SECONDS`` and a little): from a loop, run it in a thread."""
        self._closed = True
        thread = self._thread
        if thread is None:
            return
        self._ready.wait(DRAIN_SECONDS)  # started a moment ago: its loop is about to exist
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # closed already: the home did not open
                loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=DRAIN_SECONDS + 5)

    # -- the thread -----------------------------------------------------------------------------

    async def _started(self) -> tuple[ChatEngine, asyncio.AbstractEventLoop]:
        if self._closed:
            raise RuntimeError("the chat engine has stopped")
        if self._thread is None:
            self._thread = threading.Thread(target=self._main, name="clawback-chat", daemon=True)
            self._thread.start()
        if not self._ready.is_set():
            await asyncio.to_thread(self._ready.wait)
        if self._error is not None:
            raise self._error
        assert self._engine is not None and self._loop is not None
        return self._engine, self._loop

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        held = contextlib.ExitStack()
        try:
            self._engine = held.enter_context(self._open_engine())
        except BaseException as exc:  # surfaces in the first submit
            self._error = exc
        self._loop = loop
        self._ready.set()
        try:
            if self._error is None:
                loop.run_forever()
                loop.run_until_complete(self._drain())
        finally:
            held.close()
            loop.close()

    async def _drain(self) -> None:
        if self._engine is not None:  # the live claude processes end with the host
            await self._engine.aclose()
        drain = getattr(getattr(self._engine, "hooks", None), "drain", None)
        if drain is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(drain(), DRAIN_SECONDS)
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def _call(work: Callable[[ChatEngine], Awaitable[T]], engine: ChatEngine) -> T:
    return await work(engine)
