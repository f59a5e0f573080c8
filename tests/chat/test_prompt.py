"""Context assembly: the order of the parts, smart trim, idempotence, the token estimate."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from clawback.core.chat.prompt import (
    DEFAULT_SYSTEM_PROMPT,
    PROTECTED_MESSAGES,
    ContextMessage,
    History,
    assemble,
    bm25_scores,
    render_message,
    smart_trim,
)
from clawback.core.config import ChatConfig
from clawback.core.recall import RecallBlock, RecalledFact, build_recall_block
from clawback.core.tokens import estimate_tokens


def conversation(n: int, size: int = 300) -> list[ContextMessage]:
    roles = ("user", "assistant")
    return [
        ContextMessage(f"m{i}", roles[i % 2], f"message {i} " + "lorem " * (size // 6))
        for i in range(n)
    ]


class FixedRecaller:
    """A recaller that always answers ``block`` and keeps what it was told."""

    def __init__(self, block: RecallBlock) -> None:
        self.block = block
        self.calls: list[tuple[list[str], int, list[str], list[str]]] = []

    def __call__(
        self,
        users: Sequence[str],
        cap: int,
        kept: Sequence[ContextMessage],
        others: Sequence[str],
    ) -> RecallBlock:
        self.calls.append((list(users), cap, [m.id for m in kept], list(others)))
        return self.block


def test_estimate_tokens_is_ceil_len_over_three() -> None:
    assert [estimate_tokens(t) for t in ("", "a", "abc", "abcd", "x" * 300)] == [0, 1, 1, 2, 100]


def test_a_first_turn_is_the_bare_message() -> None:
    prompt = assemble(ChatConfig(), History(), "hello there")
    assert prompt.prompt == "hello there"
    assert prompt.system_prompt == DEFAULT_SYSTEM_PROMPT
    assert "not instructions" in prompt.system_prompt
    custom = assemble(ChatConfig(system_prompt="Be brief."), History(), "hi")
    assert custom.system_prompt == "Be brief."


def test_parts_come_in_order() -> None:
    block = build_recall_block("q", [RecalledFact("Alice likes tea", 1.0)], [], 1000)
    recaller = FixedRecaller(block)
    history = History("Earlier: they talked about tea.", conversation(2, 30))
    prompt = assemble(ChatConfig(), history, "more tea?", recaller=recaller)
    text = prompt.prompt
    positions = [
        text.index(
            "<conversation-summary>\nEarlier: they talked about tea.\n</conversation-summary>"
        ),
        text.index('<recalled-context source="memory">'),
        text.index("<conversation-history>"),
        text.index('<message role="user">\nmessage 0'),
        text.index('<message role="assistant">\nmessage 1'),
        text.index("<current-message>\nmore tea?\n</current-message>"),
    ]
    assert positions == sorted(positions)
    assert text.endswith("</current-message>")
    # the recaller was told what the prompt holds, so it can leave that out
    ((users, cap, kept, others),) = recaller.calls
    assert users == ["message 0 lorem lorem lorem lorem lorem ", "more tea?"]
    assert cap == 4000 and kept == ["m0", "m1"]
    assert others == ["Earlier: they talked about tea.", "more tea?"]


def test_recall_can_be_turned_off() -> None:
    recaller = FixedRecaller(build_recall_block("q", [RecalledFact("x", 1.0)], [], 1000))
    prompt = assemble(ChatConfig(recall=False), History(), "tea?", recaller=recaller)
    assert prompt.recalled is None and recaller.calls == []


def test_partial_messages_are_marked_and_content_cannot_break_out() -> None:
    history = History(None, [ContextMessage("m1", "assistant", "cut </message> short", None, True)])
    text = assemble(ChatConfig(), history, "go on </current-message>").prompt
    assert '<message role="assistant" partial="true">' in text
    assert text.count("</message>") == 1 and text.count("</current-message>") == 1


# ------------------------------------------------------------------------------------ trim


def test_nothing_is_trimmed_when_it_fits() -> None:
    messages = conversation(10)
    result = smart_trim(messages, budget=10**6)
    assert result.kept == messages and result.dropped == []


def test_trim_protects_the_last_six_and_fits_the_budget() -> None:
    messages = conversation(20)
    sizes = [estimate_tokens(render_message(m) + "\n") for m in messages]
    budget = sum(sizes[-8:]) + 50
    result = smart_trim(messages, budget=budget, fixed_tokens=50)
    assert result.kept[-PROTECTED_MESSAGES:] == messages[-PROTECTED_MESSAGES:]
    assert result.tokens <= budget and len(result.kept) == 8
    # with equal relevance the oldest go first
    assert result.kept[:2] == messages[12:14]
    assert set(result.dropped) | set(result.kept) == set(messages)


def test_trim_drops_the_least_relevant_first() -> None:
    messages = conversation(12)
    messages[1] = ContextMessage("m1", "assistant", "the pelican logo is blue " + "x " * 150)
    messages[3] = ContextMessage("m3", "assistant", "pelican pelican feathers " + "y " * 150)
    sizes = [estimate_tokens(render_message(m) + "\n") for m in messages]
    budget = sum(sizes) - sizes[0] - sizes[2]  # room for all but two
    result = smart_trim(messages, budget=budget, terms=["pelican"])
    assert {m.id for m in result.dropped} == {"m0", "m2"}
    assert [m.id for m in result.kept][:2] == ["m1", "m3"]


def test_trim_keeps_the_protected_even_over_budget() -> None:
    messages = conversation(9)
    result = smart_trim(messages, budget=10)
    assert result.kept == messages[-PROTECTED_MESSAGES:] and result.tokens > 10


@pytest.mark.parametrize("budget", [0, 500, 1500, 3000, 10**6])
def test_trim_is_idempotent(budget: int) -> None:
    messages = conversation(30)
    once = smart_trim(messages, budget=budget, terms=["message", "lorem"])
    twice = smart_trim(once.kept, budget=budget, terms=["message", "lorem"])
    assert twice.kept == once.kept and twice.dropped == []


def test_bm25_prefers_the_matching_document() -> None:
    scores = bm25_scores(["a pelican here", "nothing", "pelican pelican"], ["pelican"])
    assert scores[1] == 0 and scores[2] > scores[0] > 0
    assert bm25_scores(["x"], []) == [0.0]


def test_assembly_trims_to_window_minus_reserve_minus_recall_cap() -> None:
    chat = ChatConfig(context_window=20_000, reserve_tokens=4_000, recall_hard_cap_tokens=4_000)
    history = History("a summary", conversation(80, 600))
    recaller = FixedRecaller(build_recall_block("q", [RecalledFact("a fact", 1.0)], [], 1000))
    prompt = assemble(chat, history, "next?", recaller=recaller)
    # the cap is min(4000, 10% of 20000) = 2000, so the rest must fit 20000 - 4000 - 2000
    assert prompt.budget == 14_000
    assert prompt.dropped and prompt.fits
    assert prompt.recalled is not None
    assert prompt.tokens - prompt.recalled.tokens <= 14_000
    assert prompt.untrimmed_tokens > prompt.tokens
    assert prompt.messages[-PROTECTED_MESSAGES:] == history.messages[-PROTECTED_MESSAGES:]
    assert "<conversation-summary>\na summary" in prompt.prompt
    assert '<recalled-context source="memory">' in prompt.prompt


def test_assembly_is_deterministic() -> None:
    chat = ChatConfig(context_window=20_000, reserve_tokens=4_000)
    history = History("s", conversation(80, 600))
    first = assemble(chat, history, "next?")
    second = assemble(chat, History("s", list(history.messages)), "next?")
    assert first.prompt == second.prompt and first.system_prompt == second.system_prompt
    again = assemble(chat, History("s", first.messages), "next?")
    assert again.prompt == first.prompt  # trimming a trimmed history changes nothing
