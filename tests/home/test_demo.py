"""The demo home's chat session: a real chat session with a compaction and knowledge facts,
built without ``claude``, the same on every build, and never doubled by building again."""

from __future__ import annotations

import shutil
from pathlib import Path

from clawback.core import demo as demo_module
from clawback.core.chat.transcript import Transcript
from clawback.core.demo import build_demo_home
from clawback.core.demo.chat import KEY, SESSION_ID
from clawback.core.home import Home
from clawback.core.memory.compaction import compacted_messages, list_compactions
from clawback.core.memory.facts import FactStore
from clawback.core.search.engine import SearchFilters, search


def facts(home: Home) -> list[tuple[str, str, bool, bool]]:
    return sorted(
        (f.type, f.content, f.edited, f.active)
        for f in FactStore(home.db).list(session_id=SESSION_ID, include_superseded=True)
    )


def test_the_native_session_is_a_chat_session_with_a_compaction(demo_home: Home) -> None:
    engine = demo_home.chat_engine()
    session = engine.store.require(SESSION_ID)
    assert (session.key, session.label) == (KEY, "memory design")
    assert (session.message_count, session.compaction_count) == (4, 1)
    assert session.transcript_path == demo_home.paths.sessions / f"{SESSION_ID}.jsonl"

    (row,) = list_compactions(demo_home.db, SESSION_ID)
    assert (row.tokens_before, row.tokens_after, row.messages_removed) == (586, 538, 2)
    assert session.total_tokens == row.tokens_after
    replaced = compacted_messages(row)  # the ledger row matches the transcript's line
    assert [m.role for m in replaced] == ["user", "assistant"]
    assert replaced[0].content.startswith("How should clawback decide when to flush")

    history = engine.history(session)  # a chat in it goes on from the summary
    assert history.summary == row.summary
    assert [m.content[:20] for m in history.messages] == [
        "And the recalled con",
        "Agreed: the recalled",
    ]
    hits = search(demo_home.db, "summarizes older turns", SearchFilters(source="native")).hits
    # The summary is searchable too, and first: it holds all three words (a message holding
    # some of them follows, as keywords whose AND finds few are also searched for each word).
    assert [hit.kind for hit in hits][:1] == ["compaction"]


def test_the_facts_include_a_superseded_and_an_edited_one(demo_home: Home) -> None:
    found = FactStore(demo_home.db).list(session_id=SESSION_ID, include_superseded=True)
    assert len(found) == 5
    (old,) = [f for f in found if not f.active]
    (new,) = [f for f in found if f.id == old.superseded_by]
    assert old.type == new.type == "task_state" and old.content.startswith("Open question")
    (edited,) = [f for f in found if f.edited]
    assert edited.type == "decision" and "4,000-token soft threshold" in edited.content
    transcript = Transcript(demo_home.paths.sessions / f"{SESSION_ID}.jsonl")
    assert {f.message_id for f in found} <= {m.id for m in transcript.read().messages}


def test_building_again_adds_nothing_and_follows_the_copy(demo_home: Home, tmp_path: Path) -> None:
    before = facts(demo_home)
    copy = tmp_path / "second"
    shutil.copytree(demo_home.paths.home, copy, symlinks=True)
    build_demo_home(copy)
    build_demo_home(copy)
    again = Home.open(copy)
    try:
        assert facts(again) == before
        assert len(list_compactions(again.db)) == 1
        session = again.chat_engine().store.require(SESSION_ID)
        assert session.transcript_path == again.paths.sessions / f"{SESSION_ID}.jsonl"
    finally:
        again.close()


def test_two_builds_give_the_same_rows(tmp_path: Path) -> None:
    homes = [build_demo_home(tmp_path / name) for name in ("one", "two")]
    opened = [Home.open(home) for home in homes]
    try:
        one, two = opened
        assert facts(one) == facts(two)
        ledger = [
            [(r.created_at, r.summary, r.first_kept_id) for r in list_compactions(each.db)]
            for each in opened
        ]
        assert ledger[0] == ledger[1]
    finally:
        for each in opened:
            each.close()


def test_the_demo_keeps_its_home_private(tmp_path: Path) -> None:
    """Issue 22: ``clawback demo`` created the clawback home 0755 (the README promises 0700)
    and copied the bundled transcripts world-readable."""
    home = tmp_path / "new-home"
    demo = demo_module.demo_home(home)
    assert home.stat().st_mode & 0o777 == 0o700
    for path in [demo, *demo.rglob("*")]:
        if path.is_symlink():
            continue
        want = 0o700 if path.is_dir() else 0o600
        assert path.stat().st_mode & 0o777 == want, path
