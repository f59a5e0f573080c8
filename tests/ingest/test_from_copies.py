"""A reindex reads deleted Claude Code transcripts again from their kept copies: it never loses a
deleted session, not even when the index itself was lost."""

from __future__ import annotations

import shutil
from pathlib import Path

from clawback.core.archive.sessions import resolve_session
from clawback.core.home import Home

from tests.helpers import cc_assistant, cc_user, entry_rows, write_lines

SESSION = "5d2c8f0e-1b7a-4c3e-9f6d-2a8b0c4e6f1a"


def _deleted_session(home: Home, cc_root: Path) -> list[tuple[object, ...]]:
    main = cc_root / "-home-u-proj" / f"{SESSION}.jsonl"
    write_lines(main, [
        cc_user(SESSION, "u1", "why is the build slow"),
        cc_assistant(SESSION, "a1", [{"type": "text", "text": "the linker, mostly"}]),
    ])  # fmt: skip
    write_lines(
        main.parent / SESSION / "subagents" / "agent-a1.jsonl", [cc_user(SESSION, "s1", "x")]
    )
    home.ingest_all()
    before = entry_rows(home)
    shutil.rmtree(cc_root / "-home-u-proj")
    home.ingest_all()
    return before


def test_reindex_reads_a_deleted_transcript_from_its_copy(home: Home, cc_root: Path) -> None:
    before = _deleted_session(home, cc_root)
    # Rows an older clawback made are replaced by what the copy reads as today.
    home.db.execute("UPDATE entries SET text = 'stale' WHERE role = 'assistant'")
    home.db.conn.commit()
    stats = home.reindex()
    assert stats.files == 2
    assert entry_rows(home) == before
    session = resolve_session(home.db, SESSION)
    assert session.source_missing and session.message_count == 2
    assert not home.paths.kept_rebuild.exists()  # staging emptied
    paths = {p for (p,) in home.db.execute("SELECT path FROM files")}
    assert all(str(cc_root) in p for p in paths)  # where the files were, not the staging
    # The copy is still whole: the session can still be written back.
    written = home.restore(session)
    assert [w.lines for w in written] == [2, 1]


def test_a_lost_index_gets_its_deleted_sessions_back_from_the_copies(
    home: Home, cc_root: Path
) -> None:
    before = _deleted_session(home, cc_root)
    home.close()
    for name in ("clawback.db", "clawback.db-wal", "clawback.db-shm"):
        (home.paths.home / name).unlink(missing_ok=True)
    fresh = Home.open(home.paths.home)
    fresh.config.sources.claude_code_path = str(cc_root)
    fresh.config.sources.openclaw = False
    try:
        fresh.reindex()
        assert entry_rows(fresh) == before
        session = resolve_session(fresh.db, SESSION)
        assert session.source_missing
        assert [w.lines for w in fresh.restore(session)] == [2, 1]
    finally:
        fresh.close()
        home.db = Home.open(home.paths.home).db  # the fixture closes its own


def test_a_staged_file_left_by_a_killed_reindex_is_read_first(home: Home, cc_root: Path) -> None:
    _deleted_session(home, cc_root)
    key = Path("-home-u-proj") / f"{SESSION}.jsonl"
    staged = home.paths.kept_rebuild / key
    home.reindex()
    # A reindex killed while it rewrote the copy: the staged file is the whole transcript.
    whole = b"".join(
        line + b"\n"
        for f in home.ingestor().copies.read("claude-code", key.as_posix(), None)
        for line in f.lines
    )
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.write_bytes(whole)
    home.db.execute("UPDATE files SET kept_bytes = 0 WHERE file_key = ?", (key.as_posix(),))
    home.db.conn.commit()
    home.reindex()
    assert not staged.exists()
    (kept,) = home.db.execute(
        "SELECT kept_bytes FROM files WHERE file_key = ?", (key.as_posix(),)
    ).fetchone()
    assert kept > 0
