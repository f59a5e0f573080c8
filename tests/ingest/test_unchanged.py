"""An unchanged re-scan answered by reading alone (issue 32: at most 0.1 s beyond --version).

``unchanged_rescan`` may answer only when the full ingest would change nothing: each case
below is something the full ingest does on a run where no transcript grew, and the quick look
must step aside for it. When it does answer, its stats are the full ingest's, and the full
ingest run after it leaves every table as it was.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.core.ingest.unchanged import unchanged_rescan
from clawback.core.paths import Paths

from tests.helpers import cc_assistant, cc_user, write_lines

#: a Claude Code workflow's log: never read, named in health (a "problem" the scan records)
JOURNAL = "-work-app/5e55a0aa-0000-4000-8000-000000000001/subagents/workflows/run1/journal.jsonl"
SESSION = "5e55a0aa-0000-4000-8000-000000000001"
OTHER = "5e55a0aa-0000-4000-8000-000000000002"


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """A home whose settings name a Claude Code folder holding two sessions, ingested once."""
    projects = tmp_path / "projects"
    write_lines(projects / "-work-app" / f"{SESSION}.jsonl", _exchange(SESSION, "kiwi"))
    write_lines(projects / "-work-app" / f"{OTHER}.jsonl", _exchange(OTHER, "feijoa"))
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    _full_ingest(home)
    return home


def _exchange(session: str, word: str) -> list[dict[str, object]]:
    return [
        cc_user(session, f"u-{word}", f"what about the {word}?"),
        cc_assistant(session, f"a-{word}", [{"type": "text", "text": f"the {word} is ripe"}]),
    ]


def _full_ingest(home: Path) -> dict[str, Any]:
    opened = Home.open(home)
    try:
        stats = asdict(opened.ingest_all())
    finally:
        opened.close()
    del stats["seconds"]
    return stats


def _tables(home: Path) -> dict[str, list[str]]:
    """Every row of every table but the full-text index's shadows (and a skip's time seen,
    which nothing reads)."""
    conn = sqlite3.connect(home / "clawback.db")
    try:
        names = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if "_fts" not in name and not name.startswith("sqlite_")
        ]
        tables = {
            name: sorted(map(repr, conn.execute(f'SELECT * FROM "{name}"'))) for name in names
        }
        tables["skipped_files"] = sorted(
            map(repr, conn.execute("SELECT path, reason FROM skipped_files"))
        )
        return tables
    finally:
        conn.close()


def _quick(home: Path) -> dict[str, Any] | None:
    stats = unchanged_rescan(Paths.resolve(home))
    if stats is None:
        return None
    found = asdict(stats)
    del found["seconds"]
    return found


def test_nothing_changed_gives_the_full_ingests_stats_and_the_full_ingest_changes_nothing(
    place: Path,
) -> None:
    quick = _quick(place)
    assert quick is not None and quick["unchanged"] == 2
    before = _tables(place)
    assert _full_ingest(place) == quick
    assert _tables(place) == before


def test_files_named_before_are_reported_as_the_full_ingest_reports_them(place: Path) -> None:
    _new_problem(place)
    first = _full_ingest(place)
    assert first["skipped_files"] and not first["known_skips"]
    quick = _quick(place)
    assert quick is not None
    assert quick["known_skips"] == set(quick["skipped_files"])
    assert _full_ingest(place) == quick


def _grow(place: Path) -> None:
    path = place.parent / "projects" / "-work-app" / f"{SESSION}.jsonl"
    with path.open("a") as out:
        out.write(json.dumps(cc_user(SESSION, "u-more", "and the plum?")) + "\n")


def _add(place: Path) -> None:
    other = "5e55a0aa-0000-4000-8000-000000000003"
    write_lines(
        place.parent / "projects" / "-work-lib" / f"{other}.jsonl", _exchange(other, "yuzu")
    )


def _delete(place: Path) -> None:
    (place.parent / "projects" / "-work-app" / f"{OTHER}.jsonl").unlink()


def _new_problem(place: Path) -> None:
    journal = place.parent / "projects" / JOURNAL
    journal.parent.mkdir(parents=True)
    journal.write_text('{"step": 1}\n')


def _fixed_problem(place: Path) -> None:
    _new_problem(place)
    _full_ingest(place)
    bad = place.parent / "projects" / JOURNAL
    bad.unlink()  # the skip on record is for a file that is gone: the full ingest forgets it


def _sql(statement: str) -> Callable[[Path], None]:
    def change(place: Path) -> None:
        conn = sqlite3.connect(place / "clawback.db")
        with conn:
            conn.executescript(statement)
        conn.close()

    return change


CHANGES: dict[str, Callable[[Path], None]] = {
    "a transcript grew": _grow,
    "a new transcript": _add,
    "a transcript deleted": _delete,
    "a file it cannot read, new": _new_problem,
    "a file named before, now gone": _fixed_problem,
    "a file a killed ingest left half-read": _sql("UPDATE files SET status = 'ingesting'"),
    "usage not yet read back": _sql("DELETE FROM usage; UPDATE files SET usage_read = 0"),
    "a summary to match to its session": _sql("UPDATE files SET new_entries = 1"),
    "a conversation whose silence has run out": _sql(
        "UPDATE conversations SET status = 'active', ended_at = '2020-01-01T00:00:00.000Z'"
    ),
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_anything_the_full_ingest_would_do_makes_the_quick_look_step_aside(
    place: Path, change: str
) -> None:
    CHANGES[change](place)
    before = _tables(place)
    assert _quick(place) is None
    _full_ingest(place)
    assert _tables(place) != before  # the full ingest did have work (else the case is moot)
    assert _quick(place) is not None  # and after it, nothing is left to do


def test_a_home_it_cannot_read_quickly_goes_to_the_full_ingest(tmp_path: Path) -> None:
    assert unchanged_rescan(Paths.resolve(tmp_path / "never-opened")) is None
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.toml").write_text("[sources\n")
    assert unchanged_rescan(Paths.resolve(broken)) is None


def test_the_command_prints_what_the_full_command_prints(place: Path) -> None:
    """The console script answers ``ingest`` itself when nothing changed: same words, and a
    scheduled run's note about files named before on stderr."""
    _new_problem(place)
    _full_ingest(place)
    env = {**os.environ, "CLAWBACK_HOME": str(place)}
    quick = subprocess.run(
        [sys.executable, "-c", "from clawback.cli.entry import main; main(['ingest'])"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    full = subprocess.run(
        [sys.executable, "-c", "from clawback.cli.main import main; main(['ingest'])"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert full.returncode == 0, full.stderr

    def timeless(text: str) -> str:
        return re.sub(r" in \d+\.\d\ds;", " in Ns;", text)

    assert timeless(quick.stdout) == timeless(full.stdout)
    assert "2 unchanged" in quick.stdout and "1 files in unknown formats" in quick.stdout
    assert (
        quick.stderr
        == full.stderr
        == ("1 files not read, as before (`clawback health` names them)\n")
    )


def test_the_quick_answer_loads_neither_click_nor_sqlite_utils(place: Path) -> None:
    """What made an unchanged ingest cost 0.15 s beyond ``--version``: click's command table
    and the writer's path (sqlite-utils and dateutil with it), imported before the scan."""
    listing = (
        "import json, sys\n"
        "from clawback.cli.entry import main\n"
        "main(['ingest'])\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", listing], capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "CLAWBACK_HOME": str(place)},
    )  # fmt: skip
    said, _, modules = done.stdout.rstrip("\n").rpartition("\n")
    assert "2 unchanged" in said
    heavy = ("click", "sqlite_utils", "dateutil", "rich", "clawback.core.ingest.ingestor")
    loaded = json.loads(modules)
    assert [m for m in loaded if m.split(".")[0] in heavy or m in heavy] == []
