"""``user-prompt``: the recall block for the prompt Claude Code is about to send.

The block is built by :func:`~clawback.core.chat.recall.recall`, the same function clawback's
own chat uses (the prompt's words OR-ed and ranked by BM25, with the knowledge facts), within
``hooks.recall_tokens``, with two rules for a tool that speaks on every prompt: the current
session's own lines are left out (Claude Code already has them in context), and a fragment that
shares fewer than :data:`MIN_SHARED_TERMS` of the prompt's words is noise, so below that floor
nothing is injected at all.

This runs on every prompt: it opens a plain read connection (no migrations, no sqlite-utils)
and imports nothing it does not use.
"""

from __future__ import annotations

import functools

from clawback.core.chat.recall import recall
from clawback.core.db import connect_reader
from clawback.core.hooks.framing import as_reference
from clawback.core.hooks.run import Answer, HookContext
from clawback.core.memory.facts import facts_for_recall

MIN_SHARED_TERMS = 2


def answer(ctx: HookContext) -> Answer:
    prompt = ctx.event.prompt
    if not prompt.strip() or prompt.lstrip().startswith("/"):
        return Answer(detail="a command, not a question")  # /compact, /clear: nothing to recall
    conn = connect_reader(ctx.paths.database)
    if conn is None:
        return Answer(detail="no index yet (run `clawback ingest`)")
    try:
        block = recall(
            conn,
            [prompt],
            cap=ctx.config.hooks.recall_tokens,
            facts_provider=functools.partial(facts_for_recall, conn),
            exclude_session=ctx.event.session_id,
            min_terms=MIN_SHARED_TERMS,
        )
    finally:
        conn.close()
    if not block:
        return Answer(detail=f"nothing above the floor for: {block.query[:80]}")
    found = f"{len(block.knowledge)} facts, {len(block.details)} fragments"
    return Answer(text=as_reference(block.text), detail=found)
