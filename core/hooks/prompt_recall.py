"""``user-prompt``: the recall block for the prompt Claude Code is about to send.

The block is built by :func:`~clawback.core.recall.recall`, the same function clawback's
own chat uses (the prompt's words OR-ed and ranked by BM25, the knowledge facts, and, where the
archive has vectors, the fragments and facts closest in meaning), within
``hooks.recall_tokens``, with two rules for a tool that speaks on every prompt: the current
session's own lines are left out (Claude Code already has them in context), and a fragment or
fact found by words that holds less than a quarter of the prompt's words (weighted by rarity:
search's floor for loose hits, ``LOOSE_FLOOR``) is noise, so below that floor nothing is
injected at all.

In the warm process (:mod:`.serve`) recall uses the vectors it holds; in the hook's own process
(no warm process answered, :mod:`.client`) it recalls by words alone, or by meaning too with
``hooks.warm_minutes = 0`` (:mod:`.recall_block`).
"""

from __future__ import annotations

from clawback.core.hooks.run import Answer, HookContext


def _by_meaning(ctx: HookContext) -> bool:
    return ctx.config.embeddings.enabled and ctx.paths.vectors.exists()


def answer(ctx: HookContext) -> Answer:
    prompt = ctx.event.prompt
    if not prompt.strip() or prompt.lstrip().startswith("/"):
        return Answer(detail="a command, not a question")  # /compact, /clear: nothing to recall
    from clawback.core.hooks import recall_block
    from clawback.core.warm import allowed

    if ctx.warm is not None:
        return recall_block.in_warm(ctx)
    if _by_meaning(ctx) and not allowed(ctx.config.hooks.warm_minutes):
        return recall_block.in_process(ctx)
    return recall_block.by_words(ctx)
