"""`clawback ingest` says where it looked, and names a file it cannot read once."""

from __future__ import annotations

import json
from pathlib import Path

from ..cli_runner import run_cli as run
from ..helpers import cc_user
from .prefix_archive import archive_with_shared_prefixes


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
    home = archive_with_shared_prefixes(tmp_path)
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
