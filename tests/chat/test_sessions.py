"""The chat session store: freshness (idle, daily), reset triggers, labels, forks, counters."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from clawback.core.archive.sessions import list_sessions
from clawback.core.chat.sessions import (
    FreshnessPolicy,
    SessionStore,
    local_session_key,
    normalize_label,
    parse_label_command,
    parse_reset_trigger,
    policy_for,
    resolve_model,
)
from clawback.core.claude.events import Usage
from clawback.core.config import ChatConfig
from clawback.core.errors import ConfigError, NotFoundError, SessionKeyError
from clawback.core.home import Home
from clawback.core.search.engine import search

from tests.helpers import cc_assistant, cc_user, write_lines

KEY = "local:alice"


class Clock:
    """A clock tests move by hand."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 5, 1, 10, 0, tzinfo=UTC))


@pytest.fixture
def store(home: Home, clock: Clock) -> SessionStore:
    def reindex(path: Path) -> None:
        home.ingest_changed({path})

    return SessionStore(
        home.db, home.paths, home.config.chat, clock=clock, tz=UTC, on_write=reindex
    )


# ------------------------------------------------------------------------------- freshness


def test_get_or_create_resumes_a_fresh_session(store: SessionStore, clock: Clock) -> None:
    first, created = store.get_or_create(KEY)
    assert created and first.current
    assert first.transcript_path == store.paths.sessions / f"{first.id}.jsonl"
    header = json.loads(first.transcript_path.read_text().splitlines()[0])
    assert header["id"] == first.id and header["key"] == KEY and header["parent"] is None
    clock.advance(minutes=30)
    again, created = store.get_or_create(KEY)
    assert not created and again.id == first.id


def test_idle_policy_starts_a_new_session_and_keeps_the_old(
    store: SessionStore, clock: Clock
) -> None:
    old, _ = store.get_or_create(KEY)
    store.record_messages(old.id, 2)
    store.record_usage(old.id, Usage(input=10, cache_read=5), model="opus")
    store.mark_memory_flush(old.id)
    store.record_compaction(old.id)
    clock.advance(minutes=240)
    assert store.get_or_create(KEY)[0].id == old.id  # exactly idle_minutes: still fresh
    store.touch(old.id)
    clock.advance(minutes=240, seconds=1)
    new, created = store.get_or_create(KEY)
    assert created and new.id != old.id
    assert (new.message_count, new.compaction_count, new.total_tokens) == (0, 0, 0)
    assert new.memory_flush_at is None and new.memory_flush_compaction_count is None
    stale = store.require(old.id)
    assert not stale.current and stale.message_count == 2  # kept, browsable
    assert stale.transcript_path.exists()
    assert [s.id for s in store.list(KEY)] == [new.id, old.id]


@pytest.mark.parametrize(
    ("updated", "now", "fresh"),
    [
        ((5, 1, 3, 0), (5, 1, 3, 59), True),  # before today's 04:00
        ((5, 1, 3, 0), (5, 1, 4, 0), False),  # 04:00 has just passed
        ((5, 1, 4, 30), (5, 2, 3, 59), True),  # the next 04:00 has not come yet
        ((5, 1, 4, 30), (5, 2, 4, 1), False),
        ((5, 1, 23, 0), (5, 2, 1, 0), True),  # past midnight is not a new day yet
    ],
)
def test_daily_policy(
    updated: tuple[int, int, int, int], now: tuple[int, int, int, int], fresh: bool
) -> None:
    policy = FreshnessPolicy("daily", at_hour=4)
    last = datetime(2026, *updated, tzinfo=UTC)
    assert policy.is_fresh(last, datetime(2026, *now, tzinfo=UTC), UTC) is fresh


def test_daily_policy_uses_local_time() -> None:
    policy = FreshnessPolicy("daily", at_hour=4)
    plus2 = timezone(timedelta(hours=2))
    last = datetime(2026, 5, 1, 1, 30, tzinfo=UTC)  # 03:30 local
    assert policy.is_fresh(last, datetime(2026, 5, 1, 1, 59, tzinfo=UTC), plus2)
    assert not policy.is_fresh(last, datetime(2026, 5, 1, 2, 0, tzinfo=UTC), plus2)


def test_daily_policy_through_the_store(home: Home, clock: Clock) -> None:
    chat = ChatConfig(session_reset="daily", at_hour=4)
    store = SessionStore(home.db, home.paths, chat, clock=clock, tz=UTC)
    clock.now = datetime(2026, 5, 1, 22, 0, tzinfo=UTC)
    first, _ = store.get_or_create(KEY)
    clock.now = datetime(2026, 5, 2, 3, 0, tzinfo=UTC)
    assert store.get_or_create(KEY)[0].id == first.id
    clock.now = datetime(2026, 5, 2, 4, 0, tzinfo=UTC)
    assert store.peek(KEY) is None  # peek never writes...
    assert (current := store.current(KEY)) is not None and current.id == first.id
    assert store.get_or_create(KEY)[1] is True


def test_overrides_per_type_and_per_channel() -> None:
    chat = ChatConfig(
        session_reset="idle",
        idle_minutes=240,
        reset_by_type=["thread=idle:30", "group=daily:6"],
        reset_by_channel=["telegram=daily", "discord=idle:5"],
    )
    assert policy_for("local:alice", chat) == FreshnessPolicy("idle", 240, 4)
    assert policy_for("local:alice:thread:abc", chat) == FreshnessPolicy("idle", 30, 4)
    assert policy_for("agent:main:slack:group:g1", chat) == FreshnessPolicy("daily", 240, 6)
    assert policy_for("agent:main:telegram:dm:bob", chat).mode == "daily"
    # the channel wins over the type
    assert policy_for("agent:main:discord:group:g1", chat) == FreshnessPolicy("idle", 5, 4)
    with pytest.raises(ConfigError, match="reset_by_type"):
        policy_for("local:alice", ChatConfig(reset_by_type=["thread=weekly"]))


def test_keys_are_checked_and_normalised(store: SessionStore) -> None:
    session, _ = store.get_or_create("Local:Alice")
    assert session.key == "local:alice"
    with pytest.raises(SessionKeyError):
        store.get_or_create("no-colon")


def test_local_session_key() -> None:
    assert local_session_key("Alice") == "local:alice"
    assert local_session_key("Jo Smith") == "local:jo-smith"
    assert local_session_key("thread") == "local:user-thread"
    assert local_session_key().startswith("local:")


# ----------------------------------------------------------------------------- reset triggers


@pytest.mark.parametrize(
    ("text", "command", "model", "message"),
    [
        ("/new", "new", None, ""),
        ("/reset", "reset", None, ""),
        ("  /new  ", "new", None, ""),
        ("/NEW", "new", None, ""),
        ("/new hello there", "new", None, "hello there"),
        ("/new opus", "new", "opus", ""),
        ("/new opus tell me a story", "new", "opus", "tell me a story"),
        ("/reset Sonnet what now?", "reset", "sonnet", "what now?"),
        ("/new haiku\nfirst line\nsecond", "new", "haiku", "first line\nsecond"),
        ("/new claude-sonnet-4-5 hi", "new", "claude-sonnet-4-5", "hi"),
        ("/new fast hi", "new", "claude-haiku-4-5", "hi"),  # a configured alias
        ("/new opusx hi", "new", None, "opusx hi"),  # not a model: part of the message
    ],
)
def test_reset_triggers(text: str, command: str, model: str | None, message: str) -> None:
    chat = ChatConfig(model_aliases=["fast=claude-haiku-4-5"])
    trigger = parse_reset_trigger(text, chat)
    assert trigger is not None
    assert (trigger.command, trigger.model, trigger.message) == (command, model, message)


@pytest.mark.parametrize("text", ["/newish", "hello /new", "/renew", "new", "/label x", "/ new"])
def test_not_reset_triggers(text: str) -> None:
    assert parse_reset_trigger(text, ChatConfig()) is None


def test_resolve_model() -> None:
    chat = ChatConfig(model_aliases=["Big = claude-opus-4-1"])
    assert resolve_model("OPUS", chat) == "opus"
    assert resolve_model("big", chat) == "claude-opus-4-1"
    assert resolve_model("claude-3-5-haiku-20241022", chat) == "claude-3-5-haiku-20241022"
    assert resolve_model("gpt-4", chat) is None
    with pytest.raises(ConfigError, match="model_aliases"):
        resolve_model("x", ChatConfig(model_aliases=["nonsense"]))


def test_reset_makes_a_new_current_session_with_the_model(
    store: SessionStore,
) -> None:
    old, _ = store.get_or_create(KEY)
    new = store.reset(KEY, model_override="opus")
    assert new.id != old.id and new.model_override == "opus" and new.current
    assert not store.require(old.id).current
    assert (current := store.current(KEY)) is not None and current.id == new.id


# ------------------------------------------------------------------------------------ labels


def test_label_commands_and_normalisation() -> None:
    assert parse_label_command("/label  my garden ") == "my garden"
    assert parse_label_command("/label") == ""
    assert parse_label_command("/labelled") is None
    assert parse_label_command("label x") is None
    assert normalize_label("  a   b \n c ") == "a b c"
    assert normalize_label("   ") is None
    long = normalize_label("x" * 63 + " yyyy")
    assert long is not None and len(long) <= 64 and long == "x" * 63
    assert len(normalize_label("z" * 100) or "") == 64


def test_set_label_is_stored_written_and_searchable(store: SessionStore, home: Home) -> None:
    session, _ = store.get_or_create(KEY)
    assert store.set_label(session.id, "  Tomato   planning 2026 ") == "Tomato planning 2026"
    assert store.require(session.id).label == "Tomato planning 2026"
    last = json.loads(session.transcript_path.read_text().splitlines()[-1])
    assert last["type"] == "label" and last["label"] == "Tomato planning 2026"
    # indexed at once: the session list filter finds it by its label
    (found,) = list_sessions(home.db, text="tomato planning")
    assert found.id == session.id and found.label == "Tomato planning 2026"
    # and reindexing keeps it, because the transcript holds it
    home.reindex()
    assert list_sessions(home.db, text="tomato")[0].label == "Tomato planning 2026"
    assert store.set_label(session.id, "") is None
    assert store.require(session.id).label is None


# ------------------------------------------------------------------------------------- forks


def test_fork_of_a_chat_names_its_parent(store: SessionStore, clock: Clock) -> None:
    parent, _ = store.get_or_create(KEY)
    store.set_model_override(parent.id, "sonnet")
    clock.advance(minutes=1)
    fork = store.fork(parent.id)
    assert fork.parent_id == parent.id and fork.key == KEY and fork.current
    assert fork.model_override == "sonnet"
    assert not store.require(parent.id).current
    header = json.loads(fork.transcript_path.read_text().splitlines()[0])
    assert header["parent"] == parent.id


def test_fork_of_an_archived_session(store: SessionStore, home: Home, cc_root: Path) -> None:
    sid = "0b8c1f9e-1111-4222-8333-944455556666"
    write_lines(
        cc_root / "proj" / f"{sid}.jsonl",
        [
            cc_user(sid, "u1", "how do I vacuum a sqlite db?"),
            cc_assistant(sid, "a1", [{"type": "text", "text": "Run VACUUM."}]),
        ],
    )
    home.ingest_all()
    fork = store.fork(sid)
    assert fork.parent_id == sid
    assert fork.key == f"{local_session_key()}:thread:0b8c1f9e-111"
    with pytest.raises(NotFoundError):
        store.fork("no-such-session")


# ----------------------------------------------------------------------------------- counters


def test_usage_counters_follow_the_latest_turn(store: SessionStore) -> None:
    session, _ = store.get_or_create(KEY)
    usage = Usage(input=100, output=40, cache_read=3000, cache_write=200)
    updated = store.record_usage(session.id, usage, model="claude-opus-5-5", context_window=200_000)
    assert updated.total_tokens == 3300  # input + cache_read + cache_write
    assert (updated.input_tokens, updated.output_tokens) == (100, 40)
    assert (updated.cache_read_tokens, updated.cache_write_tokens) == (3000, 200)
    assert updated.context_tokens == 200_000 and updated.last_model == "claude-opus-5-5"
    again = store.record_usage(session.id, Usage(input=5), model=None, context_window=None)
    assert again.total_tokens == 5 and again.context_tokens == 200_000
    assert again.last_model == "claude-opus-5-5"


def test_search_finds_nothing_of_an_empty_session(store: SessionStore, home: Home) -> None:
    session, _ = store.get_or_create(KEY)
    home.ingest_changed({session.transcript_path})
    assert search(home.db, "alice").hits == []
    assert list_sessions(home.db) == []  # a header alone lists nothing
