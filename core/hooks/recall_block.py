"""The recall block for one prompt, and the two processes that build it by meaning.

:func:`recall_for_prompt` is what every path of the ``user-prompt`` hook ends in: clawback's
chat recall (:func:`~clawback.core.chat.recall.recall`) with the hook's rules (the session's own
lines left out, the relevance floor, ``hooks.recall_tokens``), framed as reference. It runs in
the hook's own process by words alone (:func:`by_words`) or with the vectors loaded there
(:func:`in_process`, ``hooks.warm_minutes = 0``), and in the warm process
(:func:`serve_recall`), which also answers ``clawback search``'s nearest-chunks requests
(:func:`~clawback.core.warm.nearest.answer_nearest`) from the same loaded vectors and model.
Kept apart from :mod:`.prompt_recall` so that a prompt the warm process answers imports none of
it.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

from clawback.core.chat.recall import recall
from clawback.core.config import Config
from clawback.core.db import connect_reader
from clawback.core.embeddings import deferred_nearest
from clawback.core.hooks.framing import as_reference
from clawback.core.hooks.run import Answer, HookContext
from clawback.core.memory.facts import facts_for_recall
from clawback.core.paths import Paths
from clawback.core.search.candidates import LOOSE_FLOOR
from clawback.core.search.engine import NearestChunks
from clawback.core.warm.nearest import answer_nearest
from clawback.core.warm.server import serve


def recall_for_prompt(
    conn: sqlite3.Connection,
    prompt: str,
    *,
    session_id: str,
    cap: int,
    nearest: NearestChunks | None = None,
) -> Answer:
    """The framed recall block for ``prompt`` (empty below the floor)."""
    block = recall(
        conn,
        [prompt],
        cap=cap,
        facts_provider=functools.partial(facts_for_recall, conn),
        exclude_session=session_id,
        min_coverage=LOOSE_FLOOR,
        nearest=nearest,
    )
    if not block:
        return Answer(detail="nothing above the floor")  # never the prompt's words: see log.py
    found = f"{len(block.knowledge)} facts, {len(block.details)} fragments"
    return Answer(text=as_reference(block.text), detail=found)


def by_words(ctx: HookContext) -> Answer:
    """Recall by words alone, in this process."""
    conn = connect_reader(ctx.paths.database)
    if conn is None:
        return Answer(detail="no index yet (run `clawback ingest`)")
    try:
        found = recall_for_prompt(
            conn, ctx.event.prompt, session_id=ctx.event.session_id,
            cap=ctx.config.hooks.recall_tokens,
        )  # fmt: skip
    finally:
        conn.close()
    return Answer(found.text, found.outcome, f"keyword: {found.detail}")


def in_process(ctx: HookContext) -> Answer:
    """Hybrid recall in this process (``hooks.warm_minutes = 0``): slower, nothing left running."""
    nearest = deferred_nearest(ctx.paths.vectors, ctx.config.embeddings)
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
        )
    finally:
        conn.close()
    return Answer(found.text, found.outcome, f"hybrid in process: {found.detail}")


def serve_recall(paths: Paths, config: Config) -> str:
    """Run the warm process for this home until it is idle; returns why it stopped. It answers
    the hook's recall requests and search's nearest-chunks requests."""
    nearest = deferred_nearest(paths.vectors, config.embeddings)
    if nearest is None:
        return "no vectors to search by meaning"
    conn = connect_reader(paths.database)
    if conn is None:
        return "no index yet"
    loaded = nearest

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        nearest_only = answer_nearest(loaded, request)
        if nearest_only is not None:
            return nearest_only
        found = recall_for_prompt(
            conn,
            str(request.get("prompt", "")),
            session_id=str(request.get("session_id", "")),
            cap=int(request.get("cap", 0)),
            nearest=loaded,
        )
        return {"text": found.text, "detail": found.detail}

    try:
        return serve(
            paths,
            reply,
            warm=lambda: loaded.nearest("warm up", 1),
            idle_s=config.hooks.warm_minutes * 60.0,
        )
    finally:
        conn.close()
