"""``user-prompt``: the recall block for the prompt Claude Code is about to send.

The block is built by :func:`~clawback.core.chat.recall.recall`, the same function clawback's
own chat uses (the prompt's words OR-ed and ranked by BM25, the knowledge facts, and, where the
archive has vectors, the fragments and facts closest in meaning), within
``hooks.recall_tokens``, with two rules for a tool that speaks on every prompt: the current
session's own lines are left out (Claude Code already has them in context), and a fragment or
fact found by words that holds less than a quarter of the prompt's words (weighted by rarity:
search's floor for loose hits, ``LOOSE_FLOOR``) is noise, so below that floor nothing is
injected at all.

This runs on every prompt. By meaning too it asks the warm process
(:mod:`~clawback.core.warm.server`) and imports nothing else; when there is none it
starts one and answers that prompt by words alone (:mod:`~clawback.core.hooks.recall_block`,
through a plain read connection).
"""

from __future__ import annotations

from clawback.core.hooks.run import Answer, HookContext
from clawback.core.warm.server import ASK_TIMEOUT_S, allowed, ask, should_start, start


def _by_meaning(ctx: HookContext) -> bool:
    embeddings = ctx.config.embeddings
    return embeddings.model.strip().lower() != "none" and ctx.paths.vectors.exists()


def answer(ctx: HookContext) -> Answer:
    event = ctx.event
    prompt = event.prompt
    if not prompt.strip() or prompt.lstrip().startswith("/"):
        return Answer(detail="a command, not a question")  # /compact, /clear: nothing to recall
    if _by_meaning(ctx) and allowed(ctx.config.hooks.warm_minutes):
        request = {
            "prompt": prompt,
            "session_id": event.session_id,
            "cap": ctx.config.hooks.recall_tokens,
        }
        reply = ask(ctx.paths, request, min(ASK_TIMEOUT_S, ctx.seconds_left() - 0.5))
        if reply is not None:
            return Answer(text=str(reply["text"]), detail=f"hybrid: {reply.get('detail', '')}")
        if should_start(ctx.paths):
            start(ctx.paths)
    # Imported only now: a prompt the warm process answered needs none of it.
    from clawback.core.hooks import recall_block

    if _by_meaning(ctx) and not allowed(ctx.config.hooks.warm_minutes):
        return recall_block.in_process(ctx)
    return recall_block.by_words(ctx)
