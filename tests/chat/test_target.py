"""ChatEngine.target: the one place that decides where a turn goes, for the CLI and the app."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawback.core.chat.engine import ChatEngine
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.home import Home

from tests.helpers import cc_user, write_lines


@pytest.fixture
def engine(home: Home, cc_root: Path) -> ChatEngine:
    write_lines(
        cc_root / "proj" / "11111111-2222-3333-4444-555555555555.jsonl",
        [cc_user("11111111-2222-3333-4444-555555555555", "u1", "plan the garden beds")],
    )
    home.ingest_all()
    return home.chat_engine()


ARCHIVED = "11111111-2222-3333-4444-555555555555"


def test_a_key_goes_to_that_key(engine: ChatEngine) -> None:
    target = engine.target("local:someone")
    assert (target.key, target.session_id, target.forked) == ("local:someone", None, None)


def test_a_chat_session_is_continued_by_id_or_prefix(engine: ChatEngine) -> None:
    session, _ = engine.store.get_or_create("local:me")
    assert engine.target(session.id).session_id == session.id
    assert engine.target(session.id[:6]).session_id == session.id


def test_an_archived_session_is_forked_once_then_the_fork_continues(engine: ChatEngine) -> None:
    dry = engine.target(ARCHIVED[:8], dry=True)
    assert dry.fork_of == ARCHIVED and dry.session_id is None
    assert not [s for s in engine.store.list() if s.parent_id == ARCHIVED]  # dry forks nothing

    first = engine.target(ARCHIVED)
    assert first.forked is not None and first.fork_of == ARCHIVED
    assert first.session_id == first.forked.id
    again = engine.target(ARCHIVED)
    assert again.session_id == first.session_id and again.forked is None


def test_an_unknown_or_ambiguous_ref_is_one_clear_error(engine: ChatEngine) -> None:
    with pytest.raises(NotFoundError, match="no session 'nothing-like-it'"):
        engine.target("nothing-like-it")
    for key, new_id in (("local:a", "abcd-1"), ("local:b", "abcd-2")):
        session, _ = engine.store.get_or_create(key)
        engine.db.execute("UPDATE chat_sessions SET id = ? WHERE id = ?", (new_id, session.id))
    with pytest.raises(UsageError, match="ambiguous"):
        engine.target("abcd")
