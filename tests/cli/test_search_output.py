"""What ``clawback search`` prints for a person (issue 37): how strong each hit is, and how long
the command took, not only the query inside it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_runner import CLAWBACK, run_cli
from tests.helpers import cc_user, write_lines

from ..cli_runner import run_cli as run
from .prefix_archive import archive_with_shared_prefixes

SUMMARY = re.compile(r"(\d+) hits? in ([\d.]+) (ms|s), the search itself ([\d.]+) (ms|s)")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    filler = "the ingest reads every line and writes rows to the index " * 800
    write_lines(
        tmp_path / "src" / "proj" / "s.jsonl",
        [
            cc_user("s", "u1", f"{filler} which fts5 tokenizer handles japanese {filler}"),
            cc_user("s", "u2", "the fts5 tokenizer question again"),
            cc_user("s", "u3", "fts5 alone, and nothing else of the question"),
            *(cc_user("s", f"n{n}", f"short note {n} on the ingest") for n in range(20)),
        ],
    )
    ingested = run_cli("ingest", str(tmp_path / "src"), home=tmp_path / "h")
    assert ingested.returncode == 0, ingested.stderr
    return tmp_path / "h"


def seconds(figure: str, unit: str) -> float:
    return float(figure) / (1000 if unit == "ms" else 1)


def test_each_hit_leads_with_how_strong_it_is(home: Path) -> None:
    done = run_cli("search", "fts5 tokenizer", home=home)
    assert done.returncode == 0, done.stderr
    firsts = [line.split()[0] for line in done.stdout.splitlines() if not line.startswith(" ")]
    # Both messages holding every word are strong, the long one too (its BM25 score was 0.2);
    # the one holding "fts5" alone is not.
    assert firsts == ["strong", "strong", "weak"]
    hits = json.loads(run_cli("search", "fts5 tokenizer", "--json", home=home).stdout)
    assert [hit["strength"] for hit in hits] == firsts  # for programs too
    assert min(hit["score"] for hit in hits) < 0.3  # the score ranks; it is no measure of a hit


def test_the_time_said_is_what_the_person_waited(home: Path) -> None:
    """It said "in 2 ms" of a command that took 0.45 s: start-up and loading count too."""
    env = {**os.environ, "CLAWBACK_HOME": str(home)}
    started = time.monotonic()
    done = subprocess.run(
        [CLAWBACK, "search", "fts5 tokenizer"], capture_output=True, text=True, env=env, check=True
    )
    waited = time.monotonic() - started
    found = SUMMARY.search(done.stderr)
    assert found, done.stderr
    said, search = seconds(*found.group(2, 3)), seconds(*found.group(4, 5))
    assert search <= said <= waited + 0.02  # /proc counts in hundredths of a second
    assert said >= waited / 3  # the process's start-up is in it, not the query alone


def test_search_hits_name_the_project_that_project_matches(tmp_path: Path) -> None:
    """Issue 22: hits showed the file key (``x/elsewhere.jsonl``), never the project name."""
    home = archive_with_shared_prefixes(tmp_path)
    other = cc_user("elsewhere", "u1", "the greenhouse compost order")
    other["cwd"] = "/home/u/garden-planner"
    write_lines(tmp_path / "src2" / "x" / "elsewhere.jsonl", [other])
    assert (
        run("ingest", str(tmp_path / "src2"), "--source", "claude-code", home=home).returncode == 0
    )
    hits = json.loads(run("search", "compost", "--json", home=home).stdout)
    assert [hit["project"] for hit in hits] == ["garden-planner"]
    shown = run("search", "compost", home=home).stdout.splitlines()[0]
    assert shown.split()[1:3] == ["claude-code", "garden-planner"]
    narrowed = run("search", "compost", "--project", "garden-planner", "--json", home=home)
    assert len(json.loads(narrowed.stdout)) == 1
