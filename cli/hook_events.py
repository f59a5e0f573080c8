"""``clawback hook <event>``: what Claude Code runs at each lifecycle event.

Claude Code writes the event's JSON on stdin and reads stdout, so this prints only the hook JSON
(or nothing) and always exits 0: the answer and every failure are decided in
:func:`~clawback.core.hooks.run.run_hook`. It runs on every prompt, so it imports only the hook
runner; each event's handler is imported by the runner when that event comes. The console
script answers the exact command ``hooks install`` writes without loading click at all
(:mod:`clawback.cli.entry`); this group is the same answer for every other spelling.

The hidden ``ingest-transcript``, ``embed-new`` and ``flush-session`` are the jobs a hook
starts apart (each logs how it ended, as a hook does); the
hidden ``serve`` is the home's warm process (:mod:`clawback.core.warm`), which the
hooks, ``clawback search`` and ``clawback chat`` start; it logs as ``warm``. Setting these up
in Claude Code's settings is ``clawback hooks install`` (:mod:`clawback.cli.hooks_setup`).
"""

from __future__ import annotations

from pathlib import Path

import click
from clawback.cli.entry import answer_event
from clawback.cli.home import home_option
from clawback.core.hooks.settings import EVENTS
from clawback.core.paths import Paths


@click.group(name="hook")
def hook() -> None:
    """What Claude Code runs at each event (set up by `clawback hooks install`).

    Each reads the event's JSON on stdin, prints the context for Claude (or nothing) and exits 0.
    """


def _answer(ctx: click.Context, name: str) -> None:
    # Through click the process may hold more than this hook (the tests run it in theirs): the
    # budget starts now and nothing ends the process.
    answer_event(name, home_option(ctx), whole_process=False)


def _event_command(name: str, claude_event: str) -> None:
    @hook.command(name=name, help=f"Answer Claude Code's {claude_event} event (JSON on stdin).")
    @click.pass_context
    def command(ctx: click.Context) -> None:
        _answer(ctx, name)


for _claude_event, _name in EVENTS.items():
    _event_command(_name, _claude_event)


def _paths(ctx: click.Context) -> Paths:
    return Paths.resolve(home_option(ctx))


@hook.command(name="ingest-transcript", hidden=True)
@click.argument("transcript", type=click.Path(path_type=Path))
@click.pass_context
def ingest_transcript_job(ctx: click.Context, transcript: Path) -> None:
    """Index a Claude Code transcript's new lines (started apart by `stop`)."""
    from clawback.core.hooks.jobs import ingest_job
    from clawback.core.hooks.run import run_job

    paths = _paths(ctx)
    run_job(paths, "stop", "", "", lambda: ingest_job(paths, transcript))


@hook.command(name="embed-new", hidden=True)
@click.pass_context
def embed_new_job(ctx: click.Context) -> None:
    """Embed the newest text, a few hundred chunks (queued apart by `stop`)."""
    from clawback.core.hooks.jobs import embed_job
    from clawback.core.hooks.run import run_job

    paths = _paths(ctx)
    run_job(paths, "stop", "", "", lambda: embed_job(paths))


@hook.command(name="flush-session", hidden=True)
@click.argument("session_id")
@click.argument("transcript", type=click.Path(path_type=Path))
@click.argument("cwd", default="")
@click.pass_context
def flush_session_job(ctx: click.Context, session_id: str, transcript: Path, cwd: str) -> None:
    """Ingest, then flush memory notes from a Claude Code session (started apart by
    `pre-compact`)."""
    from clawback.core.hooks.jobs import flush_session
    from clawback.core.hooks.run import run_job

    paths = _paths(ctx)
    run_job(
        paths,
        "pre-compact",
        session_id,
        cwd,
        lambda: flush_session(paths, session_id, transcript, cwd),
    )


@hook.command(name="serve", hidden=True)
@click.pass_context
def serve_job(ctx: click.Context) -> None:
    """Keep the hooks' code, the model and the vectors warm until idle: every hook event, and
    nearest chunks for `clawback search` and `clawback chat` turns (started by any of them)."""
    from clawback.core.config import load_config
    from clawback.core.hooks.log import WARM_EVENT
    from clawback.core.hooks.run import Answer, run_job
    from clawback.core.hooks.serve import serve_hooks

    paths = _paths(ctx)
    run_job(
        paths, WARM_EVENT, "", "",
        lambda: Answer(detail=serve_hooks(paths, load_config(paths.config))),
    )  # fmt: skip
