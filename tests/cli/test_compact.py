"""``clawback compact`` and ``compactions`` as a user runs them (installed command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .seeded_chat import session_row, state
from .test_chat import calls, run

SUMMARY = "They planned the greenhouse: a quixotic irrigation loop, 3 beds, compost due Friday."


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
