"""Crash safety and concurrency with real processes: kill -9 mid-ingest, two ingests at once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from clawback.core.archive.kept import KeptCopies

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from corpus import generate

from tests.cli_runner import CLAWBACK
from tests.helpers import kill_at

pytestmark = pytest.mark.slow

ENTRY_QUERY = """SELECT f.file_key, e.line, e.block, e.piece, e.kind, e.text, e.session_id,
                        e.conversation_id IS NOT NULL
                 FROM entries e JOIN files f ON f.id = e.file_id
                 ORDER BY f.file_key, e.line, e.block, e.piece"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "projects"
    generate(root, sessions=12, messages=60, seed=3)
    generate(root, sessions=1, messages=6000, seed=11)  # one big file: several batches
    return root


def start_ingest(home: Path, root: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "CLAWBACK_HOME": str(home)}
    return subprocess.Popen(
        [CLAWBACK, "ingest", str(root), "--source", "claude-code", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kept_lines(home: Path, conn: sqlite3.Connection) -> list[tuple[str, int, bytes]]:
    """Each file's kept copy, read up to the length the index committed: its lines must be
    exactly the lines the index has read (as many as ``last_line``), in a killed run as in a
    clean one."""
    copies = KeptCopies(home / "kept")
    kept = []
    for key, source, last_line, kept_bytes in conn.execute(
        "SELECT file_key, source, last_line, kept_bytes FROM files ORDER BY file_key"
    ):
        lines = [line for f in copies.read(source, key, kept_bytes) for line in f.lines]
        assert len(lines) == last_line, key
        kept.append((key, last_line, b"\n".join(lines)))
    return kept


Snapshot = tuple[
    list[tuple[object, ...]], list[tuple[object, ...]], int, list[tuple[str, int, bytes]]
]


def snapshot(home: Path) -> Snapshot:
    conn = sqlite3.connect(home / "clawback.db")
    try:
        entries = conn.execute(ENTRY_QUERY).fetchall()
        sessions = conn.execute(
            "SELECT id, message_count, entry_count FROM sessions ORDER BY id"
        ).fetchall()
        fts = conn.execute(
            "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'the'"
        ).fetchone()[0]
        kept = kept_lines(home, conn)
    finally:
        conn.close()
    return entries, sessions, fts, kept


@pytest.fixture(scope="module")
def clean(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    home = tmp_path_factory.mktemp("clean")
    proc = start_ingest(home, corpus)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    return snapshot(home)


def test_kill_minus_nine_at_any_point_then_rerun_equals_a_clean_run(
    corpus: Path,
    clean: Snapshot,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    complete = {key: lines for key, _, lines in clean[3]}
    kills = 0
    for threshold in (1, 4000, 12000, 30000):
        proc = start_ingest(home, corpus)
        kills += kill_at(proc, home, threshold, poll=0.005)
        # Killed anywhere, each copy holds exactly what the index committed of its file.
        conn = sqlite3.connect(home / "clawback.db")
        try:
            for key, _, lines in kept_lines(home, conn):
                assert complete[key].startswith(lines), key
        finally:
            conn.close()
    assert kills >= 2, "ingestion finished before it could be killed; grow the corpus"
    proc = start_ingest(home, corpus)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert snapshot(home) == clean


def test_two_ingests_at_once_neither_corrupt_nor_duplicate(
    corpus: Path,
    clean: Snapshot,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    first, second = start_ingest(home, corpus), start_ingest(home, corpus)
    for proc in (first, second):
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
    assert snapshot(home) == clean
    conn = sqlite3.connect(home / "clawback.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
