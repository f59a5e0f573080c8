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


def counts(home: Home) -> dict[str, tuple[int, int]]:
    return {
        sid: (entries, messages)
        for sid, entries, messages in home.db.execute(
            "SELECT id, entry_count, message_count FROM sessions"
        )
    }


def truth(home: Home) -> dict[str, tuple[int, int]]:
    """What a session's counts must be: recomputed from its entries now."""
    return {
        sid: (home.db.execute("SELECT count(*) FROM entries WHERE session_id = ?", (sid,))
              .fetchone()[0], messages)
        for sid, (_entries, messages) in counts(home).items()
    }  # fmt: skip


def test_entry_counts_match_a_clean_ingest_however_files_arrive(tmp_path: Path) -> None:
    files = plant(tmp_path / "transcripts")
    clean = Home.open(tmp_path / "clean")
    clean.ingest_paths([tmp_path / "transcripts"])  # all at once, as after a kill and a restart
    one_by_one = Home.open(tmp_path / "watched")
    for path in reversed(files):  # one batch per file, as a watcher sees them
        one_by_one.ingest_paths([path])
    assert counts(clean) == counts(one_by_one) == truth(clean)
    assert counts(clean)[FIRST][0] == 4  # its two messages and both summaries of it


def test_a_rewritten_file_leaves_no_count_behind(home: Home, cc_root: Path) -> None:
    files = plant(cc_root)
    home.ingest_all()
    session = LATER[0]
    write_lines(files[1], [cc_user(session, "q-x", "rewritten, and the summary is gone")])
    home.ingest_all()
    assert counts(home) == truth(home)
    assert counts(home)[FIRST][0] == 3
