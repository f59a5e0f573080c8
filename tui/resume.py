"""Continuing a session in Claude Code from the app: one key on a session or a search hit.

The app suspends (the terminal is Claude Code's while it runs) and comes back where it was when
Claude Code exits. What can be resumed, and the messages when it cannot, are the core's
(:mod:`clawback.core.archive.resume`), as for ``clawback resume``. A session whose transcript
Claude Code deleted is offered a restore first; one whose folder is gone, the app's folder.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from clawback.core.archive import FolderGone, NotIndexed, ResumePlan, TranscriptGone
from clawback.core.errors import ClawbackError
from textual.app import SuspendNotSupported

from .format import plural
from .screens.dialogs import ChoiceScreen

if TYPE_CHECKING:
    from .app import ClawbackApp

KEY = "ctrl+r"  # on the sessions list and on search results
DESCRIPTION = "Resume"  # the footer's word; the help says it whole (TOOLTIP)
TOOLTIP = "Resume in Claude Code (restores a deleted one first)"


def resume_session(app: ClawbackApp, session_id: str) -> None:
    """Start the flow in a worker (its dialogs wait for answers; the event loop must not)."""
    app.run_worker(_resume(app, session_id), group="resume", exclusive=True)


async def _resume(app: ClawbackApp, session_id: str) -> None:
    plan = await _plan(app, session_id)
    if plan is None:
        return
    # Everything that can fail is checked before the terminal is handed over: a failure inside
    # ``suspend()`` left the screen blank and the app deaf to every key (issue 31).
    claude = await asyncio.to_thread(shutil.which, plan.argv[0])
    if claude is None:
        app.notify(
            f"{plan.argv[0]}: Claude Code is not installed or not on PATH (install it, or set"
            " chat.claude_command / $CLAWBACK_CLAUDE)",
            severity="error",
        )
        return
    if not await asyncio.to_thread(plan.cwd.is_dir):
        app.notify(f"Cannot run Claude Code in {plan.cwd}: the folder is gone", severity="error")
        return
    try:
        with app.suspend():
            # The app is not drawing or reading keys until this returns: blocking is the point.
            subprocess.run([claude, *plan.argv[1:]], cwd=plan.cwd, check=False)
    except SuspendNotSupported:
        app.notify(
            f"This terminal cannot hand over to Claude Code; run `clawback resume {session_id}`",
            severity="warning",
        )
        return
    except OSError as exc:
        app.notify(f"Cannot run {plan.argv[0]}: {exc.strerror}", severity="error")
        return
    app.refresh(layout=True)
    app.notify("Back from Claude Code", timeout=3)


async def _plan(app: ClawbackApp, session_id: str) -> ResumePlan | None:
    """The command to run, after asking what to do when the session cannot run as it is."""
    store = app.store
    try:
        return await asyncio.to_thread(store.resume_plan, session_id)
    except TranscriptGone:
        choice = await app.push_screen_wait(
            ChoiceScreen(
                "Claude Code has deleted this session's transcript. Write it back from"
                " clawback's copy and resume it?",
                [("restore", "Restore and resume"), ("cancel", "Cancel")],
                detail="Secrets are masked in the copy, as in clawback's index.",
            )
        )
        if choice != "restore":
            return None
        try:
            written = await asyncio.to_thread(store.restore, session_id)
        except NotIndexed as exc:  # written back; only the index could not take it in
            app.notify(str(exc), severity="warning", timeout=10)
            written = exc.written
        except ClawbackError as exc:
            app.notify(str(exc), severity="error")
            return None
        app.notify(
            f"Restored {plural(len(written), 'file')} to {written[0].path.parent} (secrets masked)",
            timeout=6,
        )
        return await _plan(app, session_id)
    except FolderGone as gone:
        here = Path.cwd()
        choice = await app.push_screen_wait(
            ChoiceScreen(
                f"This session ran in {gone.folder or 'a folder it does not name'}, which no"
                f" longer exists. Resume it from {here} instead?",
                [("here", "Resume here"), ("cancel", "Cancel")],
            )
        )
        if choice != "here":
            return None
        return await asyncio.to_thread(store.resume_plan, session_id, here)
    except ClawbackError as exc:
        app.notify(str(exc), severity="warning")
        return None
