"""The pre-compaction memory flush: the threshold, once per cycle, NO_REPLY, propose and apply."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clawback.core.chat.engine import ChatEngine
from clawback.core.chat.sessions import ChatSession
from clawback.core.claude.errors import ClaudeRateLimited
from clawback.core.claude.events import Usage
from clawback.core.config import ChatConfig
from clawback.core.formats.native import message_event
from clawback.core.home import Home
from clawback.core.memory.flush import (
    FLUSH_SYSTEM_PROMPT,
    FlushPolicy,
    is_no_reply,
)
from clawback.core.memory.lifecycle import CompactionPolicy, MemoryLifecycleHooks
from clawback.core.search.engine import search
from clawback.core.timeutil import format_ts

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FakeClaude,
    fake_claude_fixture,
    no_leftover_processes,
)

KEY = "local:alice"
NOTES = "- Alice grows Black Krim tomatoes in raised bed 3.\n- Next: order quokkaberry compost."


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=10)
        return self.now


@pytest.fixture(name="clock")
def clock_fixture() -> Clock:
    return Clock()


@pytest.fixture(name="engine")
def engine_fixture(home: Home, fake_claude: FakeClaude, clock: Clock) -> ChatEngine:
    return home.chat_engine(runner=fake_claude.runner(timeout=10.0), clock=clock, tz=UTC)


def lifecycle(engine: ChatEngine) -> MemoryLifecycleHooks:
    """The engine's memory lifecycle: what a home's chat engines run between turns."""
    assert isinstance(engine.hooks, MemoryLifecycleHooks)
    return engine.hooks


def seed(
    engine: ChatEngine, count: int, *, key: str = KEY, words: str = "about the garden"
) -> ChatSession:
    """A chat session with ``count`` alternating user/assistant messages (no claude call)."""
    session, _ = engine.store.get_or_create(key)
    transcript = engine.store.ensure_transcript(session)
    start = session.message_count
    lines = [
        message_event(
            f"{session.id[:8]}-m{start + i}",
            "user" if (start + i) % 2 == 0 else "assistant",
            f"message {start + i} {words}",
            format_ts(engine.clock()),
        )
        for i in range(count)
    ]
    transcript.append(lines, sync=True)
    engine.store.record_messages(session.id, count)
    return engine.store.require(session.id)


def with_usage(
    engine: ChatEngine, session: ChatSession, total: int, window: int | None = None
) -> ChatSession:
    return engine.store.record_usage(session.id, Usage(input=total), context_window=window)


def make_session(**values: Any) -> ChatSession:
    base = ChatSession(
        "s1", KEY, "/tmp/s1.jsonl", "2026-05-01T10:00:00.000Z", "2026-05-01T10:00:00.000Z"
    )
    return replace(base, **values)


# ------------------------------------------------------------------------------------ policy


@pytest.mark.parametrize(
    ("total", "due"), [(175_999, False), (176_000, True), (176_001, True), (0, False)]
)
def test_threshold_boundaries_with_the_configured_window(total: int, due: bool) -> None:
    policy = FlushPolicy()  # 200,000 - 20,000 - 4,000 = 176,000
    assert policy.threshold(make_session()) == 176_000
    assert policy.should_flush(make_session(total_tokens=total)) is due


@pytest.mark.parametrize(("total", "due"), [(75_999, False), (76_000, True), (76_001, True)])
def test_threshold_uses_the_window_the_model_reported(total: int, due: bool) -> None:
    policy = FlushPolicy()
    session = make_session(total_tokens=total, context_tokens=100_000)
    assert policy.window(session) == 100_000
    assert policy.should_flush(session) is due


def test_policy_from_config() -> None:
    chat = ChatConfig(context_window=50_000, reserve_tokens_floor=1_000, soft_threshold_tokens=500)
    policy = FlushPolicy.from_config(chat)
    assert policy.threshold(make_session()) == 48_500
    assert not policy.should_flush(make_session(total_tokens=48_499))
    assert policy.should_flush(make_session(total_tokens=48_500))


def test_with_the_defaults_the_flush_comes_before_compaction() -> None:
    chat = ChatConfig()
    session = make_session()
    flush_at = FlushPolicy.from_config(chat).threshold(session)
    assert flush_at == FlushPolicy().threshold(session)  # the policy's own default agrees
    assert flush_at < CompactionPolicy.from_config(chat).limit(session)


def test_once_per_compaction_cycle() -> None:
    policy = FlushPolicy()
    never = make_session(total_tokens=195_000)
    assert never.memory_flush_compaction_count is None and policy.should_flush(never)
    flushed = replace(never, memory_flush_compaction_count=0)
    assert not policy.should_flush(flushed)
    compacted = replace(flushed, compaction_count=1)
    assert policy.should_flush(compacted)
    assert not policy.should_flush(replace(compacted, memory_flush_compaction_count=1))


def test_once_per_cycle_through_the_store(engine: ChatEngine) -> None:
    session = with_usage(engine, seed(engine, 2), 195_000)
    assert lifecycle(engine).flush.should_flush(session)
    engine.store.mark_memory_flush(session.id)
    session = engine.store.require(session.id)
    assert (session.memory_flush_compaction_count, session.memory_flush_at is not None) == (0, True)
    assert not FlushPolicy().should_flush(session)
    engine.store.record_compaction(session.id)
    assert FlushPolicy().should_flush(engine.store.require(session.id))


@pytest.mark.parametrize(
    ("reply", "empty"),
    [("NO_REPLY", True), ("  `NO_REPLY`\n", True), ("", True), ("no_reply.", True),
     ("- a note", False), ("Nothing to add, but NO_REPLY is a token", False)],
)  # fmt: skip
def test_no_reply_detection(reply: str, empty: bool) -> None:
    assert is_no_reply(reply) is empty


# ------------------------------------------------------------------------------------- flush


async def test_propose_writes_nothing_and_returns_the_diff(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 4, words="we talked about tomatoes")
    fake_claude.reply(NOTES)
    flush = lifecycle(engine).flush
    proposal = await flush.propose(session)
    assert proposal.notes == NOTES and not proposal.empty
    assert proposal.target_name == "memory/2026-05-01.md"
    assert not proposal.target.exists() and not (home.paths.workspace / "memory").exists()
    assert engine.store.require(session.id) == session  # nothing recorded either
    assert proposal.diff.startswith("--- a/memory/2026-05-01.md\n+++ b/memory/2026-05-01.md\n")
    assert "+# 2026-05-01\n" in proposal.diff
    assert "+- Alice grows Black Krim tomatoes in raised bed 3.\n" in proposal.diff
    assert f"+## 10:00 · {KEY} (session {session.id[:8]})\n" in proposal.diff
    # the turn ran with the flush system prompt over the session's context, without recall
    call = fake_claude.last_call()
    assert call["argv"][call["argv"].index("--system-prompt") + 1] == FLUSH_SYSTEM_PROMPT
    assert "<conversation-history>" in call["stdin"] and "message 3 we talked" in call["stdin"]
    assert "Reply NO_REPLY if nothing should be stored." in call["stdin"]
    assert "<recalled-context" not in call["stdin"]


async def test_apply_appends_under_a_heading_and_is_searchable_at_once(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 4)
    engine.store.set_label(session.id, "Garden plans")
    session = engine.store.require(session.id)
    existing = home.paths.workspace / "memory" / "2026-05-01.md"
    existing.parent.mkdir(parents=True)
    existing.write_text("# 2026-05-01\n\nWritten by hand.\n")
    fake_claude.reply(NOTES)
    flush = lifecycle(engine).flush
    proposal = await flush.propose(session)
    written = flush.apply(proposal)
    assert written == existing
    text = existing.read_text()
    assert text.startswith("# 2026-05-01\n\nWritten by hand.\n\n## 10:00 · Garden plans")
    link = f"[session {session.id[:8]}](../../sessions/{session.id}.jsonl)"
    assert link in text and f"`clawback show {session.id}`" in text
    assert (existing.parent / link.split("](")[1][:-1]).resolve() == session.transcript_path
    assert text.endswith(NOTES + "\n")
    assert (
        existing.with_name("2026-05-01.md.bak").read_text() == "# 2026-05-01\n\nWritten by hand.\n"
    )
    after = engine.store.require(session.id)
    assert after.memory_flush_compaction_count == 0 and after.memory_flush_at is not None
    (hit,) = search(home.db, "quokkaberry").hits
    assert hit.source == "memory"


async def test_apply_never_writes_through_a_symlinked_backup(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home, tmp_path: Path
) -> None:
    """Issue 11: ``flush --yes`` replaced the file a ``<today>.md.bak`` link pointed at."""
    session = seed(engine, 4)
    outside = tmp_path / "outside.md"
    outside.write_text("NOT YOURS\n")
    note = home.paths.workspace / "memory" / "2026-05-01.md"
    note.parent.mkdir(parents=True)
    note.write_text("# 2026-05-01\n")
    note.with_name("2026-05-01.md.bak").symlink_to(outside)
    fake_claude.reply(NOTES)
    flush = lifecycle(engine).flush
    assert flush.apply(await flush.propose(session)) == note
    assert outside.read_text() == "NOT YOURS\n"
    backup = note.with_name("2026-05-01.md.bak")
    assert not backup.is_symlink() and backup.read_text() == "# 2026-05-01\n"


async def test_no_reply_writes_nothing_but_counts_as_the_cycles_flush(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = with_usage(engine, seed(engine, 4), 195_000)
    fake_claude.reply("NO_REPLY")
    flush = lifecycle(engine).flush
    proposal = await flush.propose(session)
    assert proposal.empty and proposal.notes == "" and proposal.diff == "" and proposal.block == ""
    assert flush.apply(proposal) is None
    assert not (home.paths.workspace / "memory" / "2026-05-01.md").exists()
    assert not flush.should_flush(engine.store.require(session.id))


async def test_a_session_with_nothing_said_calls_no_claude(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    session, _ = engine.store.get_or_create(KEY)
    proposal = await lifecycle(engine).flush.propose(session)
    assert proposal.empty and fake_claude.calls() == []


async def test_a_failed_flush_changes_nothing(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 4)
    fake_claude.mode("err429")
    with pytest.raises(ClaudeRateLimited):
        await lifecycle(engine).flush.run(session)
    assert engine.store.require(session.id) == session
    assert not (home.paths.workspace / "memory").exists()


async def test_secrets_in_the_notes_are_masked(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 2)
    fake_claude.reply("- The deploy key is sk-ant-api03-" + "a1B2c3D4" * 8)
    flush = lifecycle(engine).flush
    written = flush.apply(await flush.propose(session))
    assert written is not None
    text = Path(written).read_text()
    assert "sk-ant-" in text and "a1B2c3D4a1B2" not in text


# ------------------------------------------------------------------------------- edited notes

EDITED = "- Alice grows Green Zebra tomatoes now.\n- Next: compost from the co-op."


async def test_edited_notes_replace_the_proposal_under_the_same_heading(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 4)
    fake_claude.reply(NOTES)
    flush = lifecycle(engine).flush
    proposal = await flush.propose(session)
    edited = proposal.with_notes(f"\n  {EDITED}  \n")
    assert edited.notes == EDITED and edited.heading == proposal.heading
    assert edited.block == proposal.block.replace(NOTES, EDITED)
    assert "+- Alice grows Green Zebra tomatoes now.\n" in edited.diff
    assert "Black Krim" not in edited.diff and "Black Krim" in proposal.diff  # a new object
    assert not proposal.target.exists()  # revising writes nothing

    written = flush.apply(edited)
    assert written == proposal.target
    text = proposal.target.read_text()
    assert text.endswith(EDITED + "\n") and "Black Krim" not in text
    assert f"## 10:00 · {KEY} (session {session.id[:8]})" in text
    assert engine.store.require(session.id).memory_flush_at is not None


async def test_edited_notes_are_diffed_against_the_file_as_it_is_now(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    fake_claude.reply(NOTES)
    proposal = await lifecycle(engine).flush.propose(seed(engine, 2))
    assert "+# 2026-05-01\n" in proposal.diff  # the file did not exist yet
    proposal.target.parent.mkdir(parents=True)
    proposal.target.write_text("# 2026-05-01\n\nWritten meanwhile.\n")
    edited = proposal.with_notes(EDITED)
    assert " Written meanwhile.\n" in edited.diff and "+# 2026-05-01\n" not in edited.diff
    given = proposal.with_notes(EDITED, current="# 2026-05-01\n\nGiven.\n")
    assert " Given.\n" in given.diff


async def test_edited_notes_are_masked_and_blank_ones_write_nothing(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 2)
    fake_claude.reply(NOTES)
    flush = lifecycle(engine).flush
    proposal = await flush.propose(session)
    secret = "sk-ant-api03-" + "a1B2c3D4" * 8
    masked = proposal.with_notes(f"- The deploy key is {secret}")
    assert secret not in masked.notes and secret not in masked.block
    assert secret not in masked.diff

    blank = proposal.with_notes("  \n ")
    assert blank.empty and blank.block == "" and blank.diff == ""
    assert flush.apply(blank) is None
    assert not proposal.target.exists()
