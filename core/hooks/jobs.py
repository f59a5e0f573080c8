"""The jobs a hook starts apart: index a transcript, flush notes from a session.

- :func:`ingest_job`: index what is new in a Claude Code transcript (incremental: only what was
  added since the last run), then, when the person embeds (vectors exist), start a short
  ``clawback embed`` for the new text, newest first.
- :func:`flush_session`: ingest the transcript first (every word indexed before Claude Code
  summarizes it), then run the memory flush on the session
  (:meth:`~clawback.core.memory.flush.MemoryFlush.propose_archived`: durable notes through the
  person's own ``claude -p``, appended to ``memory/YYYY-MM-DD.md`` under a heading naming the
  project and the session). One flush at a time per session (a ``flock``), and at most one per
  compaction cycle: the number of compactions the index holds for the session is recorded with
  each flush, and a flush at the same count is skipped.

These open a whole home, so they never run inside a hook's own process.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from clawback.core.archive import project_name
from clawback.core.config import EmbeddingsConfig, atomic_write_bytes
from clawback.core.db import Queryable
from clawback.core.home import Home
from clawback.core.hooks.locks import flush_lock, flush_pending, flush_state
from clawback.core.hooks.run import Answer
from clawback.core.hooks.transcripts import NotATranscript, checked_transcript
from clawback.core.locking import held, lock_free
from clawback.core.paths import Paths
from clawback.core.records import Source
from clawback.core.spawning import spawn

EMBED_LIMIT = 500  # chunks a queued `clawback embed` takes on (newest first)


def ingest_transcript(paths: Paths, transcript: Path) -> int:
    """Index what is new in a Claude Code transcript; returns the entries added. Raises
    :class:`~.transcripts.NotATranscript` for a path that is not one clawback may index (the
    job's argument is checked again: it may not come from the hook)."""
    home = Home.open(paths.home)
    try:
        checked = checked_transcript(str(transcript), home.config)
        stats = home.ingest_paths([checked], Source.CLAUDE_CODE)
        _queue_embedding(paths, home.config.embeddings, stats.entries)
        return stats.entries
    finally:
        home.close()


def _queue_embedding(paths: Paths, settings: EmbeddingsConfig, added: int) -> None:
    """Start a short embedding apart (:func:`embed_job`) when the person embeds (vectors
    exist) and no other embedder is at work; new text is embedded newest first."""
    if added <= 0 or not settings.enabled or not settings.background:
        return
    if not paths.vectors.exists() or not lock_free(paths.embed_lock):
        return
    spawn(paths, "hook", "embed-new")


def embed_job(paths: Paths) -> Answer:
    """The job apart behind a ``stop`` that indexed new text: embed at most
    :data:`EMBED_LIMIT` chunks, newest first; steps aside when another embedder runs. A job,
    so that how it ended is in the hooks log like any hook's (a model that cannot load, say)."""
    from clawback.core.embeddings.embedder import load_embedder
    from clawback.core.embeddings.store import VectorStore
    from clawback.core.embeddings.worker import EmbedderBusy, EmbeddingWorker, embed_lock

    home = Home.open(paths.home)
    try:
        settings = home.config.embeddings
        embedder = load_embedder(settings.model, threads=max(1, settings.threads))
        store = VectorStore.open(paths.vectors, replace_damaged=True)
        try:
            with embed_lock(paths.embed_lock):
                worker = EmbeddingWorker(
                    home.db, store, embedder, tools_and_thinking=settings.tools_and_thinking
                )
                stats = worker.run(limit=EMBED_LIMIT)
        except EmbedderBusy:
            return Answer(outcome="skipped", detail="embed: another clawback embed is running")
        finally:
            store.close()
    finally:
        home.close()
    return Answer(detail=f"embed: {stats.embedded} chunks embedded apart")


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
    try:
        return _flush_held(paths, session_id, transcript, cwd)
    finally:
        flush_pending(paths, session_id).unlink(missing_ok=True)


def _flush_held(paths: Paths, session_id: str, transcript: Path, cwd: str) -> Answer:
    with held(flush_lock(paths, session_id)) as mine:
        if not mine:
            return Answer(outcome="skipped", detail="a flush of this session is already running")
        home = Home.open(paths.home)
        try:
            try:
                transcript = checked_transcript(str(transcript), home.config)
            except NotATranscript as why:
                return Answer(outcome="skipped", detail=str(why))
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
    try:
        added = ingest_transcript(paths, transcript)
    except NotATranscript as why:
        return Answer(outcome="skipped", detail=str(why))
    return Answer(detail=f"{added} entries indexed apart")
