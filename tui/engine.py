"""The chat engine on a thread of its own, so a turn never blocks the app or shares its SQLite.

The engine writes through one SQLite connection and runs asyncio subprocesses (the live
``claude`` process of each session the app chats in, kept between turns), background fact
extraction included, on whatever loop it is called from. Running it on the app's loop would
block painting on every write and share the connection the app's ingest workers use. So the
engine gets its own ``Home`` (its own connection), opened in its own thread, which runs an
event loop for as long as the app does; the app awaits work there through :meth:`EngineHost.submit`
without ever blocking. Cancelling a turn (``EngineHost.cancel``) is safe from any thread.

This module must never touch widgets: callers pass plain callbacks and get plain results.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from clawback.core.home import Home

if TYPE_CHECKING:
    from clawback.core.chat.engine import ChatEngine
    from clawback.core.claude.runner import ClaudeRunner
    from clawback.core.memory.lifecycle import MemoryLifecycleHooks

T = TypeVar("T")

DRAIN_SECONDS = 10.0  # background fact extraction gets this long to finish when the app quits


class EngineHost:
    """Starts the engine's thread on first use; :meth:`close` stops it (waits for background
    work up to ``DRAIN_SECONDS``)."""

    def __init__(self, home: Path, runner: ClaudeRunner | None = None) -> None:
        self._home, self._runner = home, runner
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
        self._closed = True
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=DRAIN_SECONDS + 5)

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
        home: Home | None = None
        try:
            home = Home.open(self._home)
            self._engine = home.chat_engine(runner=self._runner, live=True)
        except BaseException as exc:  # surfaces in the first submit
            self._error = exc
        self._loop = loop
        self._ready.set()
        try:
            if self._error is None:
                loop.run_forever()
                loop.run_until_complete(self._drain())
        finally:
            if home is not None:
                home.close()
            loop.close()

    async def _drain(self) -> None:
        if self._engine is not None:  # the live claude processes end with the app
            await self._engine.aclose()
        hooks: MemoryLifecycleHooks | None = getattr(self._engine, "hooks", None)
        drain = getattr(hooks, "drain", None)
        if drain is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(drain(), DRAIN_SECONDS)
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def _call(work: Callable[[ChatEngine], Awaitable[T]], engine: ChatEngine) -> T:
    return await work(engine)
