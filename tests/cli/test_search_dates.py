"""``clawback search`` with a question that only names a time: what was asked then, a session
each, newest first, said so on stderr; the JSON hits say they were found by the date."""

from __future__ import annotations

import json
from pathlib import Path

from ..cli_runner import run_cli
from ..helpers import cc_user, write_lines


def test_what_happened_on_a_day(tmp_path: Path) -> None:
    src = tmp_path / "src" / "proj"
    write_lines(
        src / "a.jsonl",
        [cc_user("a", "a1", "migrate the billing tables", ts="2026-05-04T09:00:00Z")],
    )
    write_lines(
        src / "b.jsonl", [cc_user("b", "b1", "write the release notes", ts="2026-05-04T17:00:00Z")]
    )
    write_lines(
        src / "c.jsonl", [cc_user("c", "c1", "another day entirely", ts="2026-05-05T09:00:00Z")]
    )
    home = tmp_path / "home"
    assert (
        run_cli("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home).returncode
        == 0
    )

    shown = run_cli("search", "what happened on May 4, 2026?", home=home)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.index("write the release notes") < shown.stdout.index("migrate the billing")
    assert "another day" not in shown.stdout
    assert "what you asked 2026-05-04, a session each, newest first" in shown.stderr

    hits = json.loads(run_cli("search", "2026-05-04", "--json", home=home).stdout)
    assert [(h["session_id"], h["found_by"]) for h in hits] == [("b", "date"), ("a", "date")]

    # A day nobody said anything: which day was read, said once.
    empty = run_cli("search", "what happened on May 6, 2026?", home=home)
    assert empty.returncode == 0 and empty.stdout == ""
    said = "No matches for 'what happened on May 6, 2026?': nothing in the archive was said then"
    assert f"{said} (2026-05-06)." in empty.stderr
    assert empty.stderr.count("nothing in the archive") == 1


def test_a_time_among_words_says_how_it_was_read(tmp_path: Path) -> None:
    """Words and a time: the hits from then come first, and stderr says which days were read
    (the line was printed only for a question naming a time alone)."""
    src = tmp_path / "src" / "proj"
    write_lines(
        src / "a.jsonl", [cc_user("a", "a1", "tune the billing cron", ts="2026-05-04T09:00:00Z")]
    )
    write_lines(
        src / "b.jsonl", [cc_user("b", "b1", "billing cron again", ts="2026-06-10T09:00:00Z")]
    )
    home = tmp_path / "home"
    ingested = run_cli("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home)
    assert ingested.returncode == 0

    shown = run_cli("search", "billing cron in May 2026", home=home)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.index("tune the billing") < shown.stdout.index("billing cron again")
    assert "read as 2026-05-01 to 2026-05-31: what was said then comes first" in shown.stderr
    plain = run_cli("search", "billing cron", home=home)
    assert "read as" not in plain.stderr
