"""``stop``, ``session-end`` and ``pre-compact``: start the work that indexes the session and
saves notes before a compaction, and return at once.

Either indexes only a Claude Code transcript of this person's (:mod:`.transcripts`).

- ``stop`` / ``session-end``: when the transcript has lines the index has not read (one
  ``stat`` and one query), a job apart indexes them (:func:`~clawback.core.hooks.jobs.ingest_job`).
  Indexing in the hook itself took 0.6-0.9 s (most of it importing the ingest code), after
  every turn and against SessionEnd's 1.5 s; apart, the hook costs a process start.
- ``pre-compact``: a job apart ingests the transcript, then runs the memory flush on the
  session (:func:`~clawback.core.hooks.jobs.flush_session`). Compaction never waits for it.

Jobs apart are ``clawback hook ingest-transcript`` / ``flush-session``, started in their own
session with no terminal and no pipes back (Claude Code waits for a hook's stdout to close),
with the hooks switched off for anything they run; each ends when its work does and logs its
outcome like a hook.
"""

from __future__ import annotations

from pathlib import Path

from clawback.core.db import connect_reader
from clawback.core.hooks.locks import flush_pending, flush_running
from clawback.core.hooks.run import Answer, HookContext
from clawback.core.hooks.transcripts import MISSING, NotATranscript, checked_transcript
from clawback.core.paths import Paths, ensure_private_dir, touch_private
from clawback.core.spawning import spawn

# ---------------------------------------------------------------------------------- ingest


def _new_bytes(paths: Paths, transcript: Path) -> int:
    """How much of ``transcript`` the index has not read yet (all of it when unknown)."""
    size = transcript.stat().st_size
    conn = connect_reader(paths.database)
    if conn is None:
        return size
    try:
        row = conn.execute(
            'SELECT "offset" FROM files WHERE path = ?', (str(transcript),)
        ).fetchone()
    finally:
        conn.close()
    return size - (row[0] if row else 0)


def answer_stop(ctx: HookContext) -> Answer:
    try:
        transcript = checked_transcript(ctx.event.transcript_path, ctx.config)
    except NotATranscript as why:
        return Answer(outcome="ok" if str(why) == MISSING else "skipped", detail=str(why))
    pending = _new_bytes(ctx.paths, transcript)
    if pending <= 0:
        return Answer(detail="nothing new")
    spawn(ctx.paths, "hook", "ingest-transcript", str(transcript))
    return Answer(outcome="detached", detail=f"{pending:,} new bytes, indexed apart")


# ----------------------------------------------------------------------------------- flush


def answer_pre_compact(ctx: HookContext) -> Answer:
    event = ctx.event
    try:
        transcript = checked_transcript(event.transcript_path, ctx.config)
    except NotATranscript as why:
        detail = "no transcript to flush" if str(why) == MISSING else str(why)
        return Answer(outcome="skipped", detail=detail)
    if flush_running(ctx.paths, event.session_id):
        return Answer(outcome="skipped", detail="a flush of this session is already running")
    pending = flush_pending(ctx.paths, event.session_id)
    ensure_private_dir(pending.parent)
    touch_private(pending)
    spawn(ctx.paths, "hook", "flush-session", event.session_id, str(transcript), event.cwd)
    return Answer(outcome="detached", detail=f"ingest and memory flush apart ({event.trigger})")
