"""Compaction: the transcript stays whole, the context shrinks, the ledger records, failures undo."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from clawback.core.chat.engine import ChatEngine
from clawback.core.chat.sessions import ChatSession
from clawback.core.chat.transcript import Transcript
from clawback.core.claude.errors import ClaudeError, ClaudeTimeout
from clawback.core.claude.events import Usage
from clawback.core.home import Home
from clawback.core.memory.compaction import (
    COMPACTION_PROMPT,
    CompactionError,
    NothingToCompact,
    compacted_messages,
    list_compactions,
    start_fact_extraction,
)
from clawback.core.memory.facts import FactStore
from clawback.core.search.engine import search

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FakeClaude,
    fake_claude_fixture,
    no_leftover_processes,
)
from tests.helpers import run_turn, until

from .test_flush import (  # noqa: F401  (fixtures)
    KEY,
    clock_fixture,
    engine_fixture,
    lifecycle,
    seed,
)

SUMMARY = (
    "Alice plans a xylophonic greenhouse at /srv/garden; decided: 3 beds. Open: compost order."
)


def lines(session: ChatSession) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.transcript_path.read_text().splitlines()]


def ledger(home: Home) -> list[tuple[Any, ...]]:
    return home.db.execute("SELECT * FROM compactions").fetchall()


async def test_compaction_keeps_every_line_and_records_everything(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 10)
    before = session.transcript_path.read_bytes()
    fake_claude.reply(SUMMARY)
    record = await lifecycle(engine).compactor.compact(session)
    assert record is not None
    after = session.transcript_path.read_bytes()
    assert after.startswith(before)  # every original line, byte for byte
    (line,) = [json.loads(raw) for raw in after[len(before) :].splitlines()]
    assert line["type"] == "compaction" and line["summary"] == SUMMARY
    assert line["first_kept_id"] == f"{session.id[:8]}-m4"  # the last 6 of 10 are kept
    assert (
        line["tokens_before"] == record.tokens_before > record.tokens_after == line["tokens_after"]
    )
    assert line["model"] == "claude-opus-5-5" and line["timestamp"] == record.created_at
    now = engine.store.require(session.id)
    assert now.compaction_count == 1 and now.total_tokens == record.tokens_after
    assert now.message_count == session.message_count
    (row,) = list_compactions(home.db, session.id)
    assert (row.session_id, row.messages_removed, row.summary) == (session.id, 4, SUMMARY)
    assert (row.tokens_before, row.tokens_after) == (record.tokens_before, record.tokens_after)
    assert row.first_kept_id == f"{session.id[:8]}-m4" and row.model == "claude-opus-5-5"
    assert list_compactions(home.db) == [row] and list_compactions(home.db, "other") == []
    assert [m.content for m in compacted_messages(row)] == [
        f"message {i} about the garden" for i in range(4)
    ]
    # the summary was searchable at once, and the compacted messages still are
    (hit,) = search(home.db, "xylophonic").hits
    assert hit.session_id == session.id and hit.kind == "compaction"
    assert len(search(home.db, '"message 0 about"').hits) == 1
    # the summarization call used the compaction prompt over the compacted messages only
    call = fake_claude.last_call()
    assert call["argv"][call["argv"].index("--system-prompt") + 1] == COMPACTION_PROMPT
    assert "message 3 about" in call["stdin"] and "message 4 about" not in call["stdin"]


async def test_the_next_turn_sees_the_summary_and_the_kept_messages_only(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    session = seed(engine, 10)
    fake_claude.reply(SUMMARY)
    await lifecycle(engine).compactor.compact(session)
    history = engine.history(engine.store.require(session.id))
    assert history.summary == SUMMARY
    assert [m.id for m in history.messages] == [f"{session.id[:8]}-m{i}" for i in range(4, 10)]
    fake_claude.reply("ok")
    await run_turn(engine, "and now?", session_id=session.id)
    stdin = fake_claude.last_call()["stdin"]
    assert stdin.startswith(f"<conversation-summary>\n{SUMMARY}\n</conversation-summary>")
    body = stdin.split("</recalled-context>")[-1]
    assert "message 3 about" not in body
    assert all(f"message {i} about the garden" in body for i in range(4, 10))


async def test_a_second_compaction_summarizes_the_first(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 8)
    fake_claude.reply(SUMMARY)
    await lifecycle(engine).compactor.compact(session)
    session = seed(engine, 4)
    fake_claude.reply("Second summary.")
    await lifecycle(engine).compactor.compact(session)
    stdin = fake_claude.last_call()["stdin"]
    assert f"<earlier-summary>\n{SUMMARY}\n</earlier-summary>" in stdin
    newest, oldest = list_compactions(home.db, session.id)
    assert (oldest.summary, newest.summary) == (SUMMARY, "Second summary.")
    assert [m.content.split()[1] for m in compacted_messages(oldest)] == ["0", "1"]
    assert [m.content.split()[1] for m in compacted_messages(newest)] == ["2", "3", "4", "5"]
    assert engine.store.require(session.id).compaction_count == 2
    assert engine.history(engine.store.require(session.id)).summary == "Second summary."


@pytest.mark.parametrize("how", ["err429", "err529", "timeout", "empty", "no_reply"])
async def test_a_failed_compaction_leaves_everything_as_it_was(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home, how: str
) -> None:
    session = seed(engine, 10)
    transcript = session.transcript_path.read_bytes()
    compactor = lifecycle(engine).compactor
    expected: type[Exception] = ClaudeError
    if how in ("err429", "err529"):
        fake_claude.mode(how)
    elif how == "timeout":
        fake_claude.mode("hang")
        engine.runner = fake_claude.runner(timeout=0.5)
        expected = ClaudeTimeout
    else:
        fake_claude.reply("" if how == "empty" else "NO_REPLY")
        expected = CompactionError
    with pytest.raises(expected):
        await compactor.compact(session)
    assert session.transcript_path.read_bytes() == transcript
    assert engine.store.require(session.id) == session
    assert ledger(home) == []


async def test_a_failing_transcript_write_rolls_the_database_back(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = seed(engine, 10)
    fake_claude.reply(SUMMARY)
    compactor = lifecycle(engine).compactor
    proposal = await compactor.propose(session)

    def broken(self: Transcript, lines: Any, *, sync: bool = False) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Transcript, "append", broken)
    with pytest.raises(OSError):
        compactor.commit(proposal)
    assert engine.store.require(session.id) == session and ledger(home) == []


async def test_propose_then_confirm_or_cancel(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 9)
    fake_claude.reply(SUMMARY)
    compactor = lifecycle(engine).compactor
    transcript = session.transcript_path.read_bytes()
    proposal = await compactor.propose(session, keep=2)
    assert proposal.summary == SUMMARY and proposal.messages_removed == 7
    assert [m.id for m in proposal.kept] == [f"{session.id[:8]}-m7", f"{session.id[:8]}-m8"]
    assert proposal.tokens_after < proposal.tokens_before
    assert session.transcript_path.read_bytes() == transcript and ledger(home) == []
    seen: list[int] = []

    def cancel(p: Any) -> bool:
        seen.append(p.messages_removed)
        return False

    assert await compactor.compact(session, keep=2, confirm=cancel) is None
    assert seen == [7] and session.transcript_path.read_bytes() == transcript

    async def accept(p: Any) -> bool:
        return True

    assert await compactor.compact(session, keep=2, confirm=accept) is not None
    assert len(ledger(home)) == 1


async def test_a_stale_proposal_is_refused(engine: ChatEngine, fake_claude: FakeClaude) -> None:
    session = seed(engine, 10)
    fake_claude.reply(SUMMARY)
    compactor = lifecycle(engine).compactor
    first = await compactor.propose(session)
    second = await compactor.propose(session)
    compactor.commit(first)
    with pytest.raises(CompactionError, match="propose again"):
        compactor.commit(second)
    assert engine.store.require(session.id).compaction_count == 1


async def test_nothing_to_compact(engine: ChatEngine, fake_claude: FakeClaude) -> None:
    session = seed(engine, 6)
    with pytest.raises(NothingToCompact):
        await lifecycle(engine).compactor.propose(session)
    assert fake_claude.calls() == []


async def test_long_messages_are_cut_to_fit_the_summarization_call(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    session = seed(engine, 8, words="compost " * 20_000)  # ~160 KB each
    store = engine.store
    store.record_usage(session.id, Usage(input=1), context_window=60_000)
    fake_claude.reply(SUMMARY)
    await lifecycle(engine).compactor.propose(store.require(session.id))
    stdin = fake_claude.last_call()["stdin"]
    assert len(stdin) < (60_000 - 16_000) * 3 and "characters cut" in stdin


# ----------------------------------------------------------------------------- knowledge facts


async def test_facts_are_extracted_from_the_compacted_messages_in_the_background(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 10)
    fake_claude.reply(SUMMARY)
    compactor = lifecycle(engine).compactor
    proposal = await compactor.propose(session)
    compactor.commit(proposal)
    fake_claude.structured(
        {"summary": "Garden talk.", "facts": [{"type": "decision", "content":
         "The greenhouse gets three raised beds.", "context": "", "message_id": "m2"}]}
    )  # fmt: skip
    reports: list[str] = []
    task = start_fact_extraction(home.db, engine.runner, proposal, report=reports.append)
    assert not task.done()  # started, not awaited: the chat goes on meanwhile
    changes = await task
    assert [c.action.value for c in changes] == ["add"]
    (fact,) = FactStore(home.db).list()
    assert fact.session_id == session.id and fact.message_id == f"{session.id[:8]}-m1"
    assert reports == ["Knowledge from the compacted messages: 1 new fact(s)."]
    call = fake_claude.last_call()
    assert "--json-schema" in call["argv"] and "message 3 about" in call["stdin"]
    assert "message 4 about" not in call["stdin"]


async def test_a_failed_extraction_is_only_reported(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 10)
    fake_claude.reply(SUMMARY)
    compactor = lifecycle(engine).compactor
    proposal = await compactor.propose(session)
    compactor.commit(proposal)
    fake_claude.mode("err429")
    reports: list[str] = []
    assert (
        await start_fact_extraction(home.db, engine.runner, proposal, report=reports.append) == []
    )
    (report,) = reports
    assert report.startswith("Knowledge extraction after the compaction failed:")
    assert FactStore(home.db).list() == []
    assert engine.store.require(session.id).compaction_count == 1


async def test_cancelling_the_extraction_stops_claude(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    session = seed(engine, 10)
    fake_claude.reply(SUMMARY)
    compactor = lifecycle(engine).compactor
    proposal = await compactor.propose(session)
    compactor.commit(proposal)
    fake_claude.mode("hang")
    task = start_fact_extraction(home.db, engine.runner, proposal, report=lambda _: None)
    await until(fake_claude.calls, "claude to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task  # and no claude process is left behind (the autouse fixture checks)
