"""`clawback sessions` prints prefixes that work, the project `--project` matches, and one row
per session whatever its folder is called."""

from __future__ import annotations

import json
from pathlib import Path

from ..cli_runner import run_cli as run
from ..helpers import cc_user, write_lines
from .prefix_archive import archive_with_shared_prefixes


def test_sessions_prints_prefixes_that_are_unique(tmp_path: Path) -> None:
    home = archive_with_shared_prefixes(tmp_path)
    listed = run("sessions", home=home).stdout.splitlines()
    prefixes = {line.split()[0] for line in listed}
    assert prefixes == {"ses_stagA", "ses_stagB", "ses_othe"}  # 8 characters unless that clashes
    for prefix in prefixes:  # each works as an argument
        shown = run("show", prefix, "--format", "json", home=home)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["session"]["id"].startswith(prefix)


def test_sessions_show_the_project_name_that_project_matches(tmp_path: Path) -> None:
    """Issue 22: ``--project`` matched the working folder, which ``sessions`` never showed."""
    home = archive_with_shared_prefixes(tmp_path)
    other = cc_user("elsewhere", "u1", "hi")
    other["cwd"] = "/home/u/garden-planner"
    write_lines(tmp_path / "src2" / "x" / "elsewhere.jsonl", [other])
    assert (
        run("ingest", str(tmp_path / "src2"), "--source", "claude-code", home=home).returncode == 0
    )
    listed = run("sessions", home=home).stdout.splitlines()
    assert [line.split()[4] for line in listed].count("proj") == 3
    assert any(line.split()[4] == "garden-planner" for line in listed)
    narrowed = run("sessions", "--project", "garden-planner", home=home).stdout.splitlines()
    assert [line.split()[0] for line in narrowed] == ["elsewher"]
    rows = json.loads(run("sessions", "--json", home=home).stdout)
    assert {row["project"] for row in rows} == {"proj", "garden-planner"}


def test_sessions_narrowed_to_a_project(tmp_path: Path) -> None:
    result = run("demo", "--ingest-only", home=tmp_path)
    assert result.returncode == 0, result.stderr
    home = Path(result.stdout.strip())
    everything = json.loads(run("sessions", "--json", home=home).stdout)
    result = run("sessions", "--project", "projects/clawback", "--json", home=home)
    assert result.returncode == 0, result.stderr
    narrowed = json.loads(result.stdout)
    assert {s["title"] for s in narrowed} == {
        "Choosing the search index",
        "Textual layout bug in the sidebar",
    }
    assert set(narrowed[0]) == set(everything[0])  # the same shape as without the flag
    assert {s["cwd"] for s in narrowed} == {"/home/demo/projects/clawback"}
    both = run("sessions", "--project", "demo", "--source", "openclaw", "--json", home=home)
    assert {s["title"] for s in json.loads(both.stdout)} == {
        "Trip planning with Alice",
        "Weekly review",
    }
    nothing = run("sessions", "--project", "no-such-project", home=home)
    assert nothing.returncode == 0 and nothing.stdout == ""
    assert nothing.stderr.strip() == "No sessions match."


def test_a_newline_in_a_working_folder_keeps_the_sessions_table_one_row_each(
    world: dict[str, Path], tmp_path: Path
) -> None:
    """Issue 31 item 17: a folder named with a newline (any name a file system allows) broke
    the row in two, and an escape code in one reached the terminal."""
    odd = "/home/u/two\nlines \x1b[31mred"
    line = cc_user("8d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a", "n1", "a session in an odd folder")
    line["cwd"] = odd
    write_lines(world["transcript"].parent.parent / "-home-u-two-lines" / "odd.jsonl", [line])
    assert run("ingest", home=world["home"]).returncode == 0
    shown = run("sessions", home=world["home"]).stdout
    rows = shown.splitlines()
    assert len(rows) == 2, shown  # the world's session and this one
    assert "\x1b" not in shown and any("lines ?[31mred"[:8] in row for row in rows)
