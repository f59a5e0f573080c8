"""The memory lifecycle inside chat turns: automatic flush and compaction through the hooks."""

from __future__ import annotations

from typing import Any

import pytest
from clawback.core.chat.engine import (
    ChatEngine,
    Notice,
    PromptAssembled,
    ThresholdHooks,
    TurnFinished,
)
from clawback.core.claude.errors import ClaudeTimeout
from clawback.core.claude.events import Usage
from clawback.core.home import Home
from clawback.core.memory.compaction import COMPACTION_PROMPT, list_compactions
from clawback.core.memory.facts import FactStore, NewFact
from clawback.core.memory.flush import FLUSH_SYSTEM_PROMPT, FlushPolicy
from clawback.core.memory.lifecycle import CompactionPolicy, MemoryLifecycleHooks

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FakeClaude,
    fake_claude_fixture,
    no_leftover_processes,
)

from .test_flush import (  # noqa: F401  (fixtures)
    KEY,
    clock_fixture,
    engine_fixture,
    seed,
)

REPLY = "- Alice keeps bees behind the quincunx greenhouse."
BIG = "the greenhouse needs shade cloth and a drip line " * 300  # ~15,000 characters


def hooks_of(engine: ChatEngine) -> MemoryLifecycleHooks:
    assert isinstance(engine.hooks, MemoryLifecycleHooks)
    return engine.hooks


async def turn(engine: ChatEngine, text: str) -> list[Any]:
    return [event async for event in engine.turn(text, key=KEY)]


def notices(events: list[Any]) -> str:
    return "\n".join(e.text for e in events if isinstance(e, Notice))


def system_prompts(fake: FakeClaude) -> list[str]:
    return [c["argv"][c["argv"].index("--system-prompt") + 1] for c in fake.calls()]


def test_the_app_wires_the_lifecycle_and_the_facts_by_default(home: Home) -> None:
    engine = home.chat_engine()
    assert isinstance(engine.hooks, MemoryLifecycleHooks) and engine.hooks.sessions is engine.store
    assert engine.facts_provider is not None
    mine = ThresholdHooks()
    assert home.chat_engine(hooks=mine).hooks is mine


async def test_facts_reach_the_recalled_context(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    FactStore(home.db).add(NewFact("decision", "The greenhouse uses quokkaberry compost."))
    await turn(engine, "which compost does the greenhouse use?")
    assert "quokkaberry" in fake_claude.last_call()["stdin"]


async def test_auto_flush_then_auto_compaction_across_turns(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    # window 20,000: a flush is due at 11,000 tokens, a prompt over 4,000 is compacted
    fake_claude.reply(REPLY).context_window(20_000).usage(input=12_000)
    first = await turn(engine, "hello there")
    assert notices(first) == ""
    session = engine.store.current(KEY)
    assert session is not None and (session.total_tokens, session.context_tokens) == (
        12_000,
        20_000,
    )

    second = await turn(engine, "what about the bees?")
    assert notices(second) == "Memory flush: saved notes from this session to memory/2026-05-01.md."
    note = (home.paths.workspace / "memory" / "2026-05-01.md").read_text()
    assert f"(session {session.id[:8]})" in note and note.rstrip().endswith(REPLY)
    flushed = engine.store.require(session.id)
    assert (flushed.memory_flush_compaction_count, flushed.compaction_count) == (0, 0)
    flush_call = fake_claude.calls()[-2]
    assert (
        flush_call["argv"][flush_call["argv"].index("--system-prompt") + 1] == FLUSH_SYSTEM_PROMPT
    )
    assert "what about the bees?" in flush_call["stdin"]

    third = await turn(engine, "and the shade cloth?")
    assert notices(third) == ""  # once per compaction cycle
    calls_before = len(fake_claude.calls())

    fourth = await turn(engine, BIG)
    text = notices(fourth)
    assert "Compacted the conversation: 6 older message(s) are now a summary" in text
    assert "Memory flush" not in text  # this cycle already had its flush
    assert system_prompts(fake_claude)[calls_before:][:1] == [COMPACTION_PROMPT]
    compacted = engine.store.require(session.id)
    assert compacted.compaction_count == 1
    (row,) = list_compactions(home.db, session.id)
    assert row.messages_removed == 6 and row.summary == REPLY
    prompt = next(e for e in fourth if isinstance(e, PromptAssembled)).prompt
    assert prompt.summary == REPLY and prompt.messages == []  # only the new message is left
    assert isinstance(fourth[-1], TurnFinished) and fourth[-1].outcome.reply == REPLY

    hooks = hooks_of(engine)
    await hooks.drain()  # the fact extraction ran in the background
    assert any("--json-schema" in c["argv"] for c in fake_claude.calls()[calls_before:])

    fifth = await turn(engine, "ok, next")
    assert notices(fifth).startswith("Memory flush: saved notes")  # a new cycle: due again
    # the background extraction's report surfaces with the next notice (this turn's or the next)
    assert "Knowledge from the compacted messages" in notices(fourth) + notices(fifth)
    assert engine.store.require(session.id).memory_flush_compaction_count == 1


async def test_the_flush_runs_before_an_automatic_compaction_even_below_its_threshold(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    # a 5,000 floor puts the flush threshold (11k) above compaction's (4k) in this small window
    hooks_of(engine).flush.policy = FlushPolicy(reserve_tokens_floor=5_000)
    fake_claude.reply(REPLY).context_window(20_000).usage(input=100)
    await turn(engine, "hello there")
    await turn(engine, "tell me about the bees")
    calls_before = len(fake_claude.calls())
    events = await turn(engine, BIG)
    text = notices(events)
    assert text.index("Memory flush: saved notes") < text.index("Compacted the conversation")
    prompts = system_prompts(fake_claude)[calls_before:]
    assert prompts[:2] == [FLUSH_SYSTEM_PROMPT, COMPACTION_PROMPT]
    assert "tell me about the bees" in fake_claude.calls()[calls_before]["stdin"]
    session = engine.store.current(KEY)
    assert session is not None and session.memory_flush_compaction_count == 0
    assert session.compaction_count == 1
    await hooks_of(engine).drain()


async def test_ask_mode_asks_once_and_writes_nothing(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    home.config.chat.flush_mode = "ask"
    fake_claude.reply("fine").context_window(20_000).usage(input=12_000)
    await turn(engine, "hello there")
    text = notices(await turn(engine, "and now?"))
    assert "type /flush to save durable memories" in text and "clawback flush" in text
    assert notices(await turn(engine, "and now again?")) == ""
    session = engine.store.current(KEY)
    assert session is not None and session.memory_flush_at is None
    assert not (home.paths.workspace / "memory").exists()
    assert FLUSH_SYSTEM_PROMPT not in system_prompts(fake_claude)
    hooks_of(engine).extract_facts = False
    compacted = notices(await turn(engine, BIG))  # compaction does not wait for a flush
    assert "Compacted the conversation" in compacted and "flush_mode = ask" in compacted
    assert FLUSH_SYSTEM_PROMPT not in system_prompts(fake_claude)


async def test_off_mode_never_flushes_but_still_compacts(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    home.config.chat.flush_mode = "off"
    hooks_of(engine).extract_facts = False
    fake_claude.reply("fine").context_window(20_000).usage(input=12_000)
    await turn(engine, "hello there")
    await turn(engine, "and now?")
    events = await turn(engine, BIG)
    assert "Compacted the conversation" in notices(events)
    assert "Memory flush" not in notices(events)
    assert FLUSH_SYSTEM_PROMPT not in system_prompts(fake_claude)
    assert not (home.paths.workspace / "memory").exists()


async def test_a_failed_flush_never_blocks_the_turn(
    engine: ChatEngine, fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = hooks_of(engine)
    attempts: list[str] = []

    async def failing(session: Any) -> Any:
        attempts.append(session.id)
        raise ClaudeTimeout(300)

    monkeypatch.setattr(hooks.flush, "run", failing)
    fake_claude.reply("still here").context_window(20_000).usage(input=12_000)
    await turn(engine, "hello there")
    events = await turn(engine, "and now?")
    assert notices(events).startswith("The memory flush failed: claude did not finish")
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome.reply == "still here"
    assert len(attempts) == 1
    await turn(engine, "again")  # waits a couple of turns before trying again
    assert len(attempts) == 1
    await turn(engine, "and again")
    assert len(attempts) == 2
    session = engine.store.current(KEY)
    assert session is not None and session.memory_flush_at is None


async def test_a_failed_compaction_never_blocks_the_turn(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.config.chat.flush_mode = "off"
    hooks = hooks_of(engine)

    async def failing(session: Any, **kw: Any) -> Any:
        raise ClaudeTimeout(300)

    monkeypatch.setattr(hooks.compactor, "propose", failing)
    fake_claude.reply("still here").context_window(20_000)
    session = seed(engine, 8, words="about the garden " * 150)  # ~20,000 characters in all
    engine.store.record_usage(session.id, Usage(input=100), context_window=20_000)
    before = session.transcript_path.read_bytes()
    events = await turn(engine, "and the greenhouse?")
    assert notices(events).startswith("Compaction failed: claude did not finish")
    prompt = next(e for e in events if isinstance(e, PromptAssembled)).prompt
    assert prompt.dropped  # smart trim made it fit instead
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome.reply == "still here"
    after = engine.store.require(session.id)
    assert after.compaction_count == 0 and list_compactions(home.db) == []
    assert session.transcript_path.read_bytes().startswith(before)


def test_compaction_policy_boundaries() -> None:
    from .test_flush import make_session

    policy = CompactionPolicy(context_window=100_000, reserve_tokens=16_000)
    assert not policy.should_compact(make_session(), 84_000)
    assert policy.should_compact(make_session(), 84_001)
    assert policy.limit(make_session(context_tokens=50_000)) == 34_000


async def test_no_flush_and_no_compaction_when_only_the_new_message_is_too_big(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    home.config.chat.context_window = 20_000  # no window reported yet: the config's is used
    fake_claude.reply("fine")
    events = await turn(engine, BIG)
    assert notices(events) == "" and len(fake_claude.calls()) == 1
    prompt = next(e for e in events if isinstance(e, PromptAssembled)).prompt
    assert prompt.untrimmed_tokens > 20_000 - 16_000
    assert list_compactions(home.db) == [] and not (home.paths.workspace / "memory").exists()
