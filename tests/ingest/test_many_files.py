"""One session spread over many files: recounted once per group of files, with the same rows.

A session's derived columns (counts, times, title, first prompt) are recomputed from its
entries; doing that at every file's last part made N sub-agent files of one session cost
N x the session. These tests pin that a group recounts a session once, that the rows are those
of reading the files one by one, that a lone changed file still updates its session at once,
and that a run killed between groups leaves every session consistent with its entries.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from clawback.core.archive.catalog import refresh_session
from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source

from tests.helpers import cc_user, kill_at, write_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from many_files import PARENT, one_session

ORPHAN = "00000000-0000-4000-8000-0000000000aa"  # known only from its sub-agents' files
RECOUNT = "UPDATE sessions SET\n    message_count"  # catalog._REFRESH, as traced


def corpus(root: Path, count: int) -> list[Path]:
    """``count`` sub-agent files of one named session, plus one of a session without its own
    file (a day earlier); the sub-agents end after the parent's last line."""
    one_session(root, count)
    project = root / "-home-u-proj"
    parent = project / f"{PARENT}.jsonl"
    with parent.open("a") as handle:
        handle.write(
            f'{{"type": "custom-title", "customTitle": "Parser work", "sessionId": "{PARENT}"}}\n'
        )
    orphan = cc_user(ORPHAN, "o-1", "review the lexer", "2026-11-19T08:00:00Z")
    orphan["isSidechain"] = True
    write_lines(project / ORPHAN / "subagents" / "agent-o1.jsonl", [orphan])
    return sorted(root.rglob("*.jsonl"))


def sessions(db: Any) -> list[tuple[Any, ...]]:
    """Every column of every session: what lists, search and ``sessions --json`` show."""
    return db.execute("SELECT * FROM sessions ORDER BY id").fetchall()


def root_of(folder: Path, *only: Path) -> SourceRoot:
    return SourceRoot(Source.CLAUDE_CODE, folder, "t", only=only)


def test_a_group_of_files_recounts_their_session_once(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    corpus(folder, 60)
    home = Home.open(tmp_path / "home")
    recounts: list[str] = []
    home.db.conn.set_trace_callback(lambda sql: recounts.append(sql) if RECOUNT in sql else None)
    home.ingestor().ingest([root_of(folder)])
    home.db.conn.set_trace_callback(None)
    # 62 small files make one group: each of its two sessions is recounted once, not per file.
    assert len(recounts) == 2, len(recounts)
    counts = dict(home.db.execute("SELECT id, message_count FROM sessions").fetchall())
    assert counts == {PARENT: 4, ORPHAN: 1}
    home.close()


def test_one_pass_gives_every_column_of_reading_the_files_one_by_one(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    files = corpus(folder, 40)
    together = Home.open(tmp_path / "together")
    together.ingestor().ingest([root_of(folder)])
    apart = Home.open(tmp_path / "apart")
    for path in reversed(files):  # sub-agents before their parent, the other order
        apart.ingestor().ingest([root_of(folder, path)])
    rows = sessions(together.db)
    assert rows == sessions(apart.db)
    titles = {row[0]: (row[3], row[5]) for row in rows}  # title, first prompt
    assert titles == {
        PARENT: ("Parser work", "look into part 0 step 0 of the parser"),
        ORPHAN: (None, "review the lexer"),
    }
    together.close()
    apart.close()


def test_a_file_changed_alone_updates_its_session_at_once(tmp_path: Path) -> None:
    """The watcher's path (``Home.ingest_changed``: a root of the changed files only): one
    grown sub-agent file, its session recounted in that ingest."""
    folder = tmp_path / "projects"
    files = corpus(folder, 30)
    home = Home.open(tmp_path / "home")
    home.ingestor().ingest([root_of(folder)])
    grown = next(path for path in files if path.name == "agent-agent00007.jsonl")
    line = cc_user(PARENT, "late-1", "one more thing", "2026-11-21T09:00:00.000Z")
    with grown.open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    home.ingestor().ingest([root_of(folder, grown)])
    count, updated = home.db.execute(
        "SELECT entry_count, updated_at FROM sessions WHERE id = ?", (PARENT,)
    ).fetchone()
    assert (count, updated) == (4 * 31 + 1, "2026-11-21T09:00:00.000Z")
    home.close()


# A run whose groups are a few files each, so a kill lands between groups.
_INGEST = """
import sys
import clawback.core.ingest.ingestor as ingestor
from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source
ingestor.GROUP_BYTES = 12_000
home = Home.open(sys.argv[1])
home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, __import__("pathlib").Path(sys.argv[2]), "t")])
"""


def _recounted(home: Path) -> list[tuple[Any, ...]]:
    """The sessions as a recount of their entries right now would make them."""
    conn = sqlite3.connect(":memory:")
    source = sqlite3.connect(home / "clawback.db")
    source.backup(conn)
    source.close()
    for (session_id,) in conn.execute("SELECT id FROM sessions").fetchall():
        refresh_session(conn, session_id)
    rows = sessions(conn)
    conn.close()
    return rows


@pytest.mark.slow
def test_killed_between_groups_sessions_match_their_entries_then_a_clean_run(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "projects"
    corpus(folder, 400)
    clean = Home.open(tmp_path / "clean")
    clean.ingestor().ingest([root_of(folder)])
    expected = sessions(clean.db)
    clean.close()
    home = tmp_path / "home"
    kills = 0
    for threshold in (1, 500, 1100):
        proc = subprocess.Popen([sys.executable, "-c", _INGEST, str(home), str(folder)])
        kills += kill_at(proc, home, threshold, poll=0.002)
        # What the next run starts with (after repairing any file left half-read): every
        # session's columns already agree with the entries the index holds.
        killed = Home.open(home)
        killed.ingestor().recover()
        assert sessions(killed.db) == _recounted(home)
        killed.close()
    assert kills >= 2, "ingestion finished before it could be killed; grow the corpus"
    again = Home.open(home)
    again.ingestor().ingest([root_of(folder)])
    assert sessions(again.db) == expected
    again.close()
