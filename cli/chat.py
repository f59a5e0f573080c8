"""``clawback chat``: one chat turn from the command line (registered on the main CLI group).

``clawback chat [MESSAGE] [--session KEY|ID] [--new] [--model M] [--json] [--dry-run]`` runs one
turn through :class:`~clawback.core.chat.engine.ChatEngine`, the same pipeline the terminal
app uses. Without MESSAGE on a terminal it is a REPL that keeps the conversation open
(:mod:`clawback.cli.chat_repl`); piped stdin is still one turn.
The reply streams to stdout; notes (a new session, a label) go to stderr. ``--json`` prints one
object (``session_id``, ``session_key``, ``reply``, ``usage``, ``is_error``, ...) instead.
``--dry-run`` prints the prompt exactly as it would be sent and writes nothing.

Errors are one line on stderr and a non-zero exit (Ctrl-C: 130); by then the user's message is
already in the transcript. This module only parses arguments and prints: it must never decide
anything about sessions or prompts itself.

Recall by meaning asks the home's warm process, as ``clawback search`` does
(:func:`~clawback.core.warm.nearest.one_shot_nearest`): a turn that finds none loads the model
and the vectors itself, and starts one for the next turn once its reply is out.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import sys
from typing import TYPE_CHECKING, NoReturn

import click
from clawback.cli.home import open_home
from clawback.cli.output import fail, note, on_a_terminal, print_json
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
from clawback.core.chat.policy import CHAT_COMMANDS, CLI_EQUIVALENTS, chat_command
from clawback.core.chat.sessions import ChatSession
from clawback.core.claude import ClaudeError
from clawback.core.errors import ClawbackError, UsageError
from clawback.core.faults import explain
from clawback.core.home import Home

if TYPE_CHECKING:
    from clawback.core.chat.turn import ChatTurn


def _read_stdin() -> str:
    if sys.stdin is None:
        return ""
    if sys.stdin.isatty():
        note("Type your message, then Ctrl-D to send.")
    return sys.stdin.read()


def _target(engine: ChatEngine, ref: str | None, *, dry: bool = False) -> ChatTarget:
    """``--session``: where the turn goes (the engine decides; this only says so)."""
    if ref is None:
        return ChatTarget()
    target = engine.target(ref, dry=dry)
    if target.forked is not None and target.fork_of is not None:
        fork = target.forked
        note(f"Continuing session {target.fork_of[:8]} in a new chat {fork.id[:8]} ({fork.key}).")
    return target


@click.command()
@click.argument("message", required=False)
@click.option(
    "--session", "ref", help="Session key (default local:<user>), or a session id to continue."
)
@click.option("--new", "new", is_flag=True, help="Start a new session first (like /new).")
@click.option("--model", help="Model for this turn (opus, sonnet, haiku or a full name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object, no streaming.")
@click.option("--dry-run", is_flag=True, help="Print the prompt as it would be sent; send nothing.")
@click.pass_context
def chat(
    ctx: click.Context,
    message: str | None,
    ref: str | None,
    new: bool,
    model: str | None,
    as_json: bool,
    dry_run: bool,
) -> None:
    """Chat with Claude (through your `claude` CLI): one turn, or without MESSAGE on a
    terminal a conversation kept open (Ctrl+D leaves); piped stdin is one turn.

    Type /new or /reset (optionally `/new opus ...`) to start over, /label TEXT to name the
    session.
    """
    if message is None and not (as_json or dry_run) and on_a_terminal():
        _repl(ctx, ref, new, model)
        return
    text = message if message is not None else _read_stdin()
    command = chat_command(text)
    if command == "/help":
        _print_help()
        return
    home = open_home(ctx)
    # One turn and the process ends: recall's vector side asks the warm process, as search does.
    engine = home.chat_engine(nearest=home.nearest(one_shot=True))
    try:
        if not text.strip() and not new:
            raise UsageError("Nothing to send: give a MESSAGE or pipe one on stdin.")
        if command == "?":
            raise UsageError(
                f"unknown command {text.split()[0]} (`clawback chat /help` lists them)"
            )
        if command in CLI_EQUIVALENTS:
            raise UsageError(f"{command} is the app's; here: {CLI_EQUIVALENTS[command]}")
        if dry_run:
            _dry_run(home, engine, text, ref, new, model, as_json)
            return
        target = _target(engine, ref)
        outcome = _run(engine, text, target.key, target.session_id, model, new, as_json)
        if as_json:
            print_json(outcome.to_json())
    except ClawbackError as exc:
        fail(str(exc), exc.exit_code)
    finally:
        # A turn whose recall loaded the vectors itself starts a warm process for the next one,
        # now that the reply is out (not while this one loads the same vectors).
        if engine.nearest is not None:
            from clawback.core.warm import start_for_next

            start_for_next(engine.nearest)
    if outcome.cancelled:
        sys.exit(130)


def _repl(ctx: click.Context, ref: str | None, new: bool, model: str | None) -> None:
    """The conversation kept open: one engine with live conversations, for as long as it runs;
    recall's vectors load once, in this process, as the app's do."""
    from clawback.cli.chat_repl import run_repl

    home = open_home(ctx)
    engine = home.chat_engine(live=True)
    try:
        target = _target(engine, ref)
    except ClawbackError as exc:
        fail(str(exc), exc.exit_code)
    sys.exit(run_repl(engine, target, model, new=new))


def _print_help() -> None:
    """The slash commands (what ``/help`` shows in the app), and what they are here."""
    for name, line in CHAT_COMMANDS.items():
        if name == "/help":
            continue
        here = f"  (here: {CLI_EQUIVALENTS[name]})" if name in CLI_EQUIVALENTS else ""
        click.echo(line + here)


def _saved_hint(session: ChatSession | None) -> str:
    if session is None:
        return ""
    return f" Your message is saved in session {session.id[:8]} ({session.key})."


class _ReplyPrinter:
    """What a person sees of a turn: the reply streamed to stdout, what happened besides it as
    notes on stderr; nothing with ``--json``, which prints the outcome at the end."""

    def __init__(self, *, quiet: bool) -> None:
        self.quiet = quiet
        self.wrote_reply = False
        self.ends_with_newline = True

    def show(self, event: ChatEvent) -> None:
        if self.quiet:
            return
        if isinstance(event, ReplyDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self.wrote_reply = True
            self.ends_with_newline = event.text.endswith("\n")
        elif isinstance(event, SessionChanged):
            if event.reason == "stale":
                note(f"The last session went stale; started a new one ({event.session.id[:8]}).")
            elif event.reason in ("new", "reset"):
                note(f"New session {event.session.id[:8]} ({event.session.key}).")
        elif isinstance(event, Notice):
            note(event.text)
        elif isinstance(event, ToolCalled):
            note(f"⚙ {event.summary}")

    def end(self) -> None:
        """The prompt comes back on a line of its own, however the reply ended."""
        if self.wrote_reply and not self.ends_with_newline:
            sys.stdout.write("\n")
            sys.stdout.flush()


class _Stopper:
    """SIGTERM and SIGHUP end a turn as Ctrl-C does: claude stopped, the partial kept."""

    def __init__(self) -> None:
        self.stopped_by: list[signal.Signals] = []
        self._task: asyncio.Task[TurnOutcome] | None = None

    def install(self) -> None:
        """Called from the turn's task, which a signal then cancels."""
        self._task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._stop, sig)

    def _stop(self, sig: signal.Signals) -> None:
        self.stopped_by.append(sig)
        if self._task is not None:
            self._task.cancel()


async def _stream(
    engine: ChatEngine, turn: ChatTurn, printer: _ReplyPrinter, stopper: _Stopper
) -> TurnOutcome:
    """Run the turn, printing its events as they come; its outcome once all is written."""
    stopper.install()
    try:
        async for event in turn:
            printer.show(event)
    finally:
        printer.end()
    assert turn.outcome is not None
    # Fact extraction started by an automatic compaction must finish before the process
    # ends; asyncio.run would otherwise cancel it.
    drain = getattr(engine.hooks, "drain", None)
    if drain is not None:
        await drain()
    return turn.outcome


def _run(
    engine: ChatEngine,
    text: str,
    key: str | None,
    session_id: str | None,
    model: str | None,
    new: bool,
    as_json: bool,
) -> TurnOutcome:
    turn = engine.turn(text, key=key, session_id=session_id, model=model, new=new)
    stopper = _Stopper()
    try:
        outcome = asyncio.run(_stream(engine, turn, _ReplyPrinter(quiet=as_json), stopper))
    except (Exception, KeyboardInterrupt, asyncio.CancelledError) as exc:
        _turn_failed(exc, engine, turn, as_json, stopper.stopped_by)
    if outcome.cancelled:
        note("Cancelled; the partial reply is kept." + _saved_hint(turn.session))
    return outcome


def _turn_failed(
    exc: BaseException,
    engine: ChatEngine,
    turn: ChatTurn,
    as_json: bool,
    stopped_by: list[signal.Signals],
) -> NoReturn:
    """One line for how a turn ended early, and the exit code that says so; the message is in
    the transcript by then, and the line says where."""
    saved = _saved_hint(turn.session)
    if isinstance(exc, ClaudeError):
        if as_json and turn.outcome is not None:
            print_json({**turn.outcome.to_json(), "is_error": True, "error": str(exc)})
        fail(str(exc) + saved, exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        fail("cancelled; what streamed so far is kept as a partial reply." + saved, 130)
    if isinstance(exc, asyncio.CancelledError):
        sig = stopped_by[0] if stopped_by else signal.SIGINT
        fail(
            f"stopped by {sig.name}; what streamed so far is kept as a partial reply." + saved,
            128 + sig.value,
        )
    # A bug: the turn is recorded with a note; one line, no traceback.
    if as_json and turn.outcome is not None:
        print_json({**turn.outcome.to_json(), "is_error": True, "error": repr(exc)})
    said = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (sqlite3.Error, OSError)):  # a full disk, a read-only home: say so
        said = explain(exc, engine.paths.database)
    fail(f"the turn failed: {said}" + saved, 1)


def _dry_run(
    home: Home,
    engine: ChatEngine,
    text: str,
    ref: str | None,
    new: bool,
    model: str | None,
    as_json: bool,
) -> None:
    target = _target(engine, ref, dry=True)
    prepared = engine.prepare(
        text,
        key=target.key,
        session_id=target.session_id,
        model=model,
        new=new,
        fork_of=target.fork_of,
    )
    if as_json:
        print_json(prepared.to_json())
    else:
        click.echo(prepared.render(), nl=False)
