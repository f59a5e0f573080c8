"""``clawback memory``, end to end (in-process, see ``cli_runner``)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from datetime import date
from pathlib import Path

from tests.cli_runner import run_cli
from tests.fake_claude.fixtures import FAKE_CLAUDE


def run(
    *args: str, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, home=home, env={"CLAWBACK_CLAUDE": str(FAKE_CLAUDE), **(env or {})})


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    return result.stderr


def test_memory_remember_appends_to_today_and_is_searchable_at_once(tmp_path: Path) -> None:
    home = tmp_path / "h"
    kept = run(
        "memory", "remember", "the", "tangerine", "rule:", "cut releases on Fridays", home=home
    )
    assert kept.returncode == 0, kept.stderr
    note = Path(kept.stdout.strip())
    assert note == (home / "workspace" / "memory" / f"{date.today().isoformat()}.md").resolve()
    piped = run_cli("memory", "remember", "-", home=home, input="line one\n$HOME `not run`\n")
    assert piped.returncode == 0 and piped.stdout.strip() == str(note)
    text = note.read_text()
    assert "the tangerine rule: cut releases on Fridays\n" in text
    assert "line one\n$HOME `not run`\n" in text  # stdin is kept as written
    assert text.count("· remembered") == 2
    found = run("search", "tangerine", "--json", home=home)
    assert [hit["source"] for hit in json.loads(found.stdout)] == ["memory"]
    assert "empty" in one_error_line(run("memory", "remember", " ", home=home))
    too_long = run_cli("memory", "remember", "-", home=home, input="x" * (64 * 1024 + 1))
    assert "longer than" in one_error_line(too_long)
    assert note.read_text() == text  # a refused note writes nothing


def test_memory_new_list_show_path(tmp_path: Path) -> None:
    home = tmp_path / "h"
    path = run("memory", "path", home=home)
    assert path.returncode == 0 and path.stdout.strip() == str((home / "workspace").resolve())

    new = run("memory", "new", home=home)
    assert new.returncode == 0, new.stderr
    today = f"memory/{date.today().isoformat()}.md"
    assert new.stdout.strip().endswith(today) and Path(new.stdout.strip()).is_file()
    (home / "workspace" / "MEMORY.md").write_text("# Memory\n\n- the tangerine rule\n")

    listed = run("memory", "list", "--json", home=home)
    assert [f["name"] for f in json.loads(listed.stdout)] == ["MEMORY.md", today]
    assert "MEMORY.md" in run("memory", "list", home=home).stdout

    shown = run("memory", "show", "MEMORY.md", home=home)
    assert shown.stdout == "# Memory\n\n- the tangerine rule\n"
    assert "no memory file" in one_error_line(run("memory", "show", "memory/nope.md", home=home))
    assert "'..'" in one_error_line(run("memory", "show", "../config.md", home=home))
    # the new note was indexed at once, like any save
    with sqlite3.connect(home / "clawback.db") as db:
        keys = [row[0] for row in db.execute("SELECT file_key FROM files WHERE source = 'memory'")]
    assert today in keys


def test_memory_check_flags_size_and_broken_links(tmp_path: Path) -> None:
    home = tmp_path / "h"
    workspace = home / "workspace"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "memory" / "2026-11-20.md").write_text("# day\n")
    (workspace / "MEMORY.md").write_text("# Memory\nSee [the day](memory/2026-11-20.md).\n")
    ok = run("memory", "check", home=home)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "fine" in ok.stdout

    lines = ["# Memory", "See [the plan](memory/plan.md) and [site](https://example.com)."]
    lines += [f"- note {i}" for i in range(205)]
    (workspace / "MEMORY.md").write_text("\n".join(lines) + "\n")
    bad = run("memory", "check", home=home)
    assert bad.returncode == 1
    assert "MEMORY.md is too long" in bad.stdout and "207 lines (limit 200)" in bad.stdout
    assert "broken link MEMORY.md:2 -> memory/plan.md" in bad.stdout
    assert "example.com" not in bad.stdout

    report = json.loads(run("memory", "check", "--json", home=home).stdout)
    assert report["ok"] is False and report["memory"]["over_lines"] is True
    assert report["memory"]["over_bytes"] is False
    assert report["broken_links"] == [{"file": "MEMORY.md", "line": 2, "target": "memory/plan.md"}]

    (workspace / "MEMORY.md").write_text("x" * (25 * 1024 + 1))
    big = run("memory", "check", home=home)
    assert big.returncode == 1 and "25,601 bytes (limit 25,600)" in big.stdout


def test_memory_show_takes_a_date_and_suggests_what_is_there(tmp_path: Path) -> None:
    """Issue 22: ``memory show 2026-11-25`` gave no suggestion."""
    home = tmp_path / "h"
    (home / "workspace" / "memory").mkdir(parents=True)
    (home / "workspace" / "memory" / "2026-11-24.md").write_text("# yesterday\n")
    (home / "workspace" / "MEMORY.md").write_text("# Memory\n")
    assert run("memory", "show", "2026-11-24", home=home).stdout == "# yesterday\n"
    assert run("memory", "show", "MEMORY", home=home).stdout == "# Memory\n"
    missing = one_error_line(run("memory", "show", "2026-11-25", home=home))
    assert "no memory file memory/2026-11-25.md (did you mean memory/2026-11-24.md?)" in missing


def test_workspace_can_be_any_folder(tmp_path: Path) -> None:
    """``memory.workspace`` points clawback at an existing agent workspace."""
    agent = tmp_path / "agent-workspace"
    (agent / "memory").mkdir(parents=True)
    (agent / "MEMORY.md").write_text("# Memory\n\nThe ferret is called Quillon.\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[memory]\nworkspace = "{agent}"\n')
    path = run_cli("memory", "path", home=home)
    assert path.stdout.strip() == str(agent)
    assert run_cli("ingest", home=home).returncode == 0
    hits = run_cli("search", "Quillon", "--json", home=home)
    (hit,) = json.loads(hits.stdout)
    assert hit["source"] == "memory" and hit["path"] == str(agent / "MEMORY.md")
