"""The session-key grammar: parsing, building, normalising, and malformed keys."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from clawback.core.errors import SessionKeyError, UsageError
from clawback.core.formats.session_keys import (
    RESERVED_NAMES,
    SUFFIX_MARKERS,
    SessionKey,
    channel_key,
    dm_key,
    group_key,
    main_key,
    normalize_session_key,
    parse_session_key,
    simple_key,
    subagent_key,
    thread_key,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("agent:main:main", SessionKey(kind="main", agent_id="main")),
        ("agent:work:dm:+15551234567", SessionKey(kind="dm", agent_id="work", peer="+15551234567")),
        (
            "agent:main:telegram:dm:5550123",
            SessionKey(kind="dm", agent_id="main", channel="telegram", peer="5550123"),
        ),
        (
            "agent:main:whatsapp:biz:dm:4912345",
            SessionKey(
                kind="dm", agent_id="main", channel="whatsapp", account="biz", peer="4912345"
            ),
        ),
        (
            "agent:main:discord:group:1122334455",
            SessionKey(kind="group", agent_id="main", channel="discord", peer="1122334455"),
        ),
        (
            "agent:main:slack:channel:c01abc",
            SessionKey(kind="channel", agent_id="main", channel="slack", peer="c01abc"),
        ),
        (
            "agent:main:matrix:channel:!room:example.org",
            SessionKey(kind="channel", agent_id="main", channel="matrix", peer="!room:example.org"),
        ),
        ("local:alice", SessionKey(kind="simple", channel="local", peer="alice")),
        ("cron:nightly:run:7", SessionKey(kind="simple", channel="cron", peer="nightly:run:7")),
    ],
)
def test_parse_each_form(text: str, expected: SessionKey) -> None:
    assert parse_session_key(text) == expected
    assert str(expected) == text


def test_thread_and_subagent_suffixes_chain_to_their_parent() -> None:
    key = parse_session_key("agent:main:discord:group:42:thread:9:subagent:scout")
    assert key.subagent == "scout"
    assert key.thread is None
    assert key.parent is not None
    assert key.parent.thread == "9"
    assert str(key.parent) == "agent:main:discord:group:42:thread:9"
    assert key.root == SessionKey(kind="group", agent_id="main", channel="discord", peer="42")
    assert (key.kind, key.channel, key.peer) == ("group", "discord", "42")
    assert str(key) == "agent:main:discord:group:42:thread:9:subagent:scout"


def test_the_whole_key_is_case_insensitive() -> None:
    assert parse_session_key("  AGENT:Main:Telegram:DM:Mira ") == parse_session_key(
        "agent:main:telegram:dm:mira"
    )
    assert str(parse_session_key("Local:Alice")) == "local:alice"


def test_normalize_trims_lowercases_and_collapses_whitespace() -> None:
    assert normalize_session_key("  Agent : Main :\tMAIN \n") == "agent:main:main"
    assert normalize_session_key("local:John   Smith") == "local:john smith"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("agent", "incomplete"),
        ("agent:main", "incomplete"),
        ("agent:main:weird", "does not follow the grammar"),
        ("agent:main:dm", "missing the peer"),
        ("agent:main:discord:group", "missing the group id"),
        ("agent:main:main:thread", "no id after it"),
        ("agent:main:main:thread:subagent", "followed by"),
        ("agent::main", "empty segment at position 2"),
        ("local:john smith", "contains whitespace"),
        ("alice", "neither"),
        ("agent:main:thread:dm:x", "cannot be a channel name"),
        ("agent:main:tg:acct:group:x", "does not follow the grammar"),
    ],
)
def test_malformed_keys_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SessionKeyError, match=message):
        parse_session_key(text)


def test_session_key_error_is_a_usage_error() -> None:
    """The CLI reports it as a user mistake (exit code 2), not a crash."""
    with pytest.raises(UsageError):
        parse_session_key("nope")


def test_non_text_is_rejected_with_session_key_error() -> None:
    with pytest.raises(SessionKeyError, match="must be text"):
        parse_session_key(42)  # type: ignore[arg-type]


def test_builders_produce_the_documented_strings() -> None:
    assert str(main_key("Main")) == "agent:main:main"
    assert str(dm_key("main", "5550123")) == "agent:main:dm:5550123"
    assert str(dm_key("main", "5550123", channel="telegram")) == "agent:main:telegram:dm:5550123"
    assert str(dm_key("main", "1", "whatsapp", "biz")) == "agent:main:whatsapp:biz:dm:1"
    assert str(group_key("main", "discord", "42")) == "agent:main:discord:group:42"
    assert str(channel_key("main", "slack", "C01ABC")) == "agent:main:slack:channel:c01abc"
    assert str(simple_key("local", "alice")) == "local:alice"
    assert str(thread_key(group_key("main", "discord", "42"), "9")) == (
        "agent:main:discord:group:42:thread:9"
    )
    assert str(subagent_key(main_key("main"), "scout")) == "agent:main:main:subagent:scout"


@pytest.mark.parametrize(
    "build",
    [
        lambda: main_key(""),
        lambda: main_key("a:b"),
        lambda: dm_key("main", "peer", account="biz"),
        lambda: dm_key("main", "peer", channel="group"),
        lambda: group_key("main", "thread", "1"),
        lambda: group_key("main", "discord", "1:thread:2"),
        lambda: channel_key("main", "slack", ""),
        lambda: simple_key("agent", "alice"),
        lambda: simple_key("local", "john smith"),
        lambda: thread_key(main_key("main"), "subagent"),
        lambda: subagent_key(main_key("main"), "a:b"),
    ],
)
def test_builders_reject_parts_that_would_not_read_back(build: Callable[[], str]) -> None:
    with pytest.raises(SessionKeyError):
        build()


# --- properties -----------------------------------------------------------------------------

_ALPHABET = st.characters(
    codec="utf-8",
    exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
    exclude_characters=":",
)
segments = st.text(_ALPHABET, min_size=1, max_size=8).filter(
    lambda s: s == s.lower() == s.strip() and not any(c.isspace() for c in s)
)
names = segments.filter(lambda s: s not in RESERVED_NAMES)
id_segments = segments.filter(lambda s: s not in SUFFIX_MARKERS)
identifiers = st.lists(id_segments, min_size=1, max_size=3).map(":".join)


@st.composite
def session_keys(draw: st.DrawFn) -> SessionKey:
    kind = draw(st.sampled_from(["main", "dm", "group", "channel", "simple"]))
    agent = draw(segments)
    if kind == "main":
        key = main_key(agent)
    elif kind == "dm":
        channel = draw(st.none() | names)
        account = draw(st.none() | names) if channel else None
        key = dm_key(agent, draw(identifiers), channel, account)
    elif kind == "group":
        key = group_key(agent, draw(names), draw(identifiers))
    elif kind == "channel":
        key = channel_key(agent, draw(names), draw(identifiers))
    else:
        key = simple_key(draw(segments.filter(lambda s: s != "agent")), draw(identifiers))
    for marker in draw(st.lists(st.sampled_from(["thread", "subagent"]), max_size=3)):
        value = draw(id_segments)
        key = thread_key(key, value) if marker == "thread" else subagent_key(key, value)
    return key


@given(session_keys())
def test_build_str_parse_round_trip(key: SessionKey) -> None:
    assert parse_session_key(str(key)) == key
    assert normalize_session_key(str(key)) == str(key)


@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize_session_key(text)
    assert normalize_session_key(once) == once


@given(st.text())
def test_parse_raises_only_session_key_error(text: str) -> None:
    try:
        key = parse_session_key(text)
    except SessionKeyError:
        return
    assert parse_session_key(str(key)) == key


@given(
    st.lists(
        st.sampled_from(
            ["agent", "main", "dm", "group", "channel", "thread", "subagent", "x", "tg", ""]
        ),
        max_size=8,
    ).map(":".join)
)
def test_parse_grammar_words_in_any_order(text: str) -> None:
    try:
        key = parse_session_key(text)
    except SessionKeyError:
        return
    assert parse_session_key(str(key)) == key
