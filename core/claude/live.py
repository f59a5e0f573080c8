"""One long-lived ``claude`` process that takes a conversation's turns one at a time.

``claude -p --input-format stream-json`` reads one user turn per stdin line and answers each
with the same stream-json lines a one-shot call prints, then waits for the next; every request
it sends extends the one before, so the API's prompt cache serves the conversation so far. The
details, and what the real CLI does (an interrupt, an error mid-conversation): ``docs/chat.md``.

:class:`LiveClaude` starts the process (the runner's contained argv, ``live=True``), feeds a turn
and yields its events as :meth:`ClaudeRunner.stream <clawback.core.claude.runner.ClaudeRunner.
stream>` does, with the same errors. A turn that fails in any way stops the process: what it
holds may then differ from what the caller recorded, so it is never reused. A cancelled turn is
interrupted (the CLI keeps what it streamed and goes on), and stopped if the interrupt does not
land in time. A :class:`~clawback.core.claude.watchdog.Watchdog` stops the process group if
this process dies without closing it.

It must never run two turns at once, never put a turn on the command line, and never leave a
process group running after :meth:`LiveClaude.close`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import AsyncGenerator, Mapping
from dataclasses import replace

from clawback.core.claude.errors import (
    ClaudeBadOutput,
    ClaudeCancelled,
    ClaudeError,
    ClaudeGone,
    ClaudeKilled,
    ClaudeTimeout,
    error_for_result,
)
from clawback.core.claude.events import (
    AssistantMessage,
    Event,
    Result,
    TextDelta,
    UnparseableOutput,
    parse_stream_line,
)
from clawback.core.claude.mcp import McpTools
from clawback.core.claude.process import (
    STDERR_TAIL_BYTES,
    LineTooLong,
    ResultSeen,
    drain_tail,
    read_lines,
    settle_pipes,
    stderr_tail,
    stop_group,
)
from clawback.core.claude.reply import ReplyReader
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.claude.watchdog import Watchdog

__all__ = ["INTERRUPT_GRACE_SECONDS", "LiveClaude"]

INTERRUPT_GRACE_SECONDS = 5.0  # a cancelled reply's interrupt must land within this, else kill
EXIT_GRACE_SECONDS = 2.0  # an idle CLI exits within milliseconds of its stdin's end
_EOF = object()
_request_ids = itertools.count(1)


class LiveClaude:
    """A ``claude`` process fed turn by turn. :meth:`start`, then :meth:`turn` as often as
    wanted (one at a time), then :meth:`close`.

    ``runner`` gives the command, its containment, the working folder, the environment and the
    per-turn time limit; ``system_prompt``, ``model`` and ``tools`` are fixed for the process's
    life (another model or prompt is another process).
    """

    def __init__(
        self,
        runner: ClaudeRunner,
        *,
        system_prompt: str,
        model: str | None = None,
        tools: McpTools | None = None,
        watchdog: Watchdog | None = None,
        interrupt_grace: float = INTERRUPT_GRACE_SECONDS,
    ) -> None:
        self.runner = runner
        self.system_prompt = system_prompt
        self.model = model
        self.tools = tools
        self.watchdog = watchdog
        self.interrupt_grace = interrupt_grace
        self.turns = 0  # turns answered in full
        self.last_used = 0.0  # loop time the last turn ended
        self._proc: asyncio.subprocess.Process | None = None
        self._lines: asyncio.Queue[object] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._stderr: asyncio.Task[bytes] | None = None
        self._prompt_file: str | None = None
        self._busy = False
        self._closed = False
        self._eof = False
        self._cost = 0.0  # the CLI's total_cost_usd adds up every turn; a turn's is the rise

    # -- state ----------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        """Started, not closed, and its process still running with stdout open."""
        proc = self._proc
        return proc is not None and not self._closed and not self._eof and proc.returncode is None

    @property
    def busy(self) -> bool:
        return self._busy

    # -- life -----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the process; errors are the runner's (:class:`ClaudeNotFound`, ...)."""
        if self._proc is not None:
            raise RuntimeError("a LiveClaude is started once")
        runner = self.runner
        executable = runner.executable()
        cwd = runner.working_directory()
        self._prompt_file = runner.system_prompt_file(self.system_prompt, cwd)
        argv = runner.build_argv(
            executable,
            system_prompt=self.system_prompt,
            model=self.model,
            system_prompt_file=self._prompt_file,
            tools=self.tools,
            live=True,
        )
        try:
            self._proc = await runner.spawn(argv, cwd, live=True)
        except BaseException:
            self._forget_prompt_file()
            self._closed = True
            raise
        if self.watchdog is not None:
            self.watchdog.watch(self._proc.pid)
        self._reader = asyncio.ensure_future(self._read_stdout())
        self._stderr = asyncio.ensure_future(drain_tail(self._proc.stderr, STDERR_TAIL_BYTES))
        self.last_used = asyncio.get_running_loop().time()

    async def close(self) -> None:
        """End the process: its stdin closed (an idle CLI exits at once), then its whole group
        stopped. Safe to call twice, and while nothing was started."""
        if self._closed and self._proc is None:
            return
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is None:
            self._forget_prompt_file()
            return
        try:
            if proc.stdin is not None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
                    proc.stdin.close()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(EXIT_GRACE_SECONDS):
                    await proc.wait()
        finally:
            await self._stop(proc, clean=proc.returncode is not None)

    async def _stop(self, proc: asyncio.subprocess.Process, *, clean: bool) -> None:
        """Stop ``proc``'s group and settle its pipes and tasks; forget it in the watchdog."""
        try:
            await stop_group(proc, clean, self.runner.kill_grace)
            if self._stderr is not None:
                await settle_pipes(proc, self._stderr)
        finally:
            for task in (self._reader, self._stderr):
                if task is not None:
                    task.cancel()
            await asyncio.gather(
                *(t for t in (self._reader, self._stderr) if t is not None),
                return_exceptions=True,
            )
            if self.watchdog is not None:
                self.watchdog.release(proc.pid)
            self._forget_prompt_file()

    def _forget_prompt_file(self) -> None:
        if self._prompt_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._prompt_file)
            self._prompt_file = None

    async def _kill(self) -> None:
        """Stop the process now (a failed turn): it is never reused."""
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is not None:
            await self._stop(proc, clean=False)

    async def _read_stdout(self) -> None:
        """Every stdout line into the queue, then the end (or the line that was too long)."""
        assert self._proc is not None
        try:
            async for line in read_lines(self._proc, None, ResultSeen()):
                self._lines.put_nowait(line)
        except LineTooLong as exc:
            self._lines.put_nowait(exc)
        finally:
            self._eof = True  # stdout ended: the process is gone (or going), between turns too
            self._lines.put_nowait(_EOF)

    # -- a turn ---------------------------------------------------------------------------------

    async def turn(self, content: str) -> AsyncGenerator[Event, None]:
        """Send ``content`` as the next user turn and yield its events; the last is the
        :class:`Result`, whose ``total_cost_usd`` is this turn's alone.

        Errors raise as :meth:`ClaudeRunner.stream` raises them, and stop the process. Cancel
        the iterating task (or close the iterator) to stop the reply: the partial text comes
        with the :class:`ClaudeCancelled`, and the process stays if the interrupt landed.
        """
        if self._busy:
            raise RuntimeError("a LiveClaude runs one turn at a time")
        if not self.alive:
            raise ClaudeGone(self._returncode(), await self._stderr_tail())
        self._busy = True
        streamed: list[str] = []
        settled = False
        try:
            await self._write({"type": "user", "message": {"role": "user", "content": content}})
            async with contextlib.aclosing(self._read_turn(streamed)) as events:
                async for event in events:
                    yield event
            settled = True
        except asyncio.CancelledError:
            settled = True
            kept = await self._interrupt(streamed)
            raise ClaudeCancelled(partial_text=kept) from None
        except ClaudeError:
            settled = True
            await self._kill()
            raise
        finally:
            if not settled:  # closed early by its consumer: the reply is still running
                await self._interrupt(streamed)
            self._busy = False
            self.last_used = asyncio.get_running_loop().time()

    async def _read_turn(self, streamed: list[str]) -> AsyncGenerator[Event, None]:
        loop = asyncio.get_running_loop()
        timeout = self.runner.timeout
        deadline = loop.time() + timeout if timeout is not None else None
        reply = ReplyReader(streamed)
        heard = False  # a line of this turn came: the process had read it
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    item = await self._lines.get()
            except TimeoutError:
                raise ClaudeTimeout(timeout or 0.0, partial_text=reply.partial) from None
            if item is _EOF:
                self._eof = True
                partial = reply.partial
                if reply.first_garbage is not None:
                    raise ClaudeBadOutput(reply.first_garbage, partial_text=partial)
                ended = ClaudeKilled if heard else ClaudeGone
                raise ended(await self._exit_status(), await self._stderr_tail(),
                            partial_text=partial)  # fmt: skip
            heard = True
            if isinstance(item, LineTooLong):
                raise reply.too_long(item.start)
            assert isinstance(item, str)
            event = reply.read(item)
            if event is None:
                continue
            if isinstance(event, Result):
                event = self._own_cost(event)
                if event.is_error:
                    raise await self.runner.explain(error_for_result(event, reply.partial))
                self.turns += 1
                yield event
                return
            yield event

    def _own_cost(self, result: Result) -> Result:
        """The result with this turn's cost: the CLI reports the process's running total."""
        total = result.total_cost_usd
        own = max(0.0, total - self._cost)
        self._cost = max(self._cost, total)
        return replace(result, total_cost_usd=own)

    async def _interrupt(self, streamed: list[str]) -> str:
        """Stop the reply in flight; the reply text the CLI keeps of it.

        A ``control_request`` interrupt makes the CLI end the turn (``error_during_execution``)
        and keep the process for the next one. If it does not answer within the grace, or
        anything else comes instead, the process is stopped.
        """
        kept = "".join(streamed)
        if not self.alive:
            await self._kill()
            return kept
        request = {"type": "control_request", "request_id": f"clawback-{next(_request_ids)}",
                   "request": {"subtype": "interrupt"}}  # fmt: skip
        landed = False
        try:
            await self._write(request)
            async with asyncio.timeout(self.interrupt_grace):
                while True:
                    item = await self._lines.get()
                    if item is _EOF or isinstance(item, LineTooLong):
                        self._eof = True
                        break
                    with contextlib.suppress(UnparseableOutput):
                        event = parse_stream_line(item)  # type: ignore[arg-type]
                        if isinstance(event, TextDelta):
                            kept += event.text
                        elif isinstance(event, AssistantMessage) and event.aborted:
                            kept = event.text or kept  # what the CLI holds of the reply
                        elif isinstance(event, Result):
                            self._own_cost(event)
                            landed = True
                            break
        except (TimeoutError, ClaudeError, asyncio.CancelledError):
            landed = False
        if not landed:
            await self._kill()
        return kept

    async def _write(self, obj: Mapping[str, object]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise ClaudeGone(self._returncode(), await self._stderr_tail())
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            proc.stdin.write(line.encode("utf-8"))
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._eof = True
            raise ClaudeGone(await self._exit_status(), await self._stderr_tail()) from exc

    # -- what a dead process said ----------------------------------------------------------------

    def _returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    async def _exit_status(self) -> int | None:
        proc = self._proc
        if proc is None:
            return None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EXIT_GRACE_SECONDS):
                return await proc.wait()
        return proc.returncode

    async def _stderr_tail(self) -> str:
        return await stderr_tail(self._stderr) if self._stderr is not None else ""
