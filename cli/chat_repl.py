"""``clawback chat`` on a terminal without a MESSAGE: one conversation kept open.

A prompt, replies streaming as they come, the chat's commands (``/new``, ``/reset``, ``/label``,
``/model``, ``/flush``, ``/compact``, ``/help``), the tokens each turn cost and the session's
so far; Ctrl+C stops a reply (what came of it is kept) or clears the line, Ctrl+D quits.
The turns run on an event loop in a thread of its own, through live conversations (the
session's ``claude`` process is kept between turns and ends with the REPL); this thread only
reads lines and prints, so Ctrl+C reaches it whether it waits for a line or for a reply.

This module only reads lines and prints: the engine decides everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

import click
from clawback.cli.compact import print_compaction
from clawback.cli.flush import print_flush
from clawback.cli.output import err, escape
from clawback.core.chat.engine import (
    ChatEngine,
    ChatEvent,
    ChatTarget,
    Notice,
    ReplyDelta,
    SessionChanged,
    ToolCalled,
    TurnOutcome,
)
from clawback.core.chat.policy import CHAT_COMMANDS, chat_command, local_session_key
from clawback.core.chat.sessions import ChatSession
from clawback.core.chat.spend import SessionSpend, describe_turn
from clawback.core.claude import ClaudeError
from clawback.core.errors import ClawbackError
from clawback.core.memory import MemoryLifecycleHooks

T = TypeVar("T")

PROMPT = "› "
PASTE_SECONDS = 0.03  # lines that arrive this close together are one pasted message
QUIT_WORDS = ("/quit", "/exit")
HELP = "\n".join(
    [
        *(line for name, line in CHAT_COMMANDS.items()),
        "/quit: leave (as Ctrl+D does)",
        "Ctrl+C stops a reply (what came of it is kept) or clears the line · Ctrl+D quits",
    ]
)


class _LoopThread:
    """An event loop running in a thread of its own for as long as the REPL does."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="clawback-repl")
        self._thread.daemon = True
        self._thread.start()

    def submit(self, work: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(work, self.loop)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return self.submit(work).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        if not self._thread.is_alive():
            self.loop.close()


class Repl:
    """One REPL over ``engine`` (built with ``live=True``), starting at ``target``."""

    def __init__(
        self, engine: ChatEngine, target: ChatTarget, model: str | None, *, new: bool = False
    ) -> None:
        self.engine = engine
        self.start_new = new
        self.key = target.key
        self.session_id = target.session_id
        self.model = model
        self.spend: SessionSpend | None = None  # the current session's figures so far
        self.put_back = ""  # a failed turn's message, offered again at the next prompt
        self._loop = _LoopThread()

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> int:
        """Read and answer until Ctrl+D (or /quit); the exit status."""
        _enable_line_editing()
        self._restore_terms()
        try:
            if self.start_new:
                self._turn("/new")
            session = self._session()
            where = "a new session"
            if session is not None:
                where = f"session {session.id[:8]} ({escape(session.key)})"
            err.print(
                f"[dim]clawback chat · {where} · /help lists the commands · Ctrl+C stops a"
                " reply · Ctrl+D quits[/]"
            )
            while True:
                try:
                    text = self._read()
                except EOFError:
                    click.echo("", err=True)
                    return 0
                except KeyboardInterrupt:
                    click.echo("", err=True)
                    continue
                if not text.strip():
                    continue
                if text.strip().lower() in QUIT_WORDS:
                    return 0
                self._handle(text)
        finally:
            self._close()

    def _restore_terms(self) -> None:
        """SIGTERM and SIGHUP end the REPL as Ctrl+D does: its claude processes end with it."""

        def leave(signum: int, _frame: Any) -> None:
            raise SystemExit(128 + signum)

        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, leave)

    def _close(self) -> None:
        with contextlib.suppress(Exception):
            self._loop.run(self.engine.aclose())
        drain = getattr(self.engine.hooks, "drain", None)
        if drain is not None:
            with contextlib.suppress(Exception):
                self._loop.run(drain())
        self._loop.close()

    def _read(self) -> str:
        """One message: a line, or every line pasted at once (they come together)."""
        put_back, self.put_back = self.put_back, ""
        with _prefilled(put_back):
            first = input(PROMPT)
        lines = [first]
        while _more_waiting():
            try:
                lines.append(input(""))
            except EOFError:
                break
        return "\n".join(lines)

    def _handle(self, text: str) -> None:
        word, _, rest = text.strip().partition(" ")
        command = chat_command(text)
        if command == "/help":
            click.echo(HELP)
        elif command == "/model":
            self.model = rest.strip() or None
            err.print(f"Model for the next turns: {escape(self.model or 'the default')}.")
        elif command == "/flush":
            self._flush()
        elif command == "/compact":
            self._compact()
        elif command == "?":
            err.print(f"[yellow]Unknown command {escape(word)}[/] (/help lists them).")
        else:  # a message, or /new, /reset, /label: the engine does those
            self._turn(text)

    # -- a turn ---------------------------------------------------------------------------------

    def _turn(self, text: str) -> None:
        engine = self.engine
        turn = engine.turn(text, key=self.key, session_id=self.session_id, model=self.model)
        wrote = {"reply": False, "newline": True}

        def show(event: ChatEvent) -> None:  # on the loop's thread; this one waits meanwhile
            if isinstance(event, ReplyDelta):
                sys.stdout.write(event.text)
                sys.stdout.flush()
                wrote["reply"], wrote["newline"] = True, event.text.endswith("\n")
            elif isinstance(event, SessionChanged):
                self._follow(event.session, event.reason)
            elif isinstance(event, ToolCalled):
                err.print(f"[dim]⚙ {escape(event.summary)}[/]")
            elif isinstance(event, Notice):
                err.print(f"[dim]{escape(event.text)}[/]")

        async def go() -> TurnOutcome:
            async for event in turn:
                show(event)
            assert turn.outcome is not None
            return turn.outcome

        future = self._loop.submit(go())
        outcome: TurnOutcome | None = None
        try:
            outcome = _wait(future, turn.cancel)
        except ClaudeError as exc:
            self._end_line(wrote)
            err.print(f"[red]{escape(str(exc))}[/]")
            err.print("[dim]Your message is kept; it is back at the prompt (Enter retries it).[/]")
            self.put_back = text
            return
        except ClawbackError as exc:
            self._end_line(wrote)
            err.print(f"[red]{escape(str(exc))}[/]")
            return
        self._end_line(wrote)
        if outcome.session is not None and outcome.command is None:
            self._count(outcome)
        if outcome.cancelled:
            err.print("[dim]Stopped; what came of the reply is kept.[/]")

    def _end_line(self, wrote: dict[str, bool]) -> None:
        if wrote["reply"] and not wrote["newline"]:
            sys.stdout.write("\n")
            sys.stdout.flush()

    def _follow(self, session: ChatSession, reason: str) -> None:
        """The turn went to another session (new, reset, stale): the next ones follow it."""
        if reason == "stale":
            err.print(f"[dim]The last session went stale; started {session.id[:8]}.[/]")
        elif reason in ("new", "reset"):
            err.print(f"[dim]New session {session.id[:8]} ({escape(session.key)}).[/]")
        self.key, self.session_id = session.key, None
        self.spend = SessionSpend()

    def _count(self, outcome: TurnOutcome) -> None:
        if self.spend is None or self.session_id not in (None, outcome.session.id):
            self.spend = self._loop.run(self._spend_of(outcome.session.id))
        elif outcome.usage is not None:
            self.spend = self.spend.plus(outcome.usage, outcome.cost)
        if self.session_id is not None:
            self.session_id = outcome.session.id
        if outcome.usage is not None:
            err.print(f"[dim]{escape(describe_turn(outcome.usage, outcome.cost, self.spend))}[/]")

    async def _spend_of(self, session_id: str) -> SessionSpend:
        session = self.engine.store.require(session_id)
        return SessionSpend.of_transcript(session.transcript_path)

    # -- /flush and /compact --------------------------------------------------------------------

    def _session(self) -> ChatSession | None:
        store = self.engine.store
        if self.session_id is not None:
            return self._loop.run(_call(lambda: store.get(self.session_id or "")))
        key = store.normalize_key(self.key or local_session_key())
        return self._loop.run(_call(lambda: store.current(key)))

    def _flush(self) -> None:
        session = self._session()
        hooks = self.engine.hooks
        if session is None or not isinstance(hooks, MemoryLifecycleHooks):
            err.print("Send a message first: there is no chat session yet.")
            return
        flush = hooks.flush
        try:
            proposal = self._loop.run(flush.propose(session))
        except ClawbackError as exc:
            err.print(f"[red]The memory flush failed: {escape(str(exc))}[/]")
            return
        print_flush(proposal)
        if proposal.empty or click.confirm(
            f"Append these notes to {proposal.target_name}?", default=True
        ):
            written = self._loop.run(_call(lambda: flush.apply(proposal)))
            if written is not None:
                err.print(f"Saved to {escape(str(written))}.")

    def _compact(self) -> None:
        session = self._session()
        hooks = self.engine.hooks
        if session is None or not isinstance(hooks, MemoryLifecycleHooks):
            err.print("Send a message first: there is no chat session yet.")
            return
        compactor = hooks.compactor
        try:
            proposal = self._loop.run(compactor.propose(session))
        except ClawbackError as exc:
            err.print(f"[red]Nothing compacted: {escape(str(exc))}[/]")
            return
        print_compaction(session, proposal)
        if click.confirm("Replace those messages with this summary?", default=True):
            record = self._loop.run(_call(lambda: compactor.commit(proposal)))
            err.print(
                f"Compacted: {record.messages_removed} message(s) are now a summary; the next"
                " turn starts a fresh claude process from it."
            )


async def _call(work: Callable[[], T]) -> T:
    """A plain function on the loop's thread (the engine's connection is used there)."""
    return work()


def _wait(future: Future[T], cancel: Callable[[], None]) -> T:
    """The turn's outcome; Ctrl+C (once or more) stops the reply and still waits for the turn
    to record what came of it."""
    stopping = False
    while True:
        try:
            return future.result()
        except KeyboardInterrupt:
            if not stopping:
                stopping = True
                cancel()


def _more_waiting() -> bool:
    """Another line is already waiting on stdin (the rest of a paste)."""
    try:
        ready, _, _ = select.select([sys.stdin], [], [], PASTE_SECONDS)
    except (OSError, ValueError):
        return False
    return bool(ready)


@contextlib.contextmanager
def _prefilled(text: str) -> Any:
    """Offer ``text`` as the line being edited (a failed message, back at the prompt)."""
    readline = sys.modules.get("readline")
    if not text or readline is None:
        yield
        return
    readline.set_startup_hook(lambda: readline.insert_text(text))
    try:
        yield
    finally:
        readline.set_startup_hook(None)


def _enable_line_editing() -> None:
    """Arrow keys and history for the prompt, where the platform has readline."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (importing it is what turns line editing on)


def run_repl(engine: ChatEngine, target: ChatTarget, model: str | None, *, new: bool) -> int:
    """The REPL over ``engine`` (built with ``live=True``) until the person leaves; its exit
    status."""
    return Repl(engine, target, model, new=new).run()
