"""Ingestion: incremental reads, torn lines, rewrites, deleted sources, bad input, conversations."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

import pytest
from clawback.core.archive.sessions import list_sessions, resolve_session, session_messages
from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.ingest.stats import IngestStats
from clawback.core.search.engine import SearchFilters, search

from tests.helpers import cc_assistant, cc_user, entry_rows, write_lines


def ingest(home: Home, root: Path) -> IngestStats:
    from clawback.core.records import Source

    return home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, root, "test")], full_scan=True)


def test_new_file_is_imported_and_every_kind_is_searchable(home: Home, cc_root: Path) -> None:
    path = cc_root / "-home-u-proj" / "s1.jsonl"
    write_lines(
        path,
        [
            cc_user("s1", "u1", "How do I rotate the frobnicator logs?"),
            cc_assistant(
                "s1",
                "a1",
                [
                    {"type": "thinking", "thinking": "maybe logrotate handles quuxwidget files"},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "ls /var/log/zorblax"},
                    },
                ],
            ),
            cc_user(
                "s1",
                "u2",
                [{"type": "tool_result", "tool_use_id": "t1", "content": "syslog plumbus.1.gz"}],
            ),
            cc_assistant(
                "s1", "a2", [{"type": "text", "text": "Use logrotate with weekly rotation."}]
            ),
        ],
    )
    stats = ingest(home, cc_root)
    assert stats.files == 1
    assert stats.entries >= 5
    for phrase, kind in [
        ("frobnicator", "text"),
        ("quuxwidget", "thinking"),
        ("zorblax", "tool_use"),
        ("plumbus", "tool_result"),
    ]:
        hits = search(home.db, phrase).hits
        assert hits, phrase
        assert hits[0].kind == kind
        assert hits[0].session_id == "s1"
        assert hits[0].file == "-home-u-proj/s1.jsonl"
    assert search(home.db, "plumbus").hits[0].line == 3
    assert search(home.db, "plumbus", SearchFilters(kind="text")).hits == []
    assert search(home.db, "plumbus", SearchFilters(kind="tool")).hits


def test_unchanged_file_is_not_read_again(
    home: Home, cc_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_lines(cc_root / "p" / "s1.jsonl", [cc_user("s1", "u1", "hello there world")])
    ingest(home, cc_root)
    opened: list[str] = []
    real_open = Path.open

    def spy(self: Path, *args: Any, **kwargs: Any) -> IO[Any]:
        opened.append(str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    stats = ingest(home, cc_root)
    assert stats.unchanged == 1 and stats.files == 0
    assert not [p for p in opened if p.endswith(".jsonl")]


def test_grown_file_reads_only_new_lines_and_torn_tail_waits(home: Home, cc_root: Path) -> None:
    path = cc_root / "p" / "s1.jsonl"
    write_lines(path, [cc_user("s1", "u1", "first message alpha")])
    ingest(home, cc_root)
    # A second line being written right now: no newline yet.
    with path.open("a") as handle:
        handle.write(json.dumps(cc_user("s1", "u2", "second message bravo"))[:-10])
    stats = ingest(home, cc_root)
    assert stats.entries == 0
    assert not search(home.db, "bravo").hits
    with path.open("a") as handle:
        handle.write(json.dumps(cc_user("s1", "u2", "second message bravo"))[-10:] + "\n")
    stats = ingest(home, cc_root)
    assert stats.entries == 1
    assert search(home.db, "bravo").hits[0].line == 2
    assert len(entry_rows(home)) == 2


def test_rewritten_file_is_reimported_without_duplicates(home: Home, cc_root: Path) -> None:
    path = cc_root / "p" / "s1.jsonl"
    write_lines(path, [cc_user("s1", "u1", "original charlie text"), cc_user("s1", "u2", "more")])
    ingest(home, cc_root)
    # Same length prefix changed, then grown: the consumed bytes differ.
    write_lines(
        path,
        [
            cc_user("s1", "u1", "replaced delta textxx"),
            cc_user("s1", "u2", "more"),
            cc_user("s1", "u3", "echo"),
        ],
    )
    stats = ingest(home, cc_root)
    assert stats.reimported == 1
    assert not search(home.db, "charlie").hits
    assert search(home.db, "delta").hits
    assert len(entry_rows(home)) == 3
    # Shrunk.
    write_lines(path, [cc_user("s1", "u1", "short foxtrot")])
    ingest(home, cc_root)
    assert [r[-1] for r in entry_rows(home)] == ["short foxtrot"]


def test_deleted_source_keeps_session_searchable(home: Home, cc_root: Path) -> None:
    path = cc_root / "p" / "s1.jsonl"
    write_lines(path, [cc_user("s1", "u1", "remember the golf course booking")])
    ingest(home, cc_root)
    path.unlink()
    stats = ingest(home, cc_root)
    assert stats.missing == 1
    hits = search(home.db, "golf").hits
    assert hits and hits[0].session_id == "s1"
    session = resolve_session(home.db, "s1")
    assert session.source_missing
    assert [s.id for s in list_sessions(home.db)] == ["s1"]
    # It comes back when the file does.
    write_lines(path, [cc_user("s1", "u1", "remember the golf course booking")])
    ingest(home, cc_root)
    assert not resolve_session(home.db, "s1").source_missing


def test_sessions_sharing_a_file_are_not_shown_as_deleted(home: Home, cc_root: Path) -> None:
    """Issue 22: ``show s2`` said the source no longer existed right after the first ingest."""
    path = cc_root / "p" / "shared.jsonl"
    write_lines(path, [cc_user("s1", "u1", "first session"), cc_user("s2", "u2", "resumed one"),
                       cc_user("s3", "u3", "forked one")])  # fmt: skip
    ingest(home, cc_root)
    assert {s.id: s.source_missing for s in list_sessions(home.db)} == {
        "s1": False, "s2": False, "s3": False,
    }  # fmt: skip
    path.unlink()
    ingest(home, cc_root)
    assert all(s.source_missing for s in list_sessions(home.db))


def test_a_line_a_second_file_repeats_shows_once(home: Home, cc_root: Path) -> None:
    """A session's lines written again into a second file (the same transcript kept under two
    project folders, a resumed session carrying its history) showed every message twice in the
    transcript and doubled its count; a line repeated with other text (fixtures reuse short
    uuids) is not a copy and stays."""
    first = [cc_user("s1", "u1", "first romeo", ts="2026-11-20T10:00:00.000Z"),
             cc_user("s1", "u2", "second sierra", ts="2026-11-20T10:01:00.000Z")]  # fmt: skip
    write_lines(cc_root / "p" / "s1.jsonl", first)
    ingest(home, cc_root)
    write_lines(cc_root / "copy" / "sub" / "s1.jsonl", [*first,
                cc_user("s1", "u3", "third tango", ts="2026-11-20T10:02:00.000Z"),
                cc_user("s1", "u1", "not a copy uniform", ts="2026-11-20T10:03:00.000Z")])  # fmt: skip
    ingest(home, cc_root)
    assert home.db.execute("SELECT count(DISTINCT file_id) FROM entries").fetchone()[0] == 2
    shown = session_messages(home.db, "s1")
    assert [m.text for m in shown] == [
        "first romeo", "second sierra", "third tango", "not a copy uniform",
    ]  # fmt: skip
    assert resolve_session(home.db, "s1").message_count == 4
    tail = session_messages(home.db, "s1", after_entry=shown[1].entry_id)  # what the view adds
    assert [m.text for m in tail] == ["third tango", "not a copy uniform"]


def test_a_line_without_uuid_repeated_by_a_second_file_shows_once(
    home: Home, cc_root: Path
) -> None:
    """Formats without line ids (pi's older sessions) know a copy by its timestamp and text."""
    lines = [cc_user("s2", "", "victor one", ts="2026-11-20T10:00:00.000Z"),
             cc_user("s2", "", "whiskey two", ts="2026-11-20T10:01:00.000Z"),
             cc_user("s2", "", "victor one again", ts="2026-11-20T10:00:00.000Z")]  # fmt: skip
    for line in lines:
        del line["uuid"]
    write_lines(cc_root / "p" / "s2.jsonl", lines[:2])
    write_lines(cc_root / "copy" / "sub" / "s2.jsonl", lines)
    ingest(home, cc_root)
    assert home.db.execute("SELECT count(*) FROM entries WHERE uuid IS NULL").fetchone()[0] == 5
    shown = [m.text for m in session_messages(home.db, "s2")]
    assert shown == ["victor one", "victor one again", "whiskey two"]
    assert resolve_session(home.db, "s2").message_count == 3


def test_bad_lines_are_skipped_counted_and_the_rest_kept(home: Home, cc_root: Path) -> None:
    home.config.archive.max_line_mb = 1
    path = cc_root / "p" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    good = json.dumps(cc_user("s1", "u1", "good line hotel")).encode()
    huge = json.dumps(cc_user("s1", "u9", "x" * (2 * 1024 * 1024))).encode()
    bad_utf8 = (
        json.dumps(cc_user("s1", "u2", "india BADBYTE")).encode().replace(b"BADBYTE", b"\xff\xfe")
    )
    lines = [
        good,
        b"{not json at all",
        bad_utf8,
        huge,
        json.dumps({"type": "brand-new-line-type", "sessionId": "s1"}).encode(),
        json.dumps({"type": "user", "sessionId": "s1"}).encode(),  # missing message
        b"[1, 2, 3]",
        json.dumps(cc_user("s1", "u3", "juliet after the damage")).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    stats = ingest(home, cc_root)
    assert stats.skipped_lines >= 4
    assert search(home.db, "hotel").hits
    assert search(home.db, "juliet").hits[0].line == 8
    assert search(home.db, "india").hits  # kept, with replacement characters
    reasons = dict(home.db.execute("SELECT line, reason FROM skipped_lines").fetchall())
    assert "malformed" in reasons[2].lower()
    assert "utf-8" in reasons[3].lower()
    assert "max_line_mb" in reasons[4]


def test_two_objects_on_one_line_are_both_kept(home: Home, cc_root: Path) -> None:
    path = cc_root / "p" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    a = json.dumps(cc_user("s1", "u1", "kilo first"))
    b = json.dumps({"type": "summary", "summary": "Lima summary title", "leafUuid": "u1"})
    path.write_text(a + b + "\n")
    ingest(home, cc_root)
    assert search(home.db, "kilo").hits
    assert resolve_session(home.db, "s1").title == "Lima summary title"


def test_a_waiting_summary_finds_its_leaf_even_if_the_last_run_stopped_before_looking(
    home: Home, cc_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which files took entries since summaries last looked is kept in the index, in the
    same transaction as the entries: a run that dies before looking loses nothing."""
    from clawback.core.ingest import ingestor as ingest_module

    summary = {"type": "summary", "summary": "Mike summary title", "leafUuid": "u9"}
    write_lines(cc_root / "p" / "s2.jsonl", [summary, cc_user("s2", "u2", "second session")])
    ingest(home, cc_root)
    (waiting,) = home.db.execute("SELECT count(*) FROM leaf_titles WHERE session_id IS NULL")
    assert waiting == (1,)
    assert home.db.execute("SELECT count(*) FROM files WHERE new_entries = 1").fetchone() == (0,)

    write_lines(cc_root / "p" / "s1.jsonl", [cc_user("s1", "u9", "the leaf lives here")])
    with monkeypatch.context() as patched:  # the run stops before summaries are matched
        patched.setattr(ingest_module, "resolve_leaf_titles", lambda conn: set())
        ingest(home, cc_root)
    assert resolve_session(home.db, "s1").title != "Mike summary title"
    ingest(home, cc_root)  # nothing changed on disk: the flag left behind says where to look
    assert resolve_session(home.db, "s1").title == "Mike summary title"
    assert home.db.execute("SELECT count(*) FROM files WHERE new_entries = 1").fetchone() == (0,)


def test_subagent_file_belongs_to_parent_session_as_sidechain(home: Home, cc_root: Path) -> None:
    sid = "11111111-2222-3333-4444-555555555555"
    write_lines(cc_root / "p" / f"{sid}.jsonl", [cc_user(sid, "u1", "main thread mike")])
    write_lines(
        cc_root / "p" / sid / "subagents" / "agent-abc.jsonl",
        [cc_assistant(sid, "a1", [{"type": "text", "text": "subagent november"}])],
    )
    ingest(home, cc_root)
    hit = search(home.db, "november").hits[0]
    assert hit.session_id == sid and hit.sidechain
    assert not search(home.db, "november", SearchFilters(sidechains=False)).hits
    main_view = session_messages(home.db, sid, conversational_only=True, sidechains=False)
    assert [m.text for m in main_view] == ["main thread mike"]
    assert resolve_session(home.db, sid).message_count == 1


def test_secrets_are_masked_in_the_index_but_not_in_the_transcript(
    home: Home, cc_root: Path
) -> None:
    secret = "sk-ant-api03-" + "A1b2C3d4" * 8
    path = cc_root / "p" / "s1.jsonl"
    write_lines(path, [cc_user("s1", "u1", f"my key is {secret} please keep it oscar")])
    ingest(home, cc_root)
    (text,) = home.db.execute("SELECT text FROM entries").fetchone()
    assert secret not in text and "oscar" in text
    assert not search(home.db, "A1b2C3d4A1b2C3d4*").hits
    assert secret in path.read_text()


def test_conversations_split_at_gaps_and_turn_ready(home: Home, cc_root: Path) -> None:
    lines = []
    for i, ts in enumerate(
        ["2026-01-01T10:00:00.000Z", "2026-01-01T10:05:00.000Z", "2026-01-01T12:00:00.000Z"]
    ):
        line = cc_user("s1", f"u{i}", f"message {i}")
        line["timestamp"] = ts
        lines.append(line)
    write_lines(cc_root / "p" / "s1.jsonl", lines)
    ingest(home, cc_root)
    rows = home.db.execute(
        "SELECT message_count, status, first_line, last_line FROM conversations ORDER BY id"
    ).fetchall()
    assert rows == [(2, "ready", 1, 2), (1, "ready", 3, 3)]
    # Archived conversations are never reopened: new lines start a new one.
    home.db.execute("UPDATE conversations SET status = 'archived'")
    extra = cc_user("s1", "u9", "late reply")
    extra["timestamp"] = "2026-01-01T12:01:00.000Z"
    with (cc_root / "p" / "s1.jsonl").open("a") as handle:
        handle.write(json.dumps(extra) + "\n")
    ingest(home, cc_root)
    statuses = [r[0] for r in home.db.execute("SELECT status FROM conversations ORDER BY id")]
    assert statuses == ["archived", "archived", "ready"]


def test_recover_rolls_back_a_crashed_import(home: Home, cc_root: Path) -> None:
    path = cc_root / "p" / "s1.jsonl"
    write_lines(path, [cc_user("s1", f"u{i}", f"line {i}") for i in range(5)])
    ingest(home, cc_root)
    clean = entry_rows(home)
    # Simulate a crash that left entries past the committed offset and the status set.
    home.db.execute(
        "UPDATE files SET status = 'ingesting', last_line = 3, \"offset\" = ?",
        (sum(len(line) for line in path.read_bytes().splitlines(keepends=True)[:3]),),
    )
    assert home.ingestor().recover() == 1
    assert len(entry_rows(home)) == 3
    ingest(home, cc_root)
    assert entry_rows(home) == clean


def test_file_keys_make_backup_and_live_copies_one_file(home: Home, tmp_path: Path) -> None:
    line = cc_user("s1", "u1", "papa quebec")
    write_lines(tmp_path / "backup" / "proj" / "s1.jsonl", [line])
    write_lines(tmp_path / "live" / "proj" / "s1.jsonl", [line])
    ingest(home, tmp_path / "backup")
    ingest(home, tmp_path / "live")
    assert len(entry_rows(home)) == 1
    assert home.db.execute("SELECT count(*) FROM files").fetchone()[0] == 1


def test_memory_files_are_split_and_split_again_on_change(home: Home) -> None:
    workspace = home.paths.workspace
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Memory\n\n## Tools\nUse ripgrep romeo.\n")
    home.ingest_all()
    hit = search(home.db, "romeo").hits[0]
    assert hit.source == "memory" and hit.file == "MEMORY.md" and hit.line >= 3
    (workspace / "MEMORY.md").write_text("# Memory\n\n## Tools\nUse ripgrep sierra.\n")
    os.utime(workspace / "MEMORY.md", (1, 1))
    home.ingest_all()
    assert not search(home.db, "romeo").hits
    assert search(home.db, "sierra").hits


@pytest.mark.parametrize("reimport", [False, True])
def test_demo_archive_ingests_all_three_formats(demo_home: Home, reimport: bool) -> None:
    if reimport:
        demo_home.reindex()
    sources = {s.source for s in list_sessions(demo_home.db)}
    assert sources == {"claude-code", "openclaw", "native"}
    assert search(demo_home.db, "Kyoto").hits[0].source == "openclaw"
    assert search(demo_home.db, "flush", SearchFilters(source="native")).hits
    assert search(demo_home.db, "世界").hits
