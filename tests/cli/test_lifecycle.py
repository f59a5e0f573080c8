"""``clawback flush``, ``compact`` and ``compactions`` as a user runs them (installed command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawback.core.home import Home

from tests.memory.test_flush import KEY, seed

from .test_chat import calls, run

NOTES = "- Alice's greenhouse is heated by a zymurgic boiler (set to 18 °C)."
SUMMARY = "They planned the greenhouse: a quixotic irrigation loop, 3 beds, compost due Friday."


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[Path, str]:
    """A home with one indexed chat session of 10 messages."""
    home = tmp_path / "home"
    opened = Home.open(home)
    try:
        session = seed(opened.chat_engine(), 10)
        opened.ingest_changed({session.transcript_path})
    finally:
        opened.close()
    return home, session.id


def state(home: Path, session_id: str) -> tuple[bytes, tuple[object, ...], list[object]]:
    """The transcript bytes, the session row and the ledger, to compare before and after."""
    opened = Home.open(home)
    try:
        row = opened.db.execute(
            "SELECT * FROM chat_sessions WHERE id = ?", (session_id,)
        ).fetchone()
        ledger = opened.db.execute("SELECT * FROM compactions").fetchall()
        return (home / "sessions" / f"{session_id}.jsonl").read_bytes(), tuple(row), ledger
    finally:
        opened.close()


def session_row(home: Path, session_id: str) -> dict[str, object]:
    opened = Home.open(home)
    try:
        session = opened.chat_engine().store.require(session_id)
        return session.to_json()
    finally:
        opened.close()


def daily_files(home: Path) -> list[Path]:
    return sorted((home / "workspace" / "memory").glob("*.md"))


# --------------------------------------------------------------------------------------- flush


def test_flush_dry_run_shows_the_notes_and_the_diff_and_writes_nothing(
    seeded: tuple[Path, str],
) -> None:
    home, session_id = seeded
    before = state(home, session_id)
    result = run("flush", session_id[:8], "--dry-run", home=home, reply=NOTES)
    assert result.returncode == 0, result.stderr
    assert NOTES in result.stdout and "+++ b/memory/" in result.stdout
    assert "+## " in result.stdout and f"(session {session_id[:8]})" in result.stdout
    assert "nothing was written" in result.stderr
    assert daily_files(home) == [] and state(home, session_id) == before
    assert len(calls(home)) == 1


def test_flush_off_a_terminal_without_yes_only_proposes(seeded: tuple[Path, str]) -> None:
    home, session_id = seeded
    before = state(home, session_id)
    result = run("flush", session_id, home=home, reply=NOTES)
    assert result.returncode == 0, result.stderr
    assert NOTES in result.stdout
    assert f"clawback flush {session_id[:8]} --yes" in result.stderr
    assert daily_files(home) == [] and state(home, session_id) == before


def test_flush_yes_appends_the_notes_and_search_finds_them(seeded: tuple[Path, str]) -> None:
    home, session_id = seeded
    result = run("flush", KEY, "--yes", home=home, reply=NOTES)
    assert result.returncode == 0, result.stderr
    (note,) = daily_files(home)
    text = note.read_text()
    assert f"(session {session_id[:8]})" in text and f"clawback show {session_id}" in text
    assert text.rstrip().endswith(NOTES)
    found = run("search", "zymurgic", "--json", home=home)
    (hit,) = json.loads(found.stdout)
    assert hit["source"] == "memory" and hit["file"] == f"memory/{note.name}"
    shown = run("memory", "show", f"memory/{note.name}", home=home)
    assert shown.stdout == text
    row = session_row(home, session_id)
    assert row["memory_flush_at"] is not None and row["memory_flush_compaction_count"] == 0


def test_flush_json_and_no_reply(seeded: tuple[Path, str]) -> None:
    home, session_id = seeded
    result = run("flush", session_id, "--yes", "--json", home=home, reply="NO_REPLY")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["empty"], data["applied"], data["written"], data["diff"]) == (True, True, None, "")
    assert data["session_id"] == session_id and data["target"].startswith("memory/")
    assert daily_files(home) == []
    # the flush of this cycle is recorded, so the chat does not ask for one again
    assert session_row(home, session_id)["memory_flush_compaction_count"] == 0


# ------------------------------------------------------------------------------------- compact


def test_compact_then_list_the_ledger_and_search_the_summary(seeded: tuple[Path, str]) -> None:
    home, session_id = seeded
    transcript_before, _, _ = state(home, session_id)
    result = run("compact", session_id[:8], "--yes", home=home, reply=SUMMARY)
    assert result.returncode == 0, result.stderr
    assert "4 message(s) become a summary, 6 stay verbatim" in result.stdout
    assert SUMMARY in result.stdout and "Compacted: ledger row 1." in result.stdout
    assert "Knowledge:" in result.stdout  # facts were extracted from the compacted messages
    transcript, _, ledger = state(home, session_id)
    assert transcript.startswith(transcript_before)
    last = json.loads(transcript.splitlines()[-1])
    assert last["type"] == "compaction" and last["summary"] == SUMMARY
    assert session_row(home, session_id)["compaction_count"] == 1 and len(ledger) == 1

    listed = run("compactions", home=home)
    assert listed.returncode == 0 and session_id[:8] in listed.stdout and "4 msgs" in listed.stdout
    (entry,) = json.loads(run("compactions", session_id, "--json", home=home).stdout)
    assert (entry["session_id"], entry["summary"], entry["messages_removed"]) == (
        session_id, SUMMARY, 4,
    )  # fmt: skip
    assert entry["tokens_before"] > entry["tokens_after"] > 0
    (hit,) = json.loads(run("search", "quixotic", "--json", home=home).stdout)
    assert hit["session_id"] == session_id and hit["kind"] == "compaction"


def test_compact_off_a_terminal_without_yes_changes_nothing(seeded: tuple[Path, str]) -> None:
    home, session_id = seeded
    before = state(home, session_id)
    result = run("compact", session_id, "--json", home=home, reply=SUMMARY)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["committed"] is False and data["summary"] == SUMMARY
    assert data["messages_removed"] == 4 and data["compaction"] is None
    assert state(home, session_id) == before
    plain = run("compact", session_id, home=home, reply=SUMMARY)
    assert "Not compacted" in plain.stderr and state(home, session_id) == before


@pytest.mark.parametrize(
    ("fake", "words"), [({"mode": "err429"}, "429"), ({"reply": ""}, "empty summary")]
)
def test_a_failed_compaction_is_one_line_and_changes_nothing(
    seeded: tuple[Path, str], fake: dict[str, str], words: str
) -> None:
    home, session_id = seeded
    before = state(home, session_id)
    result = run("compact", session_id, "--yes", home=home, **fake)  # type: ignore[arg-type]
    assert result.returncode == 1
    assert result.stderr.startswith("error:") and words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert state(home, session_id) == before


def test_unknown_sessions_and_an_empty_ledger(seeded: tuple[Path, str]) -> None:
    home, _ = seeded
    assert run("compactions", home=home).stderr.strip() == "No compactions yet."
    assert json.loads(run("compactions", "--json", home=home).stdout) == []
    missing = run("flush", "nosuchsession", "--yes", home=home)
    assert missing.returncode == 1 and "no clawback chat session" in missing.stderr
    assert calls(home) == []
