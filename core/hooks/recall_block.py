"""The recall block for one prompt, wherever it is built.

:func:`recall_for_prompt` is what every path of the ``user-prompt`` hook ends in: clawback's
chat recall (:func:`~clawback.core.recall.recall`) with the hook's rules (the session's own
lines left out, the relevance floor, ``hooks.recall_tokens``), framed as reference. It runs in
the warm process with the vectors it holds (:func:`in_warm`), or in the hook's own process by
words alone (:func:`by_words`) or with the vectors loaded there (:func:`in_process`,
``hooks.warm_minutes = 0``).

A prompt is read up to :data:`PROMPT_CHARS` (its head and its tail): a pasted megabyte of logs
took recall 9.5 s, and what it asks is at its start or its end.
"""

from __future__ import annotations

import functools
import sqlite3

from clawback.core.db import connect_reader
from clawback.core.embeddings import deferred_nearest
from clawback.core.hooks.framing import as_reference
from clawback.core.hooks.run import Answer, HookContext
from clawback.core.memory import facts_for_recall
from clawback.core.recall import recall
from clawback.core.search import LOOSE_FLOOR, NearestChunks

PROMPT_CHARS = 4_000  # read of a prompt: its first and last halves of this


def recall_for_prompt(
    conn: sqlite3.Connection,
    prompt: str,
    *,
    session_id: str,
    cap: int,
    nearest: NearestChunks | None = None,
    project: str | None = None,
) -> Answer:
    """The framed recall block for ``prompt`` (empty below the floor); ``project``: the
    session's working folder, whose past sessions come first at equal relevance."""
    block = recall(
        conn,
        [bounded(prompt)],
        cap=cap,
        facts_provider=functools.partial(facts_for_recall, conn),
        exclude_session=session_id,
        min_coverage=LOOSE_FLOOR,
        nearest=nearest,
        project=project,
    )
    if not block:
        return Answer(detail="nothing above the floor")  # never the prompt's words: see log.py
    found = f"{len(block.knowledge)} facts, {len(block.details)} fragments"
    return Answer(text=as_reference(block.text), detail=found)


def bounded(prompt: str) -> str:
    """``prompt``, or for a long one its head and its tail (:data:`PROMPT_CHARS` in all)."""
    if len(prompt) <= PROMPT_CHARS:
        return prompt
    half = PROMPT_CHARS // 2
    return f"{prompt[:half]}\n…\n{prompt[-half:]}"


def by_words(ctx: HookContext) -> Answer:
    """Recall by words alone, in this process."""
    return _recall_here(ctx, None, "keyword")


def in_process(ctx: HookContext) -> Answer:
    """Hybrid recall in this process (``hooks.warm_minutes = 0``): slower, nothing left running."""
    return _recall_here(
        ctx, deferred_nearest(ctx.paths.vectors, ctx.config.embeddings), "hybrid in process"
    )


def in_warm(ctx: HookContext) -> Answer:
    """Hybrid recall in the warm process, with the vectors it holds (by words alone when the
    home has none)."""
    nearest = ctx.warm.nearest if ctx.warm is not None else None
    return _recall_here(ctx, nearest, "hybrid" if nearest is not None else "keyword, warm")


def _recall_here(ctx: HookContext, nearest: NearestChunks | None, side: str) -> Answer:
    """The hook's prompt recalled over this process's reader, with ``nearest`` (``None``: by
    words alone); ``side`` says how, in the hooks log."""
    conn = connect_reader(ctx.paths.database)
    if conn is None:
        return Answer(detail="no index yet (run `clawback ingest`)")
    try:
        found = recall_for_prompt(
            conn,
            ctx.event.prompt,
            session_id=ctx.event.session_id,
            cap=ctx.config.hooks.recall_tokens,
            nearest=nearest,
            project=ctx.event.cwd or None,
        )
    finally:
        conn.close()
    return Answer(found.text, found.outcome, f"{side}: {found.detail}")
