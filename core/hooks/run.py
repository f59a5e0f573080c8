"""One hook run: gate it, bound it, answer it, log it, and never let it fail the session.

:func:`run_hook` is the whole contract Claude Code sees, wherever it runs: in the warm process
(:mod:`.serve`), which the hook's own process asks first (:mod:`.client`), or in the hook's own
process when none answered (:func:`answer_here`, which then starts one). It returns the text to
print: the hook JSON (``hookSpecificOutput.additionalContext``) when there is context to give,
else nothing. Whatever happens inside (no home, a broken config, a locked or missing index, a
bug) the answer is silence, and the reason goes to the hooks log. ``CLAWBACK_HOOKS=0`` switches
every hook off and ``hooks.exclude`` (glob patterns on the session's working folder) one
project; each run is bounded by ``hooks.timeout_s`` counted from the start of the hook's
process, its imports included.

Each event's handler lives in its own module, imported only for that event (and within the
bound), because a hook's process pays for every import.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clawback.core.config import Config, load_config
from clawback.core.hooks.events import HookEvent, parse_event
from clawback.core.hooks.log import HookRun, record
from clawback.core.hooks.plugin import VIA_PLUGIN_ENV, settings_hook_scope
from clawback.core.hooks.settings import EVENTS
from clawback.core.paths import Paths

if TYPE_CHECKING:  # only the warm process holds one: a hook's own process never imports search
    from clawback.core.search import NearestChunks

SWITCH_ENV = "CLAWBACK_HOOKS"
#: Claude Code cuts hook output over 10,000 characters to a preview; stay well under it
MAX_CONTEXT_CHARS = 9_500
#: the events whose output reaches the model (the others' stdout is only shown in verbose mode)
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
#: clawback's event name -> "module:function" under ``clawback.core.hooks``
HANDLERS: dict[str, str] = {
    "session-start": "brief:answer",
    "user-prompt": "prompt_recall:answer",
    "pre-compact": "capture:answer_pre_compact",
    "stop": "capture:answer_stop",
    "session-end": "capture:answer_stop",
}
CLAUDE_EVENTS = {name: event for event, name in EVENTS.items()}


@dataclass(frozen=True)
class WarmResources:
    """What the warm process holds for the handlers it runs: the vector side, loaded once
    (safe to ask from several threads), or ``None`` for a home without vectors."""

    nearest: NearestChunks | None = None


@dataclass(frozen=True)
class HookContext:
    """What a handler gets: the event, where the home is, its settings, when to stop, and, in
    the warm process, what it holds."""

    event: HookEvent
    paths: Paths
    config: Config
    deadline: float  # time.monotonic() value after which the run is abandoned
    warm: WarmResources | None = None

    @property
    def workspace(self) -> Path:
        return self.config.workspace(self.paths)

    def seconds_left(self) -> float:
        return self.deadline - time.monotonic()


@dataclass(frozen=True)
class Answer:
    text: str = ""
    outcome: str = "ok"
    detail: str = ""


@dataclass(frozen=True)
class HookResult:
    """What to print, and whether a handler was abandoned still running (the caller then ends
    the process at once instead of waiting for it)."""

    output: str
    abandoned: bool = False


def run_job(
    paths: Paths, event: str, session_id: str, cwd: str, work: Callable[[], Answer]
) -> Answer:
    """Run a job apart and log how it ended, failures included (a job has nobody to tell).

    Here rather than beside the jobs (:mod:`.jobs`, which open a whole home): the warm process
    is such a job, and a search may wait for it to start."""
    started = time.monotonic()
    ended: BaseException | None = None
    try:
        with _terminated_as_exit():
            answer = work()
    except Exception as exc:
        answer = Answer(outcome="error", detail=_one_line(exc))
    except BaseException as exc:  # stopped: Ctrl-C, SIGTERM, an exit; logged, then let go
        answer = Answer(outcome="error", detail=f"stopped ({_one_line(exc)})")
        ended = exc
    record(
        paths.hooks,
        HookRun(
            event=event, outcome=answer.outcome, ms=round((time.monotonic() - started) * 1000, 1),
            session_id=session_id, cwd=cwd, detail=answer.detail,
        ),
    )  # fmt: skip
    if ended is not None:
        raise ended
    return answer


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """A SIGTERM during a job ends it as an exception (so its end is logged), not silently;
    only on the main thread, where signal handlers live."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def excluded(cwd: str, patterns: list[str]) -> bool:
    """Whether ``cwd`` matches one of ``hooks.exclude`` (``~`` expanded; a pattern naming a
    folder also covers what is inside it)."""
    for pattern in patterns:
        expanded = os.path.expanduser(pattern.strip()).rstrip("/")
        if expanded and (
            fnmatch.fnmatchcase(cwd, expanded) or fnmatch.fnmatchcase(cwd, expanded + "/*")
        ):
            return True
    return False


def _handler(name: str) -> Callable[[HookContext], Answer]:
    module, _, attr = HANDLERS[name].partition(":")
    found: Callable[[HookContext], Answer] = getattr(
        importlib.import_module(f"clawback.core.hooks.{module}"), attr
    )
    return found


def _bounded(name: str, ctx: HookContext) -> Answer | None:
    """The answer of ``name``'s handler, or ``None`` if it did not finish (its import
    included) before the deadline.

    It runs on a daemon thread so the deadline holds even inside a long SQLite call; the
    caller ends the process when it is abandoned (an interrupted ingest is safe: every file
    commits with its offset).
    """
    box: list[Answer | BaseException] = []

    def target() -> None:
        try:
            box.append(_handler(name)(ctx))
        except BaseException as exc:  # reported by the caller, never raised into Claude Code
            box.append(exc)

    thread = threading.Thread(target=target, name="clawback-hook", daemon=True)
    thread.start()
    thread.join(max(0.0, ctx.seconds_left()))
    if not box:
        return None
    if isinstance(box[0], BaseException):
        return Answer(outcome="error", detail=_one_line(box[0]))
    return box[0]


def hook_output(claude_event: str, text: str) -> str:
    """The JSON Claude Code reads from a hook's stdout, or ``""`` when there is nothing to add."""
    if not text or claude_event not in CONTEXT_EVENTS:
        return ""
    payload = {"hookSpecificOutput": {"hookEventName": claude_event, "additionalContext": text}}
    return json.dumps(payload, ensure_ascii=False)


def _outcome(answer: Answer, text: str, claude_event: str) -> str:
    """``empty`` for a context event that found nothing worth giving (a normal outcome)."""
    if answer.outcome == "ok" and not text and claude_event in CONTEXT_EVENTS:
        return "empty"
    return answer.outcome


def _claude_home(environ: Mapping[str, str]) -> Path | None:
    """Where Claude Code's user settings are for the hook's environment (which the warm process
    is handed, not its own)."""
    if environ.get("CLAUDE_CONFIG_DIR"):
        return Path(environ["CLAUDE_CONFIG_DIR"])
    return Path(environ["HOME"]) / ".claude" if environ.get("HOME") else None


def run_hook(
    name: str,
    raw: bytes,
    home: str | Path | None,
    *,
    started: float | None = None,
    warm: WarmResources | None = None,
    budget: Callable[[float], None] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> HookResult:
    """Answer Claude Code's ``name`` event (``session-start``, ...) whose JSON is ``raw``.

    ``started`` is when the hook's process started (``time.monotonic()``; default now): the
    run ends at ``started + hooks.timeout_s``. ``warm`` is what the warm process holds, when it
    runs this; ``budget(timeout_s)`` is told the budget once the settings are read.
    """
    started = time.monotonic() if started is None else started
    if environ.get(SWITCH_ENV, "").strip() == "0":
        return HookResult("")
    paths = Paths.resolve(home)
    claude_event = CLAUDE_EVENTS.get(name, name)
    event: HookEvent | None = None
    abandoned = False
    try:
        config = load_config(paths.config)
        if budget is not None:
            budget(float(config.hooks.timeout_s))
        event = parse_event(raw, claude_event)
        if excluded(event.cwd, config.hooks.exclude):
            answer = Answer(outcome="skipped", detail="the project is in hooks.exclude")
        elif environ.get(VIA_PLUGIN_ENV) and (
            scope := settings_hook_scope(claude_event, event.cwd, _claude_home(environ))
        ):
            detail = f"the {scope} settings file runs clawback's hook; the plugin's steps aside"
            answer = Answer(outcome="skipped", detail=detail)
        else:
            ctx = HookContext(event, paths, config, started + config.hooks.timeout_s, warm)
            found = _bounded(name, ctx)
            if found is None:
                abandoned = True
                answer = Answer(
                    outcome="timeout",
                    detail=f"gave up after hooks.timeout_s = {config.hooks.timeout_s} s",
                )
            else:
                answer = found
    except Exception as exc:  # a broken config, an event it cannot read: silence, and why
        answer = Answer(outcome="error", detail=_one_line(exc))
    text = answer.text if answer.outcome == "ok" else ""
    if len(text) > MAX_CONTEXT_CHARS:
        text = text[:MAX_CONTEXT_CHARS].rsplit("\n", 1)[0]
    record(
        paths.hooks,
        HookRun(
            event=name,
            outcome=_outcome(answer, text, claude_event),
            ms=round((time.monotonic() - started) * 1000, 1),
            chars=len(text),
            session_id=event.session_id if event else "",
            cwd=event.cwd if event else "",
            detail=answer.detail,
        ),
    )
    return HookResult(hook_output(claude_event, text), abandoned)


def answer_here(
    name: str, raw: bytes, home: str, started: float, budget: Callable[[float], None]
) -> tuple[str, bool]:
    """Run the hook in this process (the warm process did not answer): ``(what to print,
    whether a handler was abandoned)``; then start the warm process for the next event."""
    result = run_hook(name, raw, home, started=started, budget=budget)
    with contextlib.suppress(Exception):  # the next hook tries again; this one has answered
        _start_warm(Paths.resolve(home))
    return result.output, result.abandoned


def _start_warm(paths: Paths) -> None:
    from clawback.core.warm import allowed, should_start, start

    if not paths.config.parent.is_dir():
        return  # no home: nothing to serve
    config = load_config(paths.config)
    if allowed(config.hooks.warm_minutes) and should_start(paths):
        start(paths)
