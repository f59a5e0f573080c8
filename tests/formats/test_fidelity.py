"""Issue 12 on the project's own fixtures: every transcript shape read faithfully.

``tests/fixtures/fidelity/`` holds one small file per shape (written by hand in the real
shapes): titles from summaries in other files, slash commands and custom titles; hook output,
1.0.x notices, steering prompts, images beside text, lines the CLI injects; workflow and orphan
sub-agents, a file mixing sessions, a file ending without a newline; a non-Claude-Code JSONL;
pi's ``tool`` role and epoch-ms stamps, oh-my-pi's title line; an entry longer than 2,000
characters.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from clawback.core.archive.sessions import resolve_session, session_messages
from clawback.core.errors import NotFoundError
from clawback.core.formats import detect_lines
from clawback.core.home import Home
from clawback.core.ingest.health import health
from clawback.core.ingest.sources import SourceRoot
from clawback.core.ingest.stats import IngestStats
from clawback.core.records import Source
from clawback.core.search.engine import SearchFilters, SearchHit, search

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fidelity"
PROJECT = "-home-user-work-harbor"
A = "a1a1a1a1-0000-4000-8000-000000000001"
B = "b2b2b2b2-0000-4000-8000-000000000002"
C = "c3c3c3c3-0000-4000-8000-000000000003"
D = "d4d4d4d4-0000-4000-8000-000000000004"
E = "e5e5e5e5-0000-4000-8000-000000000005"
F = "f6f6f6f6-0000-4000-8000-000000000006"
M1, M2 = "m7m7m7m7-0000-4000-8000-000000000071", "m7m7m7m7-0000-4000-8000-000000000072"
LONG_AGO = time.time() - 3600


def age(folder: Path) -> None:
    """Make every file look finished (quiet for an hour), as a checked-out fixture may not."""
    for path in folder.rglob("*"):
        os.utime(path, (LONG_AGO, LONG_AGO))


def ingest(home: Home, root: Path) -> IngestStats:
    return home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, root, "test")], full_scan=True)


@pytest.fixture
def harbor(home: Home, cc_root: Path) -> Home:
    """The fixture project ingested, without ``later/`` (the file F that arrives later)."""
    shutil.copytree(FIXTURES / "claude-code" / PROJECT, cc_root / PROJECT)
    shutil.move(cc_root / PROJECT / "later", cc_root.parent / "later")
    age(cc_root)
    ingest(home, cc_root)
    return home


def hit(home: Home, query: str, **filters: Any) -> SearchHit:
    hits = search(home.db, query, SearchFilters(**filters)).hits
    assert hits, f"no hit for {query!r}"
    return hits[0]


# --- titles -----------------------------------------------------------------------------------


def test_summary_in_another_file_titles_the_session_holding_its_leaf(harbor: Home) -> None:
    assert resolve_session(harbor.db, A).title == "Spring tide tables tuned"
    summary = hit(harbor, '"Spring tide tables tuned"')
    assert (summary.kind, summary.session_id, summary.line) == ("summary", A, 1)
    assert summary.file == f"{PROJECT}/{B}.jsonl"


def test_summary_titles_a_session_whose_file_arrives_later(harbor: Home, cc_root: Path) -> None:
    with pytest.raises(NotFoundError):
        resolve_session(harbor.db, F)
    shutil.move(cc_root.parent / "later" / f"{F}.jsonl", cc_root / PROJECT / f"{F}.jsonl")
    age(cc_root)
    ingest(harbor, cc_root)
    assert resolve_session(harbor.db, F).title == "Foghorn maintenance schedule"
    assert hit(harbor, "foghorn maintenance schedule").session_id == F


def test_a_file_holding_only_a_summary_is_no_session(harbor: Home) -> None:
    with pytest.raises(NotFoundError):
        resolve_session(harbor.db, D)
    sessions = {row[0] for row in harbor.db.execute("SELECT id FROM sessions")}
    assert sessions == {A, B, C, E, M1, M2}


def test_custom_title_wins_over_ai_title_and_titles_are_clean_lines(harbor: Home) -> None:
    assert resolve_session(harbor.db, B).title == "Harbor night shift"
    assert resolve_session(harbor.db, E).title == "/model opus"
    assert resolve_session(harbor.db, C).title == "Survey the pier pilings for rot"
    (prompt,) = harbor.db.execute("SELECT first_prompt FROM sessions WHERE id = ?", (A,)).fetchone()
    assert prompt == "Tune the harbor tide tables for the spring equinox"
    for (title,) in harbor.db.execute("SELECT coalesce(title, first_prompt) FROM sessions"):
        assert title and "\n" not in title and "<" not in title


# --- content that used to be dropped ------------------------------------------------------------


def test_hook_output_is_its_own_kind_out_of_the_conversation(harbor: Home) -> None:
    blocking = hit(harbor, '"ruff check failed"')
    assert (blocking.kind, blocking.role, blocking.line) == ("hook", "system", 6)
    assert hit(harbor, "rota service reachable").line == 3
    quiet = harbor.db.execute(
        "SELECT count(*) FROM entries e JOIN files f ON f.id = e.file_id"
        " WHERE f.file_key = ? AND e.line = 4",
        (f"{PROJECT}/{B}.jsonl",),
    ).fetchone()[0]
    assert quiet == 0  # a hook that succeeded silently says nothing worth indexing
    shown = session_messages(harbor.db, B, conversational_only=True)
    assert "hook" not in {m.kind for m in shown}
    assert search(harbor.db, "ruff", SearchFilters(kind="hook")).hits


def test_old_system_notices_and_hook_runs_are_indexed(harbor: Home) -> None:
    notice = hit(harbor, '"limit reached"')
    assert (notice.kind, notice.line, notice.session_id) == ("notification", 7, A)
    hook = hit(harbor, "seawall")
    assert (hook.kind, hook.line) == ("hook", 8)
    assert "\x1b" not in hook.snippet


def test_steering_prompt_removed_from_the_queue_is_a_prompt(harbor: Home) -> None:
    steer = hit(harbor, '"buoy lights first"')
    assert (steer.role, steer.kind, steer.line) == ("user", "text", 8)
    assert not search(harbor.db, '"list the keepers"').hits  # enqueued: it reappears, or not


def test_image_beside_text_leaves_a_placeholder_where_it_was(harbor: Home) -> None:
    blocks = [m.text for m in session_messages(harbor.db, A) if m.line == 12]
    assert blocks == ["Here is the breakwater chart, check the marker", "[image]",
                      "and compare with last year."]  # fmt: skip


def test_cli_injected_user_lines_get_their_own_kinds(harbor: Home) -> None:
    by_line = {m.line: m for m in session_messages(harbor.db, A)}
    assert (by_line[2].kind, by_line[2].role) == ("notification", "system")  # Caveat
    assert (by_line[3].kind, by_line[3].role) == ("command_output", "tool")
    assert (by_line[9].kind, by_line[9].role, by_line[9].display) == (
        "tool_use", "user", "! pytest -q tests/test_tides.py")  # fmt: skip
    assert (by_line[10].kind, by_line[10].role) == ("command_output", "tool")
    assert (by_line[11].kind, by_line[11].role) == ("interruption", "system")
    notification = hit(harbor, "foghorn logs")
    assert (notification.kind, notification.role) == ("notification", "system")
    assert not search(harbor.db, "quayside", SearchFilters(role="user")).hits
    assert not search(harbor.db, "foghorn logs", SearchFilters(role="user")).hits
    assert resolve_session(harbor.db, A).message_count == 6  # /clear, prompts, replies, !cmd


# --- wrong place or kind -----------------------------------------------------------------------


def test_workflow_sub_agent_belongs_to_its_parent(harbor: Home) -> None:
    agent = hit(harbor, "Ansel Brisk")
    assert agent.session_id == B and agent.sidechain
    assert agent.file.endswith("subagents/workflows/wf_rota01/agent-w0001.jsonl")
    ids = {row[0] for row in harbor.db.execute("SELECT id FROM sessions")}
    assert not any("#agent-" in i for i in ids)
    assert resolve_session(harbor.db, B).message_count == 5  # the sub-agent's are not its own


def test_orphan_legacy_agent_is_a_session_with_its_messages(harbor: Home) -> None:
    orphan = resolve_session(harbor.db, C)
    assert orphan.message_count == 2
    texts = [m.text for m in session_messages(harbor.db, C)]
    assert texts == [
        "Survey the pier pilings for rot",
        "Pilings 4 and 9 show rot at the waterline.",
    ]


def test_a_file_mixing_sessions_is_split_per_session(harbor: Home) -> None:
    assert hit(harbor, "tug schedule").session_id == M1
    assert hit(harbor, "ferry fares").session_id == M2
    assert resolve_session(harbor.db, M1).message_count == 2
    assert resolve_session(harbor.db, M2).message_count == 2
    assert resolve_session(harbor.db, M2).title == "Second session asks about the ferry fares"


def test_workflow_journal_and_cursor_transcript_are_skipped_by_name(harbor: Home) -> None:
    assert not harbor.db.execute("SELECT 1 FROM files WHERE file_key LIKE '%journal%'").fetchall()
    reasons = dict(health(harbor.db, harbor.paths, "no-such-claude").skipped_files[0].items())
    assert reasons["path"].endswith("wf_rota01/journal.jsonl")
    assert reasons["reason"] == "not a transcript (Claude Code workflow journal)"
    stats = harbor.ingest_paths([FIXTURES / "other"])
    assert stats.unsupported_files == 1
    [(name, reason)] = stats.skipped_files
    assert name.endswith("cursor-agent.jsonl")
    assert reason == "not a transcript format clawback reads"
    assert detect_lines([{"role": "user", "message": {"content": "hi"}}]) is None


# --- finished files without a final newline ------------------------------------------------------


def test_final_line_without_newline_is_read_once_the_file_is_quiet(
    home: Home, cc_root: Path
) -> None:
    path = cc_root / PROJECT / f"{E}.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude-code" / PROJECT / f"{E}.jsonl", path)
    ingest(home, cc_root)  # just written: the unterminated line may still be growing
    assert not search(home.db, '"Set model to opus"').hits
    assert [t["path"] for t in health(home.db, home.paths, "x").incomplete_tails] == [str(path)]
    age(cc_root)
    ingest(home, cc_root)
    assert hit(home, '"Set model to opus"').line == 2
    assert health(home.db, home.paths, "x").incomplete_tails == []
    ingest(home, cc_root)
    assert home.db.execute("SELECT count(*) FROM entries WHERE line = 2").fetchone()[0] == 1


def test_a_torn_line_that_is_not_whole_json_stays_reported(home: Home, cc_root: Path) -> None:
    path = cc_root / PROJECT / f"{E}.jsonl"
    path.parent.mkdir(parents=True)
    whole = (FIXTURES / "claude-code" / PROJECT / f"{E}.jsonl").read_text()
    path.write_text(whole[: whole.rindex("opus")])
    age(cc_root)
    ingest(home, cc_root)
    assert [t["path"] for t in health(home.db, home.paths, "x").incomplete_tails] == [str(path)]


# --- long entries -------------------------------------------------------------------------------


def test_phrase_across_the_old_piece_boundary_and_and_query_match_the_entry(
    harbor: Home,
) -> None:
    phrase = hit(harbor, '"lantern keeper ledger"')
    assert (phrase.session_id, phrase.line) == (A, 13)
    assert "\x02lantern keeper ledger\x03" in phrase.snippet
    both = hit(harbor, "anchorage brigantine")
    assert (both.session_id, both.line) == (A, 13)


# --- pi / oh-my-pi -----------------------------------------------------------------------------


def test_pi_tool_role_and_epoch_millisecond_stamps(home: Home) -> None:
    home.ingest_paths([FIXTURES / "pi" / "tool-role.jsonl"])
    result = hit(home, "brackish")
    assert (result.role, result.kind, result.timestamp) == (
        "tool", "tool_result", "2026-03-02T10:00:03.000Z")  # fmt: skip
    assert home.db.execute("SELECT count(*) FROM entries WHERE ts IS NULL").fetchone()[0] == 0


def test_oh_my_pi_file_starting_with_a_title_line_is_read(home: Home) -> None:
    stats = home.ingest_paths([FIXTURES / "pi" / "omp-title.jsonl"])
    assert stats.unsupported_files == 0
    assert resolve_session(home.db, "omp-crane").title == "Check the harbor crane"
    assert hit(home, "containers").session_id == "omp-crane"


# --- OpenClaw's session store, in the shape OpenClaw documents ------------------------------------


def test_openclaw_store_names_channels_and_parents(home: Home, tmp_path: Path) -> None:
    root = tmp_path / "openclaw-agents"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "openclaw-store" / "agents", root)
    home.ingestor().ingest([SourceRoot(Source.OPENCLAW, root, "openclaw")])
    main = resolve_session(home.db, "5e1f0c2a")
    assert (main.key, main.title) == (
        "agent:main:main",
        "What time is high tide at the north jetty?",
    )
    topic = resolve_session(home.db, "6a2b1c3d")  # transcript named <id>-topic-42.jsonl
    assert (topic.title, topic.label) == ("pilots", "pilots")
    row = home.db.execute(
        "SELECT source_title, channel FROM sessions WHERE id LIKE '6a2b1c3d%'"
    ).fetchone()
    assert row == ("telegram:g-harbor-pilots", "telegram")
    spawned = resolve_session(home.db, "7b3c2d4e")
    assert spawned.parent_id == "5e1f0c2a-1b3d-4c5e-8f70-112233445566"
    assert spawned.label == "tide research"


def test_markdown_export_shows_command_output_and_interruptions(harbor: Home) -> None:
    from clawback.core.archive.sessions import export_markdown

    text = export_markdown(harbor.db, A)
    assert "<summary>Command output</summary>" in text and "3 passed quayside" in text
    assert "*[Request interrupted by user for tool use]*" in text
    assert "seawall" not in text  # hook output stays out of the conversation
