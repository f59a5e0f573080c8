"""Carrying on with a found session in Claude Code: which command, in which folder, or why not.

The CLI (``clawback resume``) replaces itself with the command; the app suspends and runs it.
This is the one place that decides, so both say the same thing when it cannot be done. The
command is the person's own Claude Code, in their own session, so it is deliberately *not*
contained the way clawback's own ``claude`` calls are: their settings, hooks and persistence
apply, as if they had typed ``claude --resume <id>`` themselves.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils
from clawback.core.archive.restore import session_files, transcript_gone
from clawback.core.archive.sessions import SessionSummary
from clawback.core.errors import ClawbackError
from clawback.core.records import Source


class ResumeRefused(ClawbackError):
    """A session that cannot be continued in Claude Code; the message says what can be done."""


class FolderGone(ResumeRefused):
    """The session's working folder no longer exists (it can run from another one)."""

    def __init__(self, message: str, folder: str) -> None:
        super().__init__(message)
        self.folder = folder


class TranscriptGone(ResumeRefused):
    """Claude Code deleted the transcript; ``clawback restore`` can write it back."""


#: How Claude Code names its sessions; ``claude --resume`` reads anything else as an option (an
#: id starting with ``--``) or as a session title to look for, which may be another session.
_SESSION_ID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


@dataclass(frozen=True)
class ResumePlan:
    argv: list[str]
    cwd: Path
    session_id: str


def claude_executable(configured: str) -> str:
    """The ``claude`` to run: ``$CLAWBACK_CLAUDE``, else the configured command."""
    return os.environ.get("CLAWBACK_CLAUDE") or configured


def plan_resume(
    db: sqlite_utils.Database,
    session: SessionSummary,
    claude: str,
    *,
    here: Path | None = None,
    shown_as: str | None = None,
) -> ResumePlan:
    """``claude --resume=<id>`` in the session's working folder, or :class:`ResumeRefused`.

    ``here`` runs it from that folder instead (when the session's own is gone); ``shown_as`` is
    how to name the session in a message (an id prefix), the full id otherwise.
    """
    name = shown_as or session.id
    if session.source == Source.NATIVE.value:
        key = f" --session {session.key}" if session.key else ""
        raise ResumeRefused(
            f"session {name} is a clawback chat, not a Claude Code session: continue it in"
            f" clawback's chat (`clawback chat{key} MESSAGE`, or open it in the app)"
        )
    if session.source != Source.CLAUDE_CODE.value:
        raise ResumeRefused(
            f"session {name} is an OpenClaw session: Claude Code cannot resume it"
            " (`clawback show` prints it whole)"
        )
    if transcript_gone(session_files(db, session.id)):
        raise TranscriptGone(
            f"the transcript of session {name} is gone (Claude Code deletes sessions after"
            f" cleanupPeriodDays): `clawback restore {name}` writes it back from clawback's copy,"
            " then resume it"
        )
    if not _SESSION_ID.fullmatch(session.id):
        raise ResumeRefused(
            f"session {name} has no Claude Code session id (its transcript named it"
            f" {session.id[:40]!r}, where Claude Code writes a UUID), so `claude --resume` cannot"
            " find it: `clawback show` prints it whole"
        )
    argv = [claude, f"--resume={session.id}"]  # one word: never read as an option of its own
    if here is not None:
        return ResumePlan(argv, here, session.id)
    if not session.cwd:
        raise FolderGone(
            f"session {name} does not say which folder it ran in: run `clawback resume {name}"
            " --here` to resume it from the current folder",
            "",
        )
    folder = Path(session.cwd)
    if not folder.is_dir():
        raise FolderGone(
            f"session {name} ran in {folder}, which no longer exists: run `clawback resume"
            f" {name} --here` to resume it from the current folder",
            str(folder),
        )
    return ResumePlan(argv, folder, session.id)
