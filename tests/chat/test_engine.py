"""The chat engine's turn pipeline against the fake ``claude``: success, every failure, cancel."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clawback.core.archive.sessions import list_sessions, session_messages
from clawback.core.chat.engine import (
    ChatEngine,
    Notice,
    PromptAssembled,
    ReplyDelta,
    SessionChanged,
    ThresholdHooks,
    TurnFinished,
    TurnOutcome,
)
from clawback.core.chat.sessions import ChatSession
from clawback.core.chat.transcript import Transcript
from clawback.core.claude.errors import (
    ClaudeAuthError,
    ClaudeBadOutput,
    ClaudeCancelled,
    ClaudeError,
    ClaudeKilled,
    ClaudeNotFound,
    ClaudeNotLoggedIn,
    ClaudeOverloaded,
    ClaudeRateLimited,
    ClaudeTimeout,
)
from clawback.core.errors import UsageError
from clawback.core.formats.native import compaction_event
from clawback.core.home import Home
from clawback.core.recall import RecalledFact, build_recall_block
from clawback.core.search.engine import search

from tests.fake_claude.fixtures import (  # noqa: F401  (fixtures)
    FakeClaude,
    fake_claude_fixture,
    no_leftover_processes,
)
from tests.helpers import cc_assistant, cc_user, run_turn, write_lines

KEY = "local:alice"
LONG_REPLY = "Black Krim is a Russian heirloom tomato with dark, smoky fruit. " * 4


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=10)  # every stamp is distinct and in order
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_engine(home: Any, clock: Clock, **extra: Any) -> ChatEngine:
    """An engine on the test home, indexing as the app does; ``extra`` for runner, hooks..."""
    return ChatEngine(
        home.db, home.paths, home.config.chat, index=home.ingest_changed, clock=clock, **extra
    )


@pytest.fixture
def engine(home: Home, fake_claude: FakeClaude, clock: Clock) -> ChatEngine:
    return make_engine(home, clock, runner=fake_claude.runner(timeout=10.0), tz=UTC)


def lines(session: ChatSession) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.transcript_path.read_text().splitlines()]


def current(engine: ChatEngine) -> ChatSession:
    """The session KEY is on (the test has made one)."""
    session = engine.store.current(KEY)
    assert session is not None
    return session


def messages(session: ChatSession) -> list[tuple[str, str, bool]]:
    return [
        (line["role"], line["content"], line.get("partial", False))
        for line in lines(session)
        if line["type"] == "message"
    ]


async def collect(engine: ChatEngine, text: str, **kw: Any) -> list[Any]:
    return [event async for event in engine.turn(text, key=kw.pop("key", KEY), **kw)]


# ------------------------------------------------------------------------------------ success


async def test_a_turn_is_stored_indexed_and_counted(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    fake_claude.reply("Black Krim, planted in May.").usage(
        input=100, output=20, cache_read=1000, cache_write=50
    ).context_window(200_000)
    events = await collect(engine, "which tomato did we plant?")
    kinds = [type(e) for e in events]
    assert kinds[0] is SessionChanged and events[0].reason == "first"
    assert PromptAssembled in kinds and kinds[-1] is TurnFinished
    assert (
        "".join(e.text for e in events if isinstance(e, ReplyDelta))
        == "Black Krim, planted in May."
    )
    outcome: TurnOutcome = events[-1].outcome
    assert outcome.reply == "Black Krim, planted in May." and not outcome.is_error
    assert outcome.usage is not None and outcome.usage.total_tokens == 1150
    session = outcome.session
    assert session.key == KEY and session.message_count == 2
    assert (session.total_tokens, session.context_tokens) == (1150, 200_000)
    assert session.last_model == "claude-opus-5-5"
    header, user, reply = lines(session)
    assert header["type"] == "session" and header["id"] == session.id
    assert (user["role"], user["content"]) == ("user", "which tomato did we plant?")
    assert reply["role"] == "assistant" and reply["model"] == "claude-opus-5-5"
    assert reply["usage"]["cache_read_input_tokens"] == 1000 and "partial" not in reply
    assert fake_claude.last_call()["stdin"] == "which tomato did we plant?"
    # searchable and listed right away, with no separate ingest
    (hit,) = search(home.db, "planted").hits
    assert hit.session_id == session.id and hit.source == "native"
    (listed,) = list_sessions(home.db, source="native")
    assert listed.id == session.id and listed.message_count == 2


async def test_the_next_turn_carries_the_conversation(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.reply("It is Black Krim.")
    first = await run_turn(engine, "which tomato?", key=KEY)
    second = await run_turn(engine, "when does it ripen?", key=KEY)
    assert second.session.id == first.session.id and second.session.message_count == 4
    stdin = fake_claude.last_call()["stdin"]
    assert "<conversation-history>" in stdin and "which tomato?" in stdin
    assert stdin.index("It is Black Krim.") < stdin.index("<current-message>\nwhen does it ripen?")


async def test_the_user_message_is_on_disk_before_claude_answers(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("slow").reply(LONG_REPLY).delay(0.05)
    seen: list[list[tuple[str, str, bool]]] = []
    turn = engine.turn("tell me about Black Krim", key=KEY)
    async for event in turn:
        if isinstance(event, ReplyDelta) and not seen:
            seen.append(messages(current(engine)))
            turn.cancel()
    assert seen == [[("user", "tell me about Black Krim", False)]]


async def test_nopartial_stream_still_delivers_the_reply(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("nopartial").reply("whole at once")
    events = await collect(engine, "hi there")
    assert [e.text for e in events if isinstance(e, ReplyDelta)] == ["whole at once"]


async def test_recalled_blocks_are_never_stored(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    block = build_recall_block("q", [RecalledFact("secret fact", 1.0)], [], 500).text
    fake_claude.reply(f"Sure.\n{block}\nDone.")
    outcome = await run_turn(engine, f"look\n{block}\nat this", key=KEY)
    stored = messages(outcome.session)
    assert stored == [("user", "look\nat this", False), ("assistant", "Sure.\nDone.", False)]
    assert outcome.reply == "Sure.\nDone."


async def test_recall_brings_in_an_earlier_session(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.reply("Noted: the greenhouse thermostat is set to 18 degrees.")
    await run_turn(engine, "set the greenhouse thermostat to 18 degrees", key=KEY)
    fake_claude.reply("ok")
    await run_turn(engine, "what is the greenhouse thermostat at?", key=KEY, new=True)
    stdin = fake_claude.last_call()["stdin"]
    assert '<recalled-context source="memory">' in stdin
    assert "set the greenhouse thermostat to 18 degrees" in stdin
    assert stdin.index("</recalled-context>") < stdin.index("<current-message>")


# ------------------------------------------------------------------------------ reset and label


async def test_new_with_a_model_hint(engine: ChatEngine, fake_claude: FakeClaude) -> None:
    first = await run_turn(engine, "hello", key=KEY)
    events = await collect(engine, "/new sonnet what is WAL?")
    changed = events[0]
    assert isinstance(changed, SessionChanged) and changed.reason == "new"
    outcome = events[-1].outcome
    assert outcome.session.id != first.session.id
    assert outcome.session.model_override == "sonnet"
    assert fake_claude.last_call()["stdin"] == "what is WAL?"  # nothing of the old session
    argv = fake_claude.last_call()["argv"]
    assert argv[argv.index("--model") + 1] == "sonnet"
    await run_turn(engine, "and checkpoints?", key=KEY)  # the override sticks to the session
    argv = fake_claude.last_call()["argv"]
    assert argv[argv.index("--model") + 1] == "sonnet"
    await run_turn(engine, "and now?", key=KEY, model="haiku")  # --model: this turn only
    argv = fake_claude.last_call()["argv"]
    assert argv[argv.index("--model") + 1] == "haiku"


async def test_bare_reset_starts_a_session_without_calling_claude(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    first = await run_turn(engine, "hello", key=KEY)
    calls = len(fake_claude.calls())
    outcome = await run_turn(engine, "/reset", key=KEY)
    assert outcome.command == "new" and outcome.session.id != first.session.id
    assert len(fake_claude.calls()) == calls
    assert current(engine).id == outcome.session.id


async def test_label_command(engine: ChatEngine, fake_claude: FakeClaude, home: Home) -> None:
    await run_turn(engine, "hello", key=KEY)
    calls = len(fake_claude.calls())
    events = await collect(engine, "/label   Garden  plans ")
    assert isinstance(events[-1], Notice) and "Garden plans" in events[-1].text
    session = engine.store.current(KEY)
    assert session is not None and session.label == "Garden plans"
    assert len(fake_claude.calls()) == calls
    assert list_sessions(home.db, text="garden plans")[0].id == session.id


async def test_a_stale_session_is_replaced(
    engine: ChatEngine, fake_claude: FakeClaude, clock: Clock
) -> None:
    first = await run_turn(engine, "hello", key=KEY)
    clock.now += timedelta(hours=5)
    events = await collect(engine, "hello again")
    assert isinstance(events[0], SessionChanged) and events[0].reason == "stale"
    assert events[-1].outcome.session.id != first.session.id


async def test_empty_message_is_a_usage_error(engine: ChatEngine) -> None:
    with pytest.raises(UsageError):
        await run_turn(engine, "   ", key=KEY)


# ------------------------------------------------------------------------------------ failures


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("err401", ClaudeAuthError),
        ("err429", ClaudeRateLimited),
        ("err529", ClaudeOverloaded),
        ("nokey", ClaudeNotLoggedIn),
        ("badjson", ClaudeBadOutput),
        ("crash", ClaudeKilled),
    ],
)
async def test_each_failure_keeps_the_user_message(
    engine: ChatEngine,
    fake_claude: FakeClaude,
    home: Home,
    mode: str,
    error: type,
) -> None:
    fake_claude.mode(mode)
    turn = engine.turn("remember the zucchini", key=KEY)
    with pytest.raises(error):
        async for _ in turn:
            pass
    session = engine.store.current(KEY)
    assert session is not None and session.message_count == 1
    stored = [line for line in lines(session) if line["type"] == "message"]
    assert stored[0]["role"] == "user" and stored[0]["content"] == "remember the zucchini"
    assert stored[-1]["role"] == "system" and "failed" in stored[-1]["content"]
    assert turn.outcome is not None and turn.outcome.is_error and turn.outcome.error
    assert search(home.db, "zucchini").hits  # indexed even though the turn failed


async def test_a_retry_after_a_failure_stores_and_sends_the_message_once(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.reply("It is Black Krim.")
    await run_turn(engine, "which tomato?", key=KEY)
    fake_claude.mode("err429")
    with pytest.raises(ClaudeRateLimited):
        await run_turn(engine, "when does it ripen?", key=KEY)
    fake_claude.mode("success").reply("In August.")
    outcome = await run_turn(engine, "when does it ripen?", key=KEY)  # the retry
    users = [m for m in messages(outcome.session) if m[0] == "user"]
    assert users == [("user", "which tomato?", False), ("user", "when does it ripen?", False)]
    assert outcome.session.message_count == 4  # two questions, two replies
    stdin = fake_claude.last_call()["stdin"]
    assert stdin.count("when does it ripen?") == 1
    # a new message with other words, or the same words after a reply, is stored as usual
    again = await run_turn(engine, "when does it ripen?", key=KEY)
    assert [m[1] for m in messages(again.session) if m[0] == "user"].count(
        "when does it ripen?"
    ) == 2


async def test_claude_not_installed(
    home: Home, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWBACK_CLAUDE", str(tmp_path / "no-such-claude"))
    engine = make_engine(home, clock)
    with pytest.raises(ClaudeNotFound, match="npm install"):
        await run_turn(engine, "hello?", key=KEY)
    assert messages(current(engine))[0] == ("user", "hello?", False)


async def test_killed_mid_stream_keeps_the_partial_reply(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("killed").reply(LONG_REPLY)
    with pytest.raises(ClaudeKilled) as caught:
        await run_turn(engine, "tell me everything", key=KEY)
    partial = caught.value.partial_text
    assert partial and LONG_REPLY.startswith(partial) and partial != LONG_REPLY
    stored = messages(current(engine))
    assert stored[0] == ("user", "tell me everything", False)
    assert stored[1] == ("assistant", partial, True)
    assert stored[2][0] == "system"


async def test_timeout_keeps_everything(home: Home, fake_claude: FakeClaude, clock: Clock) -> None:
    fake_claude.mode("stall").reply(LONG_REPLY)
    engine = make_engine(home, clock, runner=fake_claude.runner(timeout=1.0))
    with pytest.raises(ClaudeTimeout):
        await run_turn(engine, "slowly now", key=KEY)
    stored = messages(current(engine))
    assert stored[0] == ("user", "slowly now", False)
    assert stored[1][0] == "assistant" and stored[1][2] is True


# -------------------------------------------------------------------------------- cancellation


async def test_cancel_keeps_the_partial_reply_marked_partial(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("slow").reply(LONG_REPLY).delay(0.1)
    turn = engine.turn("tell me slowly", key=KEY)
    events = []
    async for event in turn:
        events.append(event)
        if sum(isinstance(e, ReplyDelta) for e in events) == 2:
            turn.cancel()
    assert isinstance(events[-1], TurnFinished)
    outcome = events[-1].outcome
    assert outcome.cancelled and outcome.partial and not outcome.is_error
    streamed = "".join(e.text for e in events if isinstance(e, ReplyDelta))
    assert outcome.reply.startswith(streamed) and outcome.reply != LONG_REPLY
    stored = messages(outcome.session)
    assert stored == [("user", "tell me slowly", False), ("assistant", outcome.reply, True)]
    assert outcome.session.message_count == 2


async def test_engine_cancel_from_elsewhere(engine: ChatEngine, fake_claude: FakeClaude) -> None:
    fake_claude.mode("slow").reply(LONG_REPLY).delay(0.1)
    streaming = asyncio.Event()

    def on_event(event: object) -> None:
        if isinstance(event, ReplyDelta):
            streaming.set()

    async def cancel_once_streaming() -> None:
        await asyncio.wait_for(streaming.wait(), 10)
        engine.cancel()

    canceller = asyncio.create_task(cancel_once_streaming())
    outcome = await run_turn(engine, "go on", key=KEY, on_event=on_event)
    await canceller
    assert outcome.cancelled and outcome.partial


async def test_cancelling_the_task_keeps_the_partial_and_propagates(
    engine: ChatEngine, fake_claude: FakeClaude
) -> None:
    fake_claude.mode("slow").reply(LONG_REPLY).delay(0.1)
    deltas: list[str] = []
    two_deltas = asyncio.Event()

    async def consume() -> None:
        async for event in engine.turn("tell me", key=KEY):
            if isinstance(event, ReplyDelta):
                deltas.append(event.text)
                if len(deltas) == 2:
                    two_deltas.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(two_deltas.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = messages(current(engine))
    assert stored[0] == ("user", "tell me", False)
    assert stored[1][0] == "assistant" and stored[1][2] is True
    assert stored[1][1].startswith("".join(deltas))


async def test_cancel_before_claude_starts(engine: ChatEngine, fake_claude: FakeClaude) -> None:
    turn = engine.turn("never mind", key=KEY)
    turn.cancel()
    events = [event async for event in turn]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome.cancelled
    assert fake_claude.calls() == []
    assert messages(current(engine)) == [("user", "never mind", False)]


async def test_a_cancel_landing_as_claude_starts_still_ends_the_turn(
    engine: ChatEngine, fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A host on another thread (the app, the gateway) may cancel after the last check before
    # claude and before its task takes its first step: the turn must end, not wait forever.
    from clawback.core.chat.turn import ChatTurn

    fake_claude.mode("hang")
    run_claude = ChatTurn._run_claude

    def cancelled_on_the_way(turn: ChatTurn, *args: Any) -> Any:
        turn.cancel()
        return run_claude(turn, *args)

    monkeypatch.setattr(ChatTurn, "_run_claude", cancelled_on_the_way)
    turn = engine.turn("never mind", key=KEY)

    async def events_of_the_turn() -> list[Any]:
        return [event async for event in turn]

    events = await asyncio.wait_for(events_of_the_turn(), 10)
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome.cancelled
    assert messages(current(engine))[0] == ("user", "never mind", False)


async def test_a_cancel_while_claude_is_starting_ends_the_turn_cancelled(
    engine: ChatEngine, fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Cancelled while its process is being started, before claude's reader could call it a
    # ClaudeCancelled: the turn still ends as cancelled, it does not raise out of the host.
    fake_claude.mode("hang")
    turn = engine.turn("never mind", key=KEY)
    spawn = engine.runner.spawn

    async def starting(*args: Any, **kwargs: Any) -> Any:
        turn.cancel()
        await asyncio.sleep(5)
        return await spawn(*args, **kwargs)

    monkeypatch.setattr(engine.runner, "spawn", starting)

    async def events_of_the_turn() -> list[Any]:
        return [event async for event in turn]

    events = await asyncio.wait_for(events_of_the_turn(), 10)
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome.cancelled
    assert fake_claude.calls() == []


def test_claude_cancelled_is_a_cancellation() -> None:
    assert issubclass(ClaudeCancelled, asyncio.CancelledError)
    assert issubclass(ClaudeCancelled, ClaudeError)


# ---------------------------------------------------------------------------------------- hooks


class RecordingHooks(ThresholdHooks):
    def __init__(self, engine: ChatEngine | None = None, compact_over: int | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.engine = engine
        self.compact_over = compact_over

    async def maybe_flush(self, session: ChatSession) -> str | None:
        self.calls.append(("flush", session.message_count))
        return None

    async def maybe_compact(self, session: ChatSession, prompt_tokens: int) -> str | None:
        self.calls.append(("compact", prompt_tokens))
        if self.compact_over is None or prompt_tokens <= self.compact_over:
            return None
        view = Transcript(session.transcript_path).read()
        kept = view.messages[-2].id
        Transcript(session.transcript_path).append(
            [
                compaction_event(
                    "c1",
                    "2026-05-01T10:30:00.000Z",
                    "They discussed tomatoes.",
                    kept,
                    prompt_tokens,
                    100,
                )
            ]
        )
        assert self.engine is not None
        self.engine.store.record_compaction(session.id)
        return "Compacted the conversation."

    async def after_turn(self, session: ChatSession, outcome: TurnOutcome) -> str | None:
        self.calls.append(("after", session.total_tokens))
        return None


async def test_hooks_run_in_order(home: Home, fake_claude: FakeClaude, clock: Clock) -> None:
    hooks = RecordingHooks()
    engine = make_engine(home, clock, runner=fake_claude.runner(), hooks=hooks)
    fake_claude.usage(input=7, cache_read=3)
    await run_turn(engine, "hello", key=KEY)
    assert [name for name, _ in hooks.calls] == ["flush", "compact", "after"]
    assert hooks.calls[0][1] == 1  # the user's message is already stored when flush runs
    assert hooks.calls[1][1] > 0 and hooks.calls[2][1] == 10


async def test_a_compaction_hook_changes_what_is_sent(
    home: Home, fake_claude: FakeClaude, clock: Clock
) -> None:
    hooks = RecordingHooks(compact_over=10**9)
    engine = make_engine(home, clock, runner=fake_claude.runner(), hooks=hooks)
    hooks.engine = engine
    fake_claude.reply("ok")
    for text in ("first question", "second question", "third question"):
        await run_turn(engine, text, key=KEY)
    hooks.compact_over = 0
    events = await collect(engine, "fourth question")
    assert Notice("Compacted the conversation.") in events
    stdin = fake_claude.last_call()["stdin"]
    assert stdin.startswith("<conversation-summary>\nThey discussed tomatoes.")
    assert "first question" not in stdin.split("</recalled-context>")[-1]
    assert "third question" in stdin
    assert current(engine).compaction_count == 1


# ---------------------------------------------------------------------------------------- forks


async def test_a_fork_starts_from_its_parent(engine: ChatEngine, fake_claude: FakeClaude) -> None:
    fake_claude.reply("Noted.")
    parent = (await run_turn(engine, "my cat is called Miso", key=KEY)).session
    fork = engine.fork(parent.id)
    await run_turn(engine, "something only the parent knows later", session_id=parent.id)
    await run_turn(engine, "what is my cat called?", session_id=fork.id)
    stdin = fake_claude.last_call()["stdin"]
    assert "<conversation-history>" in stdin and "my cat is called Miso" in stdin
    history = stdin.split("<conversation-history>")[1]
    assert "only the parent knows later" not in history  # the parent as it was at the fork
    assert lines(fork)[0]["parent"] == parent.id


async def test_a_fork_of_a_claude_code_session(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home, cc_root: Path
) -> None:
    sid = "0b8c1f9e-1111-4222-8333-944455556666"
    write_lines(
        cc_root / "proj" / f"{sid}.jsonl",
        [
            cc_user(sid, "u1", "how do I shrink the sqlite file?", ts="2026-04-01T10:00:00.000Z"),
            cc_assistant(
                sid,
                "a1",
                [{"type": "text", "text": "Run VACUUM after deleting."}],
                ts="2026-04-01T10:00:05.000Z",
            ),
        ],
    )
    home.ingest_all()
    fork = engine.fork(sid)
    outcome = await run_turn(engine, "and with WAL on?", session_id=fork.id)
    stdin = fake_claude.last_call()["stdin"]
    assert "how do I shrink the sqlite file?" in stdin and "Run VACUUM after deleting." in stdin
    assert outcome.session.parent_id == sid
    parent_msgs = [m.text for m in session_messages(home.db, sid)]
    assert "and with WAL on?" not in parent_msgs  # the Claude Code session is untouched


# -------------------------------------------------------------------------------------- dry run


async def test_prepare_writes_nothing_and_matches_what_is_sent(
    engine: ChatEngine, fake_claude: FakeClaude, home: Home
) -> None:
    fake_claude.reply("It is Black Krim.")
    await run_turn(engine, "which tomato?", key=KEY)
    before = engine.store.current(KEY)
    assert before is not None
    size = before.transcript_path.stat().st_size
    prepared = engine.prepare("and the pepper?", key=KEY)
    assert prepared.session is not None and prepared.session.id == before.id
    assert before.transcript_path.stat().st_size == size
    assert prepared.prompt is not None
    assert "=== prompt (stdin) ===\n" + prepared.prompt.prompt in prepared.render()
    await run_turn(engine, "and the pepper?", key=KEY)
    call = fake_claude.last_call()
    assert call["stdin"] == prepared.prompt.prompt
    assert call["argv"] == prepared.argv[1:]
    fresh = engine.prepare("hello", key="local:nobody")
    assert fresh.session is None and fresh.new_session
    assert engine.store.current("local:nobody") is None
