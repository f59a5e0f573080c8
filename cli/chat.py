"""``clawback chat``: one chat turn from the command line (registered on the main CLI group).

``clawback chat [MESSAGE] [--session KEY|ID] [--new] [--model M] [--json] [--dry-run]`` runs one
turn through :class:`~clawback.core.chat.engine.ChatEngine`, the same pipeline the terminal
app uses.
The reply streams to stdout; notes (a new session, a label) go to stderr. ``--json`` prints one
object (``session_id``, ``session_key``, ``reply``, ``usage``, ``is_error``, ...) instead.
``--dry-run`` prints the prompt exactly as it would be sent and writes nothing.

Errors are one line on stderr and a non-zero exit (Ctrl-C: 130); by then the user's message is
already in the transcript. This module only parses arguments and prints: it must never decide
anything about sessions or prompts itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

import click
from clawback.cli.home import open_home
from clawback.cli.output import fail, note, print_json
from clawback.core.archive.read import resolve_session
from clawback.core.chat.engine import (
    ChatEngine,
    ChatEvent,
    Notice,
    ReplyDelta,
    SessionChanged,
    ToolCalled,
    TurnOutcome,
)
from clawback.core.chat.sessions import ChatSession, SessionStore, local_session_key
from clawback.core.claude.runner import ClaudeError
from clawback.core.errors import ClawbackError, NotFoundError, UsageError
from clawback.core.home import Home


def _read_stdin() -> str:
    if sys.stdin is None:
        return ""
    if sys.stdin.isatty():
        note("Type your message, then Ctrl-D to send.")
    return sys.stdin.read()


def chat_session_id(app: Home, ref: str) -> str | None:
    """The chat session ``ref`` names (an id, or a unique prefix of 4+ characters)."""
    rows = app.db.execute(
        "SELECT id FROM chat_sessions WHERE id = ? OR id LIKE ? ORDER BY id = ? DESC LIMIT 2",
        (ref, ref + "%" if len(ref) >= 4 else ref, ref),
    ).fetchall()
    if len(rows) == 1 or (rows and rows[0][0] == ref):
        return str(rows[0][0])
    if len(rows) > 1:
        raise UsageError(f"session id prefix {ref!r} is ambiguous; give more characters")
    return None


def _archived_id(app: Home, ref: str) -> str:
    try:
        return resolve_session(app.db, ref).id
    except NotFoundError:
        raise NotFoundError(
            f"no session {ref!r}: --session takes a key such as {local_session_key()} or a "
            "session id (see `clawback sessions`)"
        ) from None


def _live_fork(engine: ChatEngine, parent_id: str) -> str | None:
    """A fresh, current fork of ``parent_id`` made earlier, to continue rather than fork again."""
    store = engine.store
    for session in store.list(limit=1000):
        if session.parent_id == parent_id and session.current and store.is_fresh(session):
            return session.id
    return None


def _target(
    app: Home, engine: ChatEngine, ref: str | None, *, dry: bool = False
) -> tuple[str | None, str | None, str | None]:
    """``--session``: a key (has a ``:``), a chat session id (or prefix), or an archived session.

    An archived session (Claude Code, OpenClaw) is continued in a fork of it, keyed
    ``local:<user>:thread:<id prefix>``; the next call with the same id continues that fork.
    Returns ``(key, session_id, fork_of)``; ``fork_of`` is only set for a dry run, which must
    not create the fork.
    """
    if ref is None:
        return None, None, None
    ref = ref.strip()
    if ":" in ref:
        return SessionStore.normalize_key(ref), None, None
    chat_id = chat_session_id(app, ref)
    if chat_id is not None:
        return None, chat_id, None
    parent = _archived_id(app, ref)
    existing = _live_fork(engine, parent)
    if existing is not None:
        return None, existing, None
    if dry:
        return None, None, parent
    fork = engine.fork(parent)
    note(f"Continuing session {parent[:8]} in a new chat {fork.id[:8]} ({fork.key}).")
    return None, fork.id, None


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
    """Chat with Claude (through your `claude` CLI): one turn; no MESSAGE reads stdin.

    Type /new or /reset (optionally `/new opus ...`) to start over, /label TEXT to name the
    session.
    """
    app = open_home(ctx)
    engine = app.chat_engine()
    text = message if message is not None else _read_stdin()
    try:
        if not text.strip() and not new:
            raise UsageError("Nothing to send: give a MESSAGE or pipe one on stdin.")
        if dry_run:
            _dry_run(app, engine, text, ref, new, model, as_json)
            return
        key, session_id, _ = _target(app, engine, ref)
        outcome = _run(engine, text, key, session_id, model, new, as_json)
    except ClawbackError as exc:
        fail(str(exc), exc.exit_code)
    if as_json:
        print_json(outcome.to_json())
    if outcome.cancelled:
        sys.exit(130)


def _saved_hint(session: ChatSession | None) -> str:
    if session is None:
        return ""
    return f" Your message is saved in session {session.id[:8]} ({session.key})."


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
    wrote = {"reply": False, "ends_with_newline": True}

    def show(event: ChatEvent) -> None:
        if as_json:
            return
        if isinstance(event, ReplyDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
            wrote["reply"] = True
            wrote["ends_with_newline"] = event.text.endswith("\n")
        elif isinstance(event, SessionChanged):
            if event.reason == "stale":
                note(f"The last session went stale; started a new one ({event.session.id[:8]}).")
            elif event.reason in ("new", "reset"):
                note(f"New session {event.session.id[:8]} ({event.session.key}).")
        elif isinstance(event, Notice):
            note(event.text)
        elif isinstance(event, ToolCalled):
            note(f"⚙ {event.summary}")

    stopped_by: list[signal.Signals] = []

    def stop(sig: signal.Signals) -> None:
        """SIGTERM and SIGHUP end a turn as Ctrl-C does: claude stopped, the partial kept."""
        stopped_by.append(sig)
        if main is not None:
            main.cancel()

    main: asyncio.Task[TurnOutcome] | None = None

    async def go() -> TurnOutcome:
        nonlocal main
        main = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop, sig)
        try:
            async for event in turn:
                show(event)
        finally:
            if wrote["reply"] and not wrote["ends_with_newline"]:
                sys.stdout.write("\n")
                sys.stdout.flush()
        assert turn.outcome is not None
        # Fact extraction started by an automatic compaction must finish before the process
        # ends; asyncio.run would otherwise cancel it.
        drain = getattr(engine.hooks, "drain", None)
        if drain is not None:
            await drain()
        return turn.outcome

    try:
        outcome = asyncio.run(go())
    except ClaudeError as exc:
        if as_json and turn.outcome is not None:
            print_json({**turn.outcome.to_json(), "is_error": True, "error": str(exc)})
        fail(str(exc) + _saved_hint(turn.session), exc.exit_code)
    except KeyboardInterrupt:
        fail(
            "cancelled; what streamed so far is kept as a partial reply."
            + _saved_hint(turn.session),
            130,
        )
    except asyncio.CancelledError:
        sig = stopped_by[0] if stopped_by else signal.SIGINT
        fail(
            f"stopped by {sig.name}; what streamed so far is kept as a partial reply."
            + _saved_hint(turn.session),
            128 + sig.value,
        )
    except Exception as exc:  # a bug: the turn is recorded with a note; one line, no traceback
        if as_json and turn.outcome is not None:
            print_json({**turn.outcome.to_json(), "is_error": True, "error": repr(exc)})
        fail(f"the turn failed: {type(exc).__name__}: {exc}" + _saved_hint(turn.session), 1)
    if outcome.cancelled:
        note("Cancelled; the partial reply is kept." + _saved_hint(turn.session))
    return outcome


def _dry_run(
    app: Home,
    engine: ChatEngine,
    text: str,
    ref: str | None,
    new: bool,
    model: str | None,
    as_json: bool,
) -> None:
    key, session_id, fork_of = _target(app, engine, ref, dry=True)
    prepared = engine.prepare(
        text, key=key, session_id=session_id, model=model, new=new, fork_of=fork_of
    )
    if as_json:
        print_json(prepared.to_json())
    else:
        click.echo(prepared.render(), nl=False)
