"""A file is known by its real relative key, never by its masked one (issue 19, item 1).

Masking took a random-looking temp folder (macOS ``/var/folders/…/T/``, CI temp folders) for a
secret, so every ``agent-<hex>.jsonl`` in it became ``[masked].jsonl``: the files shared one row,
each ingest re-imported one over the other, and entries were lost without a word.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from clawback.core.home import Home
from clawback.core.ingest.sources import stored_key
from clawback.core.mcp.tools import MemoryTools
from clawback.core.search.engine import search
from clawback.core.text.masking import seal

from tests.helpers import cc_user, entry_rows, write_lines

TEMP = "-var-folders-qz-k7x9m2n4p6r8t0v2w4y6z8b0c2d4f6-T"  # what masking takes for a secret
PARENT = "0d3a8e6f-290f-4105-a327-a2496e5e2a83"
AGENTS = {"agent-1234abcd": "quokka", "agent-abcd4567": "wombat", "agent-a2271d1e": "numbat"}


def plant_agents(folder: Path) -> None:
    for name, word in AGENTS.items():
        write_lines(folder / f"{name}.jsonl", [cc_user(PARENT, f"u-{name}", f"the {word} task")])


def test_stored_keys_are_masked_yet_apart() -> None:
    keys = {stored_key(f"{TEMP}/{name}.jsonl", seal) for name in AGENTS}
    assert {seal(f"{TEMP}/{name}.jsonl") for name in AGENTS} == {"[masked].jsonl"}  # the cause
    assert len(keys) == 3
    assert all(key.startswith("[masked]~") and key.endswith(".jsonl") for key in keys)
    assert all(TEMP not in key for key in keys)
    assert stored_key("proj/s.jsonl", seal) == "proj/s.jsonl"  # an ordinary key stays itself


def test_files_whose_keys_mask_alike_stay_apart_across_ingests(home: Home, cc_root: Path) -> None:
    plant_agents(cc_root / TEMP)
    first = home.ingest_all()
    assert first.entries == 3
    keys = [
        row[0] for row in home.db.execute("SELECT file_key FROM files WHERE source = 'claude-code'")
    ]
    assert len(set(keys)) == 3
    rows = entry_rows(home)
    again = home.ingest_all()
    assert (again.files, again.reimported, again.entries) == (0, 0, 0)
    assert entry_rows(home) == rows
    tools = MemoryTools(home.db)
    for word in AGENTS.values():
        assert len(search(home.db, word).hits) == 1, word
        [hit] = tools.search(word)["results"]
        read = tools.get(hit["ref"])  # a ref names exactly one file
        assert [m["text"] for m in read["messages"]] == [f"the {word} task"]


def test_real_subagent_files_in_a_temp_folder_keep_every_entry(
    home: Home, cc_root: Path, shared_dir: Path, tmp_path: Path
) -> None:
    source = shared_dir / "real-transcripts" / "claude-code" / "iansherr__claude-code-log"
    agents = sorted(source.glob("agent-*.jsonl"))
    if not agents:
        pytest.skip("no agent-*.jsonl in the shared real transcripts")
    plain = Home.open(tmp_path / "plain-home")
    plain.config.sources.claude_code_path = str(tmp_path / "plain")
    plain.config.sources.openclaw_path = str(tmp_path / "none")
    for agent in agents:
        for root in (cc_root / TEMP, tmp_path / "plain" / "proj"):
            root.mkdir(parents=True, exist_ok=True)
            shutil.copy(agent, root / agent.name)
    expected = plain.ingest_all().entries
    plain.close()
    assert home.ingest_all().entries == expected
    assert home.ingest_all().reimported == 0


def test_an_index_from_before_keeps_its_rows_for_the_files(home: Home, cc_root: Path) -> None:
    plant_agents(cc_root / TEMP)
    home.ingest_all()
    ids = {row[0]: row[1] for row in home.db.execute("SELECT file_key, id FROM files")}
    rows = entry_rows(home)
    one = f"{TEMP}/agent-1234abcd.jsonl"
    with home.db.conn:  # as an older clawback stored it: the masked key alone
        home.db.execute(
            "UPDATE files SET file_key = ? WHERE file_key = ?", (seal(one), stored_key(one, seal))
        )
    stats = home.ingest_all()
    assert stats.reimported <= 1  # read once more, to keep its copy under its own key
    assert home.ingest_all().files == 0
    assert {row[0]: row[1] for row in home.db.execute("SELECT file_key, id FROM files")} == ids
    assert entry_rows(home) == rows


def test_a_watched_deletion_elsewhere_leaves_masked_files_present(
    home: Home, cc_root: Path
) -> None:
    """A masked path cannot be looked up on disk, so only a full scan may call it gone."""
    plant_agents(cc_root / TEMP)
    other = cc_root / "proj" / f"{PARENT}.jsonl"
    write_lines(other, [cc_user(PARENT, "u0", "the parent")])
    home.ingest_all()
    other.unlink()
    stats = home.ingest_changed({other}, deleted=True)  # what the watcher does
    assert stats.missing == 1
    missing = dict(home.db.execute("SELECT file_key, missing FROM files"))
    assert missing[f"proj/{PARENT}.jsonl"] == 1
    assert sum(missing.values()) == 1
    (cc_root / TEMP / "agent-1234abcd.jsonl").unlink()
    assert home.ingest_all().missing == 1  # a full scan sees it gone
