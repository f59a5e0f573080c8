"""Issue 12 on other projects' fixtures (``../shared/peer-fixtures``) and real transcripts.

Each peer folder is ingested on its own (file keys relative to it, as ``SOURCES.md`` asks).
Skipped with a reason when the shared folders are absent; nothing here is copied into the repo.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.core.archive.sessions import resolve_session
from clawback.core.home import Home
from clawback.core.search.engine import search

# Files in formats clawback does not read, named in SOURCES.md: a usage log without session
# ids or times (ccusage's other fixtures, usage lines with both, are read for their usage).
KNOWN_UNREADABLE = {"ryoppippi__ccusage/test-transcript.jsonl"}


@pytest.fixture(scope="module")
def peers(shared_dir: Path) -> Path:
    path = shared_dir / "peer-fixtures"
    if not path.is_dir():
        pytest.skip(f"../shared/peer-fixtures not present at {path}")
    return path


@pytest.fixture(scope="module")
def peer_homes(peers: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Home]]:
    """Every peer folder ingested into its own home, once for the module."""
    homes: dict[str, Home] = {}
    for folder in sorted(p for p in peers.iterdir() if p.is_dir()):
        home = Home.open(tmp_path_factory.mktemp(folder.name))
        home.ingest_paths([folder])
        homes[folder.name] = home
    yield homes
    for home in homes.values():
        home.close()


def test_no_file_of_a_readable_format_is_reported_unknown(peers: Path, tmp_path: Path) -> None:
    home = Home.open(tmp_path / "home")
    try:
        stats = home.ingest_paths([peers])
    finally:
        home.close()
    reasons = {
        Path(name).relative_to(peers.resolve()).as_posix(): reason
        for name, reason in stats.skipped_files
    }
    unknown = {name for name, reason in reasons.items() if reason.startswith("not a transcript")}
    assert unknown == KNOWN_UNREADABLE | {
        "handgemacht-ai__claude-code-log/workflow_basic/11110000-0000-4000-8000-000000000001"
        "/subagents/workflows/wf_demo01/journal.jsonl"
    }
    others = {reason for name, reason in reasons.items() if name not in unknown}
    assert others == set()
    assert stats.empty_files > 0  # Claude Code leaves empty session files behind: counted apart
    assert not stats.errors


def test_every_session_has_a_clean_one_line_title(peer_homes: dict[str, Home]) -> None:
    for name, home in peer_homes.items():
        for sid, title in home.db.execute("SELECT id, coalesce(title, first_prompt) FROM sessions"):
            assert title, f"{name}: session {sid} has no title"
            assert "\n" not in title and "\x1b" not in title, f"{name}: {sid}: {title!r}"
            assert not re.search(r"</?[a-z][\w-]*>", title), f"{name}: {sid}: {title!r}"


def test_cross_file_summaries_title_their_sessions(peer_homes: dict[str, Home]) -> None:
    viewer = peer_homes["d-kimuson__claude-code-viewer"].db
    assert (
        resolve_session(viewer, "1af7fc5e-8455-4414-9ccd-011d40f70b2a").title
        == "Empty Repo Setup: CLAUDE.md Foundation Created"
    )
    log = peer_homes["handgemacht-ai__claude-code-log"].db
    assert resolve_session(log, "4379d1bf").title == "CSS Details Margin Styling"
    assert resolve_session(log, "aa5c5ada").title == "Cache Version Compatibility Tests Added"
    # 4e27c414-... holds nothing but a summary of a session not in the folder.
    assert not log.execute("SELECT 1 FROM sessions WHERE id LIKE '4e27c414%'").fetchall()


def test_hooks_notices_and_steering_prompts_are_found(peer_homes: dict[str, Home]) -> None:
    log = peer_homes["handgemacht-ai__claude-code-log"].db
    blocking = search(log, '"ruff check failed"').hits[0]
    assert (blocking.kind, blocking.file, blocking.line) == ("hook", "hook_attachments.jsonl", 5)
    notice = search(log, '"Opus 4 limit reached"').hits[0]
    assert (notice.kind, notice.file, notice.line) == (
        "notification", "system_model_change.jsonl", 1)  # fmt: skip
    steer = search(peer_homes["daaain__claude-code-log"].db, '"focus on the parser first"').hits
    assert (steer[0].role, steer[0].file, steer[0].line) == (
        "user", "session_id_steering_order.jsonl", 3)  # fmt: skip


def test_injected_lines_are_not_prompts(peer_homes: dict[str, Home]) -> None:
    log = peer_homes["handgemacht-ai__claude-code-log"].db
    user_kinds = {
        row[0]
        for row in log.execute("SELECT text FROM entries WHERE role = 'user' AND kind = 'text'")
    }
    for prefix in ("<bash-stdout>", "<local-command-stdout>", "<task-notification>",
                   "[Request interrupted by user", "Caveat: The messages below"):  # fmt: skip
        assert not any(t.lstrip().startswith(prefix) for t in user_kinds), prefix


def test_workflow_agents_and_orphan_agents(peer_homes: dict[str, Home]) -> None:
    log = peer_homes["handgemacht-ai__claude-code-log"].db
    parent = "11110000-0000-4000-8000-000000000001"
    assert not log.execute("SELECT 1 FROM sessions WHERE id LIKE ?", (f"{parent}#%",)).fetchall()
    agents = log.execute(
        "SELECT DISTINCT e.session_id FROM entries e JOIN files f ON f.id = e.file_id"
        " WHERE f.file_key LIKE 'workflow_basic/%/workflows/%'"
    ).fetchall()
    assert agents == [(parent,)]
    # Nine legacy agents of 741790a4-..., whose own file never existed.
    assert resolve_session(log, "741790a4").message_count > 0


def test_pi_variants(peer_homes: dict[str, Home]) -> None:
    memex = peer_homes["nicosuave__memex"].db
    tool = search(memex, '"permission denied"').hits[0]
    assert (tool.role, tool.kind, tool.file, tool.line) == ("tool", "tool_result", "pi.jsonl", 3)
    assert tool.timestamp == "2026-07-01T00:00:02.000Z"
    assert resolve_session(memex, "omp-session").title == "Inspect the project"
    assert not search(memex, "ciphertext").hits  # redacted thinking is never indexed


def test_phrases_of_every_kind_are_found_at_their_file_and_line(
    peer_homes: dict[str, Home],
) -> None:
    """Three consecutive words of sampled entries of each kind, searched as a phrase."""
    rng = random.Random(12)
    checked: set[str] = set()
    for home in peer_homes.values():
        kinds = [row[0] for row in home.db.execute("SELECT DISTINCT kind FROM entries")]
        for kind in kinds:
            rows = home.db.execute(
                "SELECT e.id, e.text, f.file_key, e.line FROM entries e"
                " JOIN files f ON f.id = e.file_id WHERE e.kind = ? ORDER BY e.id",
                (kind,),
            ).fetchall()
            for entry_id, text, file_key, line in rng.sample(rows, min(3, len(rows))):
                words = re.findall(r"[A-Za-z]{4,}", text)
                if len(words) < 3:
                    continue
                start = rng.randrange(len(words) - 2)
                phrase = " ".join(words[start : start + 3])
                if not re.search(r"\b" + r"\W+".join(words[start : start + 3]) + r"\b", text):
                    continue  # the words are not adjacent in the text
                hits = search(home.db, f'"{phrase}"', limit=1000).hits
                assert any(h.entry_id == entry_id for h in hits), (kind, file_key, line, phrase)
                assert all(h.file and h.line for h in hits)
                checked.add(kind)
    assert {"text", "tool_use", "tool_result", "thinking", "hook", "notification"} <= checked


def test_real_cursor_transcript_is_not_claude_code(shared_dir: Path, tmp_path: Path) -> None:
    cursor = shared_dir / "real-transcripts" / "other" / "jazzyalex__agent-sessions"
    if not cursor.is_dir():
        pytest.skip(f"{cursor} not present")
    home = Home.open(tmp_path / "home")
    try:
        stats = home.ingest_paths([cursor])
        assert stats.entries == 0
        named = {Path(name).name for name, _ in stats.skipped_files}
        assert "test-session.jsonl" in named
    finally:
        home.close()


def test_ingest_json_names_unknown_files(peers: Path, tmp_path: Path) -> None:
    from tests.cli_runner import run_cli

    result = run_cli("ingest", str(peers / "ryoppippi__ccusage"), "--json", home=tmp_path / "h")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["unsupported_files"] == 1  # test-transcript.jsonl: no session ids, no times
    assert report["files"] == 2  # the two usage logs, read for their usage
    assert {item["reason"] for item in report["skipped_files"]} == {
        "not a transcript format clawback reads"
    }
