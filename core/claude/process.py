"""One ``claude`` child process, handled at the level of bytes and signals: its stdin fed, its
stdout split into lines under a deadline and a line-length cap, its stderr drained, its exit
waited for, and its whole process group stopped.

Apart from :mod:`clawback.core.claude.runner` because this is what changes when the operating
system's side does (pipes, timeouts, signals), not when the CLI's output or flags do. Nothing
here knows what a line means. It must never leave a pipe undrained (a full pipe blocks the
child) nor a process group running after :func:`stop_group`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncGenerator

READ_CHUNK = 1 << 16
STDERR_TAIL_BYTES = 4096
# How long the CLI may linger after its result line, closing stdout and exiting together:
# the reply is complete by then, so a lingering process only costs the user time.
AFTER_RESULT_SECONDS = 1.5
MAX_LINE_BYTES = 16 * 1024 * 1024  # a reply line is a few hundred KB; more is not claude's JSON
PIPES_SETTLE_SECONDS = 0.5  # a stopped group's pipes end at once; never wait long for them


class Expired(Exception):
    """Our own deadline passed (kept apart from the caller's cancellation)."""


class LineTooLong(Exception):
    """stdout held more than ``MAX_LINE_BYTES`` without a newline."""

    def __init__(self, start: bytes) -> None:
        super().__init__("line too long")
        self.start = start


class ResultSeen:
    """Set once the result line has come, so the reader stops waiting on a lingering process.

    ``deadline`` is when the process must have closed stdout *and* exited: one grace period
    for both, not one each.
    """

    def __init__(self) -> None:
        self._set = False
        self.deadline: float | None = None

    def set(self) -> None:
        if not self._set:
            self._set = True
            self.deadline = asyncio.get_running_loop().time() + AFTER_RESULT_SECONDS

    def __bool__(self) -> bool:
        return self._set

    def earliest(self, deadline: float | None) -> float | None:
        """The sooner of ``deadline`` and the grace period after the result."""
        if self.deadline is None:
            return deadline
        return self.deadline if deadline is None else min(deadline, self.deadline)


def signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def feed_stdin(stdin: asyncio.StreamWriter | None, data: bytes) -> None:
    if stdin is None:
        return
    try:
        stdin.write(data)
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the process died early; its exit status tells the story
    finally:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
            stdin.close()


async def drain_tail(stream: asyncio.StreamReader | None, keep: int) -> bytes:
    """Read a stream to its end (so the pipe never fills), keeping only its last bytes."""
    if stream is None:
        return b""
    tail = b""
    while chunk := await stream.read(READ_CHUNK):
        tail = (tail + chunk)[-keep:]
    return tail


async def read_lines(
    proc: asyncio.subprocess.Process, deadline: float | None, finished: ResultSeen
) -> AsyncGenerator[str, None]:
    """Split stdout into lines, honouring the deadline.

    A line may be long, but not endless: past ``MAX_LINE_BYTES`` without a newline the call
    fails at once (each chunk is searched for a newline once, so this is linear). Once the
    result line has come, the process gets a moment to close stdout; after that the reading
    stops without an error.
    """
    assert proc.stdout is not None
    buffer = bytearray()
    while True:
        try:
            async with asyncio.timeout_at(finished.earliest(deadline)):
                chunk = await proc.stdout.read(READ_CHUNK)
        except TimeoutError:
            if finished:
                return
            raise Expired from None
        if not chunk:
            break
        if b"\n" not in chunk:  # the common case of a long line: no re-splitting
            buffer += chunk
            if len(buffer) > MAX_LINE_BYTES:
                raise LineTooLong(bytes(buffer[:200]))
            continue
        *lines, rest = (bytes(buffer) + chunk).split(b"\n")
        buffer = bytearray(rest)
        for raw in lines:
            yield raw.decode("utf-8", errors="replace")
    if buffer.strip():
        yield buffer.decode("utf-8", errors="replace")


async def wait_exit(
    proc: asyncio.subprocess.Process, deadline: float | None, finished: ResultSeen
) -> int | None:
    """Wait for the exit status; a finished call only gets what is left of its grace."""
    try:
        async with asyncio.timeout_at(finished.earliest(deadline)):
            return await proc.wait()
    except TimeoutError:
        if finished:
            return None
        raise Expired from None


async def stderr_tail(task: asyncio.Future[bytes]) -> str:
    """What the drained stderr ended with, waiting at most a second for it."""
    try:
        async with asyncio.timeout(1.0):
            tail = await asyncio.shield(task)
    except TimeoutError:
        return ""
    return tail.decode("utf-8", errors="replace")


async def settle_pipes(proc: asyncio.subprocess.Process, stderr: asyncio.Future[bytes]) -> None:
    """Read stdout to its end and let stderr's drain finish, for at most
    :data:`PIPES_SETTLE_SECONDS`, once the process group is stopped.

    Both end at once when the group is gone. A pipe left unread is closed only when its
    transport is collected, and if an event loop has closed by then (a test's, a command's)
    Python prints "Event loop is closed" from ``BaseSubprocessTransport.__del__`` (seen once in
    a CI run after a timed-out call)."""

    async def stdout_end() -> None:
        if proc.stdout is not None:
            while await proc.stdout.read(READ_CHUNK):
                pass

    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(PIPES_SETTLE_SECONDS):
            await asyncio.gather(stdout_end(), asyncio.shield(stderr))


async def stop_group(proc: asyncio.subprocess.Process, clean: bool, kill_grace: float) -> bool:
    """Stop the whole process group: SIGTERM, then SIGKILL after ``kill_grace`` seconds.

    After a clean finish the CLI has exited; anything it left in its group gets SIGTERM.
    A cancellation that arrives meanwhile only cuts the grace period short (asyncio's child
    watcher still reaps the process); it is reported by returning True.
    """
    interrupted = False
    if proc.returncode is None:
        signal_group(proc.pid, signal.SIGTERM)
        try:
            async with asyncio.timeout(kill_grace):
                await proc.wait()
        except TimeoutError:
            pass
        except asyncio.CancelledError:
            interrupted = True
        if proc.returncode is None:
            signal_group(proc.pid, signal.SIGKILL)
            try:
                await proc.wait()
            except asyncio.CancelledError:
                interrupted = True
    signal_group(proc.pid, signal.SIGTERM if clean else signal.SIGKILL)
    return interrupted
