"""``clawback flush`` as a user runs it (installed command)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.memory.test_flush import KEY

from .seeded_chat import daily_files, session_row, state
from .test_chat import calls, run

NOTES = "- Alice's greenhouse is heated by a zymurgic boiler (set to 18 °C)."


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
