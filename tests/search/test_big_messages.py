"""A search stays fast whatever the size of the messages it matches (issue 19, item 10).

FTS5's ``snippet()`` costs the square of a matching text's size (a 1 MB message full of the
query word took 12 s), so a huge message is windowed and marked in Python instead.
"""

from __future__ import annotations

import time
from pathlib import Path

from clawback.core.home import Home
from clawback.core.search.engine import MARK_END, MARK_START, search

from tests.helpers import cc_user, write_lines

SESSION = "5e551011-0000-4000-8000-000000000001"


def test_a_search_matching_a_huge_message_answers_within_a_second(
    home: Home, cc_root: Path
) -> None:
    huge = "the database grows and " * (2 * 1024 * 1024 // 23)  # 2 MB, a match every 4 words
    write_lines(
        cc_root / "proj" / f"{SESSION}.jsonl",
        [cc_user(SESSION, "u1", huge), cc_user(SESSION, "u2", "a small database question")],
    )
    home.ingest_all()
    started = time.perf_counter()
    hits = search(home.db, "database", limit=20).hits
    assert time.perf_counter() - started < 1.0
    assert len(hits) == 2
    for hit in hits:  # both still show where the word is
        assert f"{MARK_START}database{MARK_END}" in hit.snippet
        assert len(hit.snippet) < 400
