"""A session's title from summaries never depends on the order files are read (issue 19, 12).

Claude Code starts a continuation file with summaries of the sessions before it, so several
files can carry a summary of the same leaf message. The index kept one row per leaf, and the
file read last replaced the others: two ingests of the same files could title a session
differently.
"""

from __future__ import annotations

from itertools import permutations
from pathlib import Path

from clawback.core.home import Home

from tests.helpers import cc_assistant, cc_user, write_lines

FIRST = "5a000000-0000-4000-8000-000000000001"
LATER = ["5a000000-0000-4000-8000-00000000000a", "5a000000-0000-4000-8000-00000000000b"]


def plant(root: Path) -> list[Path]:
    first = root / "proj" / f"{FIRST}.jsonl"
    write_lines(first, [cc_user(FIRST, "q1", "how do we rotate the keys?"),
                        cc_assistant(FIRST, "leaf-1", [{"type": "text", "text": "Like so."}])])  # fmt: skip
    files = [first]
    for n, session in enumerate(LATER):
        later = root / "proj" / f"{session}.jsonl"
        write_lines(later, [{"type": "summary", "summary": f"Key rotation, take {n}",
                             "leafUuid": "leaf-1"},
                            cc_user(session, f"q-{n}", "and now?")])  # fmt: skip
        files.append(later)
    return files


def test_the_same_files_give_the_same_title_in_any_order(tmp_path: Path) -> None:
    files = plant(tmp_path / "transcripts")
    seen = {}
    for n, order in enumerate(permutations(files)):
        home = Home.open(tmp_path / f"home-{n}")
        for path in order:
            home.ingest_paths([path])
        title = home.db.execute("SELECT title FROM sessions WHERE id = ?", (FIRST,)).fetchone()
        summaries = home.db.execute(
            "SELECT count(*) FROM entries WHERE kind = 'summary' AND session_id = ?", (FIRST,)
        ).fetchone()
        seen[tuple(p.name for p in order)] = (title[0], summaries[0])
        home.close()
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == ("Key rotation, take 1", 2)  # both summaries are its
