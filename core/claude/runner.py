"""Run one chat turn through the user's own ``claude`` CLI (Claude Code print mode).

clawback has no API key of its own: every turn is a ``claude -p`` subprocess, prompt on stdin, reply
read line by line from ``--output-format stream-json`` and turned into typed events by
:mod:`clawback.core.claude.events`. Every way that can fail (no CLI, not logged in, an API error,
garbage on stdout, a crash, a hang, the caller giving up) ends in one :class:`ClaudeError` subclass
with a message written for the user, carrying whatever reply text had already streamed. Structured
calls (``--json-schema``) use the same stream: the CLI puts ``structured_output`` in its result
line there too.

The exceptions live in :mod:`clawback.core.claude.errors`.

This module must never run the CLI through a shell, never put the prompt on the command line (it
goes on stdin), never pass ``--bare`` on its own (it would ignore the user's ``claude /login``), and
never leave a process behind: each call runs in its own process group, which is stopped on every
way out (after a clean finish, only whatever the CLI left running in it). The bytes-and-signals
side of the child process lives in :mod:`clawback.core.claude.process`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import shutil
import tempfile
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawback.core.claude.errors import (
    CLAUDE_ENV,
    ClaudeAPIError,
    ClaudeBadOutput,
    ClaudeBareNotLoggedIn,
    ClaudeCancelled,
    ClaudeError,
    ClaudeKilled,
    ClaudeNotFound,
    ClaudeNotLoggedIn,
    ClaudeTimeout,
    error_for_result,
)
from clawback.core.claude.events import (
    AssistantMessage,
    Event,
    Result,
    TextDelta,
    Usage,
)
from clawback.core.claude.mcp import McpTools
from clawback.core.claude.process import (
    STDERR_TAIL_BYTES,
    Expired,
    LineTooLong,
    ResultSeen,
    drain_tail,
    feed_stdin,
    read_lines,
    settle_pipes,
    stderr_tail,
    stop_group,
    wait_exit,
)
from clawback.core.claude.reply import ReplyReader
from clawback.core.config import ChatConfig
from clawback.core.paths import Paths, ensure_private_dir

__all__ = ["CONTAINED_ENV", "CONTAINED_FLAGS", "ClaudeRunner", "TurnResult"]


_MAX_ARG_BYTES = 100_000  # Linux refuses a single argument over 128 KiB; use a file above this
# Every call runs contained: no transcript under ~/.claude/projects, none of the user's MCP
# servers (only what the call passes), none of the user's hooks (a clawback hook inside Claude
# Code would otherwise fire again inside clawback's own calls, and recurse).
NO_HOOKS_SETTINGS = '{"disableAllHooks": true}'
CONTAINED_FLAGS = (
    "--no-session-persistence",
    "--strict-mcp-config",
    "--settings",
    NO_HOOKS_SETTINGS,
)
# What ``--bare`` skips that a flag cannot: the user's CLAUDE.md files and Claude Code's own auto
# memory. clawback passes its context itself, so a call reads the same with or without --bare
# (and the bare default Claude Code announces for -p changes nothing but the login it reads).
CONTAINED_ENV = {"CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
# A live conversation's own compaction is clawback's (a summary in the transcript, then a fresh
# process): Claude Code must not compact its copy behind the transcript's back.
LIVE_ENV = {"DISABLE_AUTO_COMPACT": "1"}


@dataclass(frozen=True)
class TurnResult:
    """One finished call, collected by :meth:`ClaudeRunner.run`.

    ``reply`` is the CLI's final text; ``partial`` the text as it streamed (the same on success,
    kept because it is what the user saw).
    """

    reply: str
    partial: str
    usage: Usage
    model: str | None
    context_window: int | None
    cost: float
    is_error: bool
    session_id: str | None = None
    structured_output: Any = None
    num_turns: int = 0
    duration_ms: int | None = None
    result: Result | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_result(cls, result: Result, partial: str = "") -> TurnResult:
        return cls(
            reply=result.reply,
            partial=partial,
            usage=result.usage,
            model=result.model,
            context_window=result.context_window,
            cost=result.total_cost_usd,
            is_error=result.is_error,
            session_id=result.session_id,
            structured_output=result.structured_output,
            num_turns=result.num_turns,
            duration_ms=result.duration_ms,
            result=result,
        )


# --------------------------------------------------------------------------------------- runner


class ClaudeRunner:
    """Runs ``claude -p`` for one prompt at a time; safe to share, each call is its own process.

    ``command`` is the configured executable (``$CLAWBACK_CLAUDE`` overrides it), ``extra_args`` go
    after clawback's own flags, ``model`` is the default for calls that name none, ``timeout`` is
    the most seconds one call may take (``None``: no limit), ``env`` is added to the inherited
    environment, ``cwd`` is where the CLI starts (it reads ``CLAUDE.md`` from there), by default
    a private empty folder in the clawback home. ``kill_grace`` is how long a stopped process gets
    between SIGTERM and SIGKILL.
    """

    def __init__(
        self,
        command: str = "claude",
        *,
        extra_args: Sequence[str] = (),
        model: str | None = None,
        timeout: float | None = 300.0,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        kill_grace: float = 2.0,
    ) -> None:
        self.command = command
        self.extra_args = list(extra_args)
        self.model = model or None
        self.timeout = timeout
        self.env = dict(env or {})
        self.cwd = Path(cwd) if cwd is not None else None
        self.kill_grace = kill_grace

    @classmethod
    def from_config(
        cls,
        chat: ChatConfig,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ClaudeRunner:
        """A runner for the ``[chat]`` section of the config."""
        return cls(
            chat.claude_command,
            extra_args=chat.extra_args,
            model=chat.model or None,
            timeout=float(chat.timeout_seconds) if chat.timeout_seconds > 0 else None,
            env=env,
            cwd=cwd,
        )

    # -- the command ------------------------------------------------------------------------

    def child_env(self, *, live: bool = False) -> dict[str, str]:
        """The inherited environment, contained (:data:`CONTAINED_ENV`), plus ``env``."""
        return {**os.environ, **CONTAINED_ENV, **(LIVE_ENV if live else {}), **self.env}

    def executable(self) -> str:
        """The full path of the ``claude`` to run, or :class:`ClaudeNotFound`."""
        wanted = os.path.expanduser(os.environ.get(CLAUDE_ENV) or self.command)
        found = shutil.which(wanted, path=self.child_env().get("PATH"))
        if found is None:
            reason = "no such executable" if os.sep in wanted else "not found on PATH"
            raise ClaudeNotFound(wanted, reason)
        return os.path.abspath(found)

    def working_directory(self) -> Path:
        """Where the CLI starts: chosen on purpose, since it loads ``CLAUDE.md`` from there."""
        if self.cwd is not None:
            if not self.cwd.exists():
                ensure_private_dir(self.cwd)  # created private; an existing folder is left as is
            return self.cwd
        return ensure_private_dir(Paths.resolve().home / "claude-cwd")

    def build_argv(
        self,
        executable: str,
        *,
        system_prompt: str,
        model: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        system_prompt_file: str | None = None,
        tools: McpTools | None = None,
        live: bool = False,
    ) -> list[str]:
        """The exact argument vector of one call (no shell ever sees it).

        Every call is contained (:data:`CONTAINED_FLAGS`); ``tools`` offers MCP tools
        (clawback's memory) on top of ``--tools ""``, which removes only the built-in ones.
        ``live`` keeps the process for many turns, each a stream-json line on stdin
        (:mod:`clawback.core.claude.live`).
        """
        argv = [executable, "-p"]
        if live:
            argv += ["--input-format", "stream-json"]
        argv += [
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            *CONTAINED_FLAGS,
            "--tools",
            "",
        ]
        if system_prompt_file is not None:
            argv += ["--system-prompt-file", system_prompt_file]
        else:
            argv += ["--system-prompt", system_prompt]
        chosen = model or self.model
        if chosen:
            argv += ["--model", chosen]
        if json_schema is not None:
            argv += ["--json-schema", json.dumps(json_schema, separators=(",", ":"))]
        if tools is not None:
            argv += tools.argv()
        return argv + self.extra_args

    # -- calls ------------------------------------------------------------------------------

    async def stream(
        self,
        prompt: str,
        *,
        system_prompt: str,
        model: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        tools: McpTools | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run one call and yield its events as they arrive; the last one is a :class:`Result`.

        Failures raise a :class:`ClaudeError` subclass instead of yielding an error result. Close
        the iterator when stopping early (``contextlib.aclosing``) so the process is stopped at
        once rather than when the generator is collected.
        """
        executable = self.executable()
        cwd = self.working_directory()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout if self.timeout is not None else None
        prompt_file = self.system_prompt_file(system_prompt, cwd)
        argv = self.build_argv(
            executable,
            system_prompt=system_prompt,
            model=model,
            json_schema=json_schema,
            system_prompt_file=prompt_file,
            tools=tools,
        )
        try:
            proc = await self.spawn(argv, cwd)
            async with contextlib.aclosing(self._events(proc, prompt, deadline)) as events:
                async for event in events:
                    yield event
        finally:
            if prompt_file is not None:
                with contextlib.suppress(OSError):
                    os.unlink(prompt_file)

    @staticmethod
    def system_prompt_file(system_prompt: str, cwd: Path) -> str | None:
        """A file holding a system prompt too long for the command line (the caller removes
        it), beside the CLI's working folder in the home; ``None`` when it fits."""
        if len(system_prompt.encode()) <= _MAX_ARG_BYTES:
            return None
        fd, path = tempfile.mkstemp(prefix=".clawback-system-", suffix=".txt", dir=cwd)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(system_prompt)
        return path

    async def spawn(
        self, argv: list[str], cwd: Path, *, live: bool = False
    ) -> asyncio.subprocess.Process:
        """Start ``argv`` with its three pipes, in a process group of its own; every way it can
        fail to start is a :class:`ClaudeError` saying why."""
        try:
            return await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=self.child_env(live=live),
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            if isinstance(exc, FileNotFoundError | NotADirectoryError) and not cwd.is_dir():
                raise ClaudeError(f"The folder claude should start in is gone: {cwd}") from exc
            raise ClaudeNotFound(argv[0], exc.strerror or str(exc)) from exc
        except OSError as exc:
            if exc.errno == errno.E2BIG:
                raise ClaudeError(
                    "The claude command line is too long (the system prompt, the JSON schema "
                    "or chat.extra_args); shorten it."
                ) from exc
            raise ClaudeNotFound(argv[0], exc.strerror or str(exc)) from exc

    async def _events(
        self, proc: asyncio.subprocess.Process, prompt: str, deadline: float | None
    ) -> AsyncGenerator[Event, None]:
        """Read one running process to its end; stop its process group on every way out."""
        stdin_task = asyncio.ensure_future(feed_stdin(proc.stdin, prompt.encode("utf-8")))
        stderr_task = asyncio.ensure_future(drain_tail(proc.stderr, STDERR_TAIL_BYTES))
        reply = ReplyReader()
        result: Result | None = None
        done = ResultSeen()
        clean = cancelled = False
        try:
            async with contextlib.aclosing(read_lines(proc, deadline, done)) as lines:
                async for line in lines:
                    event = reply.read(line)
                    if event is None:
                        continue
                    if isinstance(event, Result):
                        result = event
                        done.set()
                        if result.is_error:
                            continue  # raised below, once the process has ended
                    yield event
            returncode = await wait_exit(proc, deadline, done)
            partial = reply.partial
            if result is not None:
                if result.is_error:
                    raise await self.explain(error_for_result(result, partial))
                clean = True
                return
            if reply.first_garbage is not None:
                raise ClaudeBadOutput(
                    reply.first_garbage, partial_text=partial, returncode=returncode
                )
            stderr = await stderr_tail(stderr_task)
            raise ClaudeKilled(returncode, stderr, partial_text=partial)
        except Expired:
            raise ClaudeTimeout(self.timeout or 0.0, partial_text=reply.partial) from None
        except LineTooLong as exc:
            raise reply.too_long(exc.start) from None
        except asyncio.CancelledError:
            cancelled = True
            raise ClaudeCancelled(partial_text=reply.partial) from None
        finally:
            interrupted = await stop_group(proc, clean, self.kill_grace)
            try:
                await settle_pipes(proc, stderr_task)
            except asyncio.CancelledError:
                interrupted = True
            for task in (stdin_task, stderr_task):
                task.cancel()
            try:
                await asyncio.gather(stdin_task, stderr_task, return_exceptions=True)
            except asyncio.CancelledError:
                interrupted = True
            if interrupted and not cancelled:
                # cancelled while stopping the process: report that, not what came before
                raise ClaudeCancelled(partial_text=reply.partial)

    async def run(
        self,
        prompt: str,
        *,
        system_prompt: str,
        model: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> TurnResult:
        """Run one call to the end and collect it; errors raise as in :meth:`stream`."""
        streamed: list[str] = []
        whole: list[str] = []
        result: Result | None = None
        events = self.stream(
            prompt, system_prompt=system_prompt, model=model, json_schema=json_schema
        )
        async with contextlib.aclosing(events):
            async for event in events:
                if on_event is not None:
                    on_event(event)
                if isinstance(event, TextDelta):
                    streamed.append(event.text)
                elif isinstance(event, AssistantMessage) and not event.is_api_error:
                    whole.append(event.text)
                elif isinstance(event, Result):
                    result = event
        if result is None:  # stream() raises instead; this is only a guard
            raise ClaudeBadOutput("(no result line)")
        return TurnResult.from_result(result, "".join(streamed) or "".join(whole))

    async def explain(self, error: ClaudeAPIError) -> ClaudeAPIError:
        """``error``, or for "Not logged in" from a Claude Code that is logged in (``claude auth
        status`` says so, within 10 s) the error that says the call ran bare and what to do."""
        if not isinstance(error, ClaudeNotLoggedIn):
            return error
        status = await self._auth_status()
        method = status.get("authMethod")
        if status.get("loggedIn") is True and isinstance(method, str) and method != "none":
            return ClaudeBareNotLoggedIn(error.result, method, partial_text=error.partial_text)
        return error

    async def _auth_status(self) -> dict[str, Any]:
        """``claude auth status`` (JSON), or ``{}`` when it cannot tell."""
        try:
            proc = await asyncio.create_subprocess_exec(
                self.executable(), "auth", "status",
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, cwd=self.working_directory(),
                env=self.child_env(), start_new_session=True,
            )  # fmt: skip
        except (OSError, ClaudeError):
            return {}
        try:
            async with asyncio.timeout(10):
                out, _err = await proc.communicate()
        except TimeoutError:
            return {}
        finally:
            await stop_group(proc, proc.returncode is not None, self.kill_grace)
        with contextlib.suppress(ValueError):
            found = json.loads(out.decode("utf-8", errors="replace"))
            if isinstance(found, dict):
                return found
        return {}

    async def version(self) -> str:
        """``claude --version``, e.g. ``"2.1.328 (Claude Code)"``."""
        executable = self.executable()
        try:
            proc = await asyncio.create_subprocess_exec(
                executable,
                "--version",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.working_directory(),
                env=self.child_env(),
                start_new_session=True,
            )
        except OSError as exc:
            raise ClaudeNotFound(executable, exc.strerror or str(exc)) from exc
        try:
            async with asyncio.timeout(30):
                out, err = await proc.communicate()
        except TimeoutError:
            raise ClaudeTimeout(30) from None
        finally:
            await stop_group(proc, proc.returncode == 0, self.kill_grace)
        if proc.returncode != 0:
            raise ClaudeKilled(proc.returncode, err.decode("utf-8", errors="replace"))
        return out.decode("utf-8", errors="replace").strip()
