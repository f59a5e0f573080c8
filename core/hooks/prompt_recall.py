"""``user-prompt``: the recall block for the prompt Claude Code is about to send.

The block is built by :func:`~clawback.core.chat.recall.recall`, the same function clawback's
own chat uses (the prompt's words OR-ed and ranked by BM25, the knowledge facts, and, where the
archive has vectors, the fragments and facts closest in meaning), within
``hooks.recall_tokens``, with two rules for a tool that speaks on every prompt: the current
session's own lines are left out (Claude Code already has them in context), and a fragment or
fact that shares fewer than :data:`MIN_SHARED_TERMS` of the prompt's words is noise, so below
that floor nothing is injected at all.

This runs on every prompt. By words alone it opens a plain read connection and imports nothing
it does not use; by meaning too it asks the warm recall server
(:mod:`~clawback.core.hooks.recall_server`), starting it when it is not there, and answers that
first prompt by words alone.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

from clawback.core.chat.recall import recall
from clawback.core.config import Config
from clawback.core.db import connect_reader
from clawback.core.embeddings import deferred_nearest
from clawback.core.hooks.capture import spawn
from clawback.core.hooks.framing import as_reference
from clawback.core.hooks.recall_server import ask, running, serve
from clawback.core.hooks.run import Answer, HookContext
from clawback.core.memory.facts import facts_for_recall
from clawback.core.paths import Paths
from clawback.core.search.engine import NearestChunks

MIN_SHARED_TERMS = 2
ASK_TIMEOUT_S = 2.0  # the server answers in tens of milliseconds; more means it is stuck


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
        min_terms=MIN_SHARED_TERMS,
        nearest=nearest,
    )
    if not block:
        return Answer(detail=f"nothing above the floor for: {block.query[:80]}")
    found = f"{len(block.knowledge)} facts, {len(block.details)} fragments"
    return Answer(text=as_reference(block.text), detail=found)


def _by_meaning(ctx: HookContext) -> bool:
    embeddings = ctx.config.embeddings
    return embeddings.model.strip().lower() != "none" and ctx.paths.vectors.exists()


def answer(ctx: HookContext) -> Answer:
    event = ctx.event
    prompt = event.prompt
    if not prompt.strip() or prompt.lstrip().startswith("/"):
        return Answer(detail="a command, not a question")  # /compact, /clear: nothing to recall
    cap = ctx.config.hooks.recall_tokens
    if _by_meaning(ctx) and ctx.config.hooks.warm_minutes <= 0:
        return _in_process(ctx, cap)
    if _by_meaning(ctx):
        request = {"prompt": prompt, "session_id": event.session_id, "cap": cap}
        reply = ask(ctx.paths, request, min(ASK_TIMEOUT_S, ctx.seconds_left() - 0.5))
        if reply is not None:
            return Answer(text=str(reply["text"]), detail=f"hybrid: {reply.get('detail', '')}")
        if not running(ctx.paths):
            spawn(ctx.paths, "hook", "serve")
    conn = connect_reader(ctx.paths.database)
    if conn is None:
        return Answer(detail="no index yet (run `clawback ingest`)")
    try:
        found = recall_for_prompt(conn, prompt, session_id=event.session_id, cap=cap)
    finally:
        conn.close()
    return Answer(found.text, found.outcome, f"keyword: {found.detail}")


def _in_process(ctx: HookContext, cap: int) -> Answer:
    """Hybrid recall in this process (``hooks.warm_minutes = 0``): slower, nothing left running."""
    nearest = deferred_nearest(ctx.paths.vectors, ctx.config.embeddings)
    conn = connect_reader(ctx.paths.database)
    if conn is None:
        return Answer(detail="no index yet (run `clawback ingest`)")
    try:
        found = recall_for_prompt(
            conn, ctx.event.prompt, session_id=ctx.event.session_id, cap=cap, nearest=nearest
        )
    finally:
        conn.close()
    return Answer(found.text, found.outcome, f"hybrid in process: {found.detail}")


def serve_recall(paths: Paths, config: Config) -> str:
    """Run the warm recall server for this home until it is idle; returns why it stopped."""
    nearest = deferred_nearest(paths.vectors, config.embeddings)
    if nearest is None:
        return "no vectors to search by meaning"
    conn = connect_reader(paths.database)
    if conn is None:
        return "no index yet"
    loaded = nearest

    def reply(request: dict[str, Any]) -> dict[str, Any]:
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
