"""Files deep below a source root are indexed, and what is too deep is named (issue 19, item 2).

Files 8 or more folders below a source root used to be skipped, and neither ``ingest --json``
nor ``health`` said so. Now transcripts up to ``DEEPEST_FOLDERS`` folders down are read, and a
folder below that bound (against bind-mount loops and runaway trees) is named with why.
"""

from __future__ import annotations

from pathlib import Path

from clawback.core.home import Home
from clawback.core.ingest.health import health
from clawback.core.ingest.sources import DEEPEST_FOLDERS, configured_roots
from clawback.core.search.engine import search

from tests.helpers import cc_user, write_lines

SESSION = "d33b0000-0000-4000-8000-0000000000{:02d}"
WORDS = {0: "zero", 1: "one", 7: "seven", 8: "eight", 9: "nine", 12: "twelve", 32: "deepest"}


def nested(root: Path, folders: int) -> Path:
    return root.joinpath(*[f"level{n}" for n in range(folders)])


def test_transcripts_at_any_depth_up_to_the_bound_are_indexed(home: Home, cc_root: Path) -> None:
    for folders, word in WORDS.items():
        session = SESSION.format(folders)
        write_lines(nested(cc_root, folders) / f"{session}.jsonl", [cc_user(session, "u", word)])
    stats = home.ingest_all()
    assert stats.skipped_files == []
    for folders, word in WORDS.items():
        [hit] = search(home.db, word).hits
        assert hit.session_id == SESSION.format(folders)
    root = next(r for r in configured_roots(home.config, home.paths) if r.root == cc_root)
    deep = nested(cc_root, 12) / f"{SESSION.format(12)}.jsonl"
    assert root.accepts(deep)  # the watcher takes what the scan takes


def test_a_folder_past_the_bound_is_named_in_ingest_and_health(home: Home, cc_root: Path) -> None:
    assert DEEPEST_FOLDERS == 32
    too_deep = nested(cc_root, DEEPEST_FOLDERS + 1)
    write_lines(too_deep / f"{SESSION.format(33)}.jsonl", [cc_user(SESSION.format(33), "u", "x")])
    stats = home.ingest_all()
    [skipped] = stats.to_dict()["skipped_files"]  # what `ingest --json` prints
    assert skipped["path"] == str(too_deep)
    assert skipped["reason"].startswith("more than 32 folders below the source root")
    report = health(home.db, home.paths, "no-such-claude").to_json()
    assert skipped in report["skipped_files"]
