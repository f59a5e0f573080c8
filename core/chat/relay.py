"""The ``claude`` half of a chat turn: run its stream in a task of its own and relay it.

:class:`ReplyRelay` runs the stream (a live process's, or a one-shot ``claude -p``'s) in a task
apart from the one iterating the turn, so a cancel from any thread stops just ``claude``; it
turns what ``claude`` says into the turn's events and keeps what streamed, for a reply cut short.

It must never leave the task running once the turn is over, nor lose a cancel that lands while
``claude`` is starting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from clawback.core.chat.events import ApiRetrying, ChatEvent, ReplyDelta, ToolCalled
from clawback.core.claude import (
    ApiRetry,
    AssistantMessage,
    ClaudeCancelled,
    Result,
    SystemInit,
    TextDelta,
)
from clawback.core.formats.native import tool_call_summary

__all__ = ["ReplyRelay"]


class ReplyRelay:
    """One turn's ``claude`` stream: :meth:`relay` it, :meth:`cancel` it, :meth:`stop` it."""

    def __init__(self) -> None:
        self.cancel_requested = False
        self.streamed: list[str] = []  # the reply text so far, as it streamed
        self._pump: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def cancel(self) -> None:
        """Stop ``claude`` and keep what streamed; safe from any thread, and before it starts."""
        self.cancel_requested = True
        pump, loop = self._pump, self._loop
        if pump is not None and loop is not None and not pump.done():
            loop.call_soon_threadsafe(pump.cancel)

    async def relay(
        self,
        source: Callable[[], AsyncGenerator[Any, None]],
        on_model: Callable[[str], None],
    ) -> AsyncIterator[ChatEvent | Result]:
        """Run ``source()`` in a task of its own and yield its reply as chat events, then the
        ``Result``; ``on_model`` hears the model ``claude`` says it runs. A cancel (or the
        task's own cancellation) raises :class:`ClaudeCancelled` here."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()

        async def pump() -> None:
            try:
                events = source()
                async with contextlib.aclosing(events):
                    async for event in events:
                        queue.put_nowait(event)
                queue.put_nowait(done)
            except asyncio.CancelledError as exc:
                # also while claude was starting, before its reader makes it a ClaudeCancelled
                queue.put_nowait(exc if isinstance(exc, ClaudeCancelled) else ClaudeCancelled())
            except BaseException as exc:  # hand it to the reader
                queue.put_nowait(exc)

        def unstarted(task: asyncio.Task[None]) -> None:
            # cancelled before its first step, its body never ran to hand anything over
            if task.cancelled():
                queue.put_nowait(ClaudeCancelled())

        self._loop = asyncio.get_running_loop()
        self._pump = asyncio.create_task(pump())
        self._pump.add_done_callback(unstarted)
        if self.cancel_requested:  # from another thread, since the last check before claude
            self._pump.cancel()
        saw_delta = False
        while True:
            item = await queue.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, TextDelta):
                saw_delta = True
                self.streamed.append(item.text)
                yield ReplyDelta(item.text)
            elif isinstance(item, AssistantMessage):
                if not item.is_api_error and not saw_delta and item.text:
                    self.streamed.append(item.text)
                    yield ReplyDelta(item.text)
                for call in item.tool_calls:
                    summary = tool_call_summary(call.name, call.input)
                    yield ToolCalled(call.name, dict(call.input), summary)
            elif isinstance(item, SystemInit):
                if item.model:
                    on_model(item.model)
            elif isinstance(item, ApiRetry):
                yield _retrying(item)
            elif isinstance(item, Result):
                yield item

    async def stop(self) -> None:
        """Cancel the task if it still runs and wait for it, even if cancelled meanwhile."""
        pump = self._pump
        if pump is None or pump.done():
            return
        pump.cancel()
        try:
            await asyncio.shield(pump)
        except asyncio.CancelledError:
            # cancelled again while the process was being stopped: wait for it regardless
            with contextlib.suppress(BaseException):
                await pump
            raise


def _retrying(retry: ApiRetry) -> ApiRetrying:
    status = f" ({retry.error_status})" if retry.error_status else ""
    return ApiRetrying(
        f"claude is retrying the API{status}: attempt {retry.attempt} of {retry.max_retries}",
        retry.attempt,
        retry.max_retries,
        retry.error_status,
    )
