"""`clawback sessions` prints prefixes that work, `show` lists the sessions an ambiguous prefix
could mean, `ingest` says where it looked, and `demo` keeps one demo home."""

from __future__ import annotations

import json
from pathlib import Path

from ..cli_runner import run_cli as run
from ..helpers import cc_user, write_lines

SHARED = ["ses_stagA1", "ses_stagB2", "ses_other"]  # ids that share a long beginning


def _archive(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for sid in SHARED:
        write_lines(tmp_path / "src" / "proj" / f"{sid}.jsonl", [cc_user(sid, "u1", f"hi {sid}")])
    result = run("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home)
    assert result.returncode == 0, result.stderr
    return home


def test_sessions_prints_prefixes_that_are_unique(tmp_path: Path) -> None:
    home = _archive(tmp_path)
    listed = run("sessions", home=home).stdout.splitlines()
    prefixes = {line.split()[0] for line in listed}
    assert prefixes == {"ses_stagA", "ses_stagB", "ses_othe"}  # 8 characters unless that clashes
    for prefix in prefixes:  # each works as an argument
        shown = run("show", prefix, "--format", "json", home=home)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["session"]["id"].startswith(prefix)


def test_show_on_an_ambiguous_prefix_lists_the_candidates(tmp_path: Path) -> None:
    home = _archive(tmp_path)
    result = run("show", "ses_stag", home=home)
    assert result.returncode != 0
    assert "ambiguous" in result.stderr
    assert "ses_stagA1" in result.stderr and "ses_stagB2" in result.stderr
    assert "ses_other" not in result.stderr  # "_" is not a wildcard
    assert "Traceback" not in result.stderr


def test_show_on_a_short_prefix_lists_the_candidates_instead_of_no_session(
    tmp_path: Path,
) -> None:
    """Issue 22: ``show ses`` said "no session" though three ids start with it."""
    home = _archive(tmp_path)
    result = run("show", "ses", home=home)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "too short" in result.stderr and result.stderr.count("\n") == 1
    assert all(sid in result.stderr for sid in SHARED)
    assert "no session" in run("show", "zz", home=home).stderr


def test_sessions_show_the_project_name_that_project_matches(tmp_path: Path) -> None:
    """Issue 22: ``--project`` matched the working folder, which ``sessions`` never showed."""
    home = _archive(tmp_path)
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


def test_search_hits_name_the_project_that_project_matches(tmp_path: Path) -> None:
    """Issue 22: hits showed the file key (``x/elsewhere.jsonl``), never the project name."""
    home = _archive(tmp_path)
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


def test_ingest_with_nothing_found_says_where_it_looked(tmp_path: Path) -> None:
    claude = tmp_path / "nowhere" / "projects"
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{claude}"\nopenclaw_path = "{tmp_path / "oc"}"\n'
    )
    result = run("ingest", home=home)
    assert result.returncode == 0, result.stderr
    assert "No transcripts found. Looked in:" in result.stderr
    assert f"claude-code: {claude} (no such folder)" in " ".join(result.stderr.split())


def test_ingest_names_a_file_it_cannot_read_once_and_counts_empty_files_apart(
    tmp_path: Path,
) -> None:
    """Issue 22: each ingest repeated "1 files in unknown formats" and counted empty files as
    unchanged."""
    home = _archive(tmp_path)
    (tmp_path / "src" / "proj" / "empty.jsonl").write_text("")
    (tmp_path / "src" / "notes.jsonl").write_text("not json at all\n")
    first = run("ingest", str(tmp_path / "src"), home=home)
    assert first.stderr.count("not read:") == 1 and "notes.jsonl" in first.stderr
    assert "1 empty files" in first.stdout and "3 unchanged" in first.stdout
    again = run("ingest", str(tmp_path / "src"), home=home)
    assert "not read:" not in again.stderr
    assert "1 files not read, as before" in again.stderr
    assert "3 unchanged" in again.stdout and "1 empty files" in again.stdout
    (tmp_path / "src" / "proj" / "empty.jsonl").write_text(
        json.dumps(cc_user("late", "u1", "written at last")) + "\n"
    )
    late = run("ingest", str(tmp_path / "src"), home=home)
    assert "Ingested 1 files" in late.stdout and "empty" not in late.stdout


def test_demo_reuses_one_home_and_reset_starts_over(tmp_path: Path) -> None:
    first = run("demo", "--ingest-only", home=tmp_path)
    assert first.returncode == 0, first.stderr
    demo = Path(first.stdout.strip())
    assert demo == tmp_path.resolve() / "demo"
    marker = demo / "workspace" / "tried.md"
    marker.write_text("something I tried")
    again = run("demo", "--ingest-only", home=tmp_path)
    assert Path(again.stdout.strip()) == demo and marker.exists()  # the same home, kept
    reset = run("demo", "--ingest-only", "--reset", home=tmp_path)
    assert Path(reset.stdout.strip()) == demo and not marker.exists()
    sessions = json.loads(run("sessions", "--json", home=demo).stdout)
    assert len(sessions) == 6
