"""``stop``, ``session-end`` and ``pre-compact``: index the session, and save notes before a
compaction.

- ``stop`` / ``session-end``: the transcript's new lines are indexed (incrementally: only what
  was added since the last run) and, when the home has vectors, a short ``clawback embed`` is
  started apart for the new text. When the new part is large or another clawback holds the
  index's writer lock, the ingest runs apart instead (SessionEnd gives a hook 1.5 s).
- ``pre-compact``: a job apart ingests the transcript first (every word indexed before Claude
  Code summarizes it), then runs the memory flush on this session
  (:meth:`~clawback.core.memory.flush.MemoryFlush.propose_archived`: durable notes through the
  person's own ``claude -p``, appended to ``memory/YYYY-MM-DD.md`` under a heading naming the
  project and the session). Compaction never waits for it. One flush at a time per session
  (a ``flock``), and at most one per compaction cycle: the number of compactions the index
  holds for the session is recorded with each flush, and a flush at the same count is skipped.

Jobs apart are ``clawback hook ingest-transcript`` / ``flush-session`` started in their own
session with no terminal and no pipes back, so Claude Code never waits for them; each ends when
its work does and logs its outcome like a hook.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from clawback.core.archive.sessions import project_name
from clawback.core.claude.mcp import clawback_command
from clawback.core.config import EmbeddingsConfig, atomic_write_bytes
from clawback.core.db import Queryable, connect_reader
from clawback.core.home import Home
from clawback.core.hooks.locks import flush_lock, flush_running, flush_state, held, lock_free
from clawback.core.hooks.log import HookRun, record
from clawback.core.hooks.run import Answer, HookContext
from clawback.core.paths import HOME_ENV, Paths
from clawback.core.records import Source

INLINE_BYTES = 1024 * 1024  # new transcript bytes a hook indexes itself; more runs apart
EMBED_LIMIT = 500  # chunks a queued `clawback embed` takes on (newest first)


def spawn(paths: Paths, *args: str) -> None:
    """Start ``clawback --home H <args>`` detached: own session, no stdin/stdout/stderr."""
    argv = [*clawback_command(), "--home", str(paths.home), *args]
    subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env={**os.environ, HOME_ENV: str(paths.home), "CLAWBACK_HOOKS": "0"},
    )


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


def ingest_transcript(paths: Paths, transcript: Path) -> int:
    """Index what is new in a Claude Code transcript; returns the entries added."""
    home = Home.open(paths.home)
    try:
        stats = home.ingest_paths([transcript], Source.CLAUDE_CODE)
        _queue_embedding(paths, home.config.embeddings, stats.entries)
        return stats.entries
    finally:
        home.close()


def _queue_embedding(paths: Paths, settings: EmbeddingsConfig, added: int) -> None:
    """Start a short ``clawback embed`` apart when the person embeds (vectors exist) and no
    other embedder is at work; new text is embedded newest first."""
    if added <= 0 or settings.model.strip().lower() == "none" or not settings.background:
        return
    if not paths.vectors.exists() or not lock_free(paths.embed_lock):
        return
    spawn(paths, "embed", "--limit", str(EMBED_LIMIT), "--json")


def answer_stop(ctx: HookContext) -> Answer:
    transcript = Path(ctx.event.transcript_path)
    if not ctx.event.transcript_path or not transcript.is_file():
        return Answer(detail="no transcript to index")
    pending = _new_bytes(ctx.paths, transcript)
    if pending <= 0:
        return Answer(detail="nothing new")
    if pending > INLINE_BYTES or not lock_free(ctx.paths.lock):
        spawn(ctx.paths, "hook", "ingest-transcript", str(transcript))
        return Answer(outcome="detached", detail=f"{pending} new bytes indexed apart")
    added = ingest_transcript(ctx.paths, transcript)
    return Answer(detail=f"{added} entries indexed")


# ----------------------------------------------------------------------------------- flush


def answer_pre_compact(ctx: HookContext) -> Answer:
    event = ctx.event
    if not event.transcript_path or not Path(event.transcript_path).is_file():
        return Answer(outcome="skipped", detail="no transcript to flush")
    if flush_running(ctx.paths, event.session_id):
        return Answer(outcome="skipped", detail="a flush of this session is already running")
    spawn(ctx.paths, "hook", "flush-session", event.session_id, event.transcript_path, event.cwd)
    return Answer(outcome="detached", detail=f"ingest and memory flush apart ({event.trigger})")


def _compactions(conn: Queryable, session_id: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM entries WHERE session_id = ? AND kind = 'compaction'",
        (session_id,),
    ).fetchone()
    return int(row[0])


def _flushed_at(paths: Paths, session_id: str) -> int | None:
    try:
        data = json.loads(flush_state(paths, session_id).read_text())
        return int(data["compactions"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def flush_session(paths: Paths, session_id: str, transcript: Path, cwd: str) -> Answer:
    """The job apart behind ``pre-compact``: ingest, then flush once per compaction cycle."""
    with held(flush_lock(paths, session_id)) as mine:
        if not mine:
            return Answer(outcome="skipped", detail="a flush of this session is already running")
        home = Home.open(paths.home)
        try:
            home.ingest_paths([transcript], Source.CLAUDE_CODE)
            count = _compactions(home.db, session_id)
            if _flushed_at(paths, session_id) == count:
                return Answer(outcome="skipped", detail="already flushed in this compaction cycle")
            engine = home.chat_engine()
            flush = home.memory_flush(engine)
            proposal = asyncio.run(
                flush.propose_archived(
                    session_id, engine.archived_history(session_id), project=project_name(cwd),
                    transcript=transcript, compaction_count=count,
                )
            )  # fmt: skip
            written = flush.apply(proposal)
        finally:
            home.close()
        state = json.dumps({"compactions": count, "at": time.time()}).encode()
        atomic_write_bytes(flush_state(paths, session_id), state)
    if written is None:
        return Answer(detail="flush: nothing worth storing (NO_REPLY)")
    return Answer(detail=f"flush: notes appended to memory/{written.name}")


def ingest_job(paths: Paths, transcript: Path) -> Answer:
    """The job apart behind a ``stop`` with much to read."""
    return Answer(detail=f"{ingest_transcript(paths, transcript)} entries indexed apart")


def run_job(
    paths: Paths, event: str, session_id: str, cwd: str, work: Callable[[], Answer]
) -> Answer:
    """Run a job apart and log how it ended, failures included (a job has nobody to tell)."""
    started = time.monotonic()
    try:
        answer = work()
    except Exception as exc:
        answer = Answer(
            outcome="error", detail=f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        )
    record(
        paths.hooks,
        HookRun(
            event=event, outcome=answer.outcome, ms=round((time.monotonic() - started) * 1000, 1),
            session_id=session_id, cwd=cwd, detail=answer.detail,
        ),
    )  # fmt: skip
    return answer
