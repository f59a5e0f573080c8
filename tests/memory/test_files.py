"""Memory files: confinement, atomic saves with .bak, trash, daily notes, size and link checks."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.home import Home
from clawback.core.memory.files import MAX_BYTES, MAX_LINES, SizeReport, Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "workspace").ensure()


@pytest.mark.parametrize(
    "name", ["../x.md", "/etc/passwd.md", "memory/../../x.md", "", "notes.txt"]
)
def test_names_outside_the_workspace_are_refused(ws: Workspace, name: str) -> None:
    with pytest.raises(UsageError):
        ws.resolve(name)


def test_symlink_pointing_outside_is_refused(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    os.symlink(outside, ws.root / "memory" / "link.md")
    with pytest.raises(UsageError, match="outside the workspace"):
        ws.read("memory/link.md")
    with pytest.raises(UsageError):
        ws.save("memory/link.md", "overwrite")
    assert outside.read_text() == "secret"


def test_has_sees_anything_at_a_name_even_what_is_no_memory_file(
    ws: Workspace, tmp_path: Path
) -> None:
    assert not ws.has("MEMORY.md")  # only here may the app offer a new one
    os.symlink(ws.root / "gone.md", ws.root / "MEMORY.md")  # a broken link
    assert ws.has("MEMORY.md")
    os.symlink(tmp_path / "outside.md", ws.root / "memory" / "out.md")  # leads outside
    assert ws.has("memory/out.md")
    (ws.root / "memory" / "folder.md").mkdir()
    assert ws.has("memory/folder.md")


def test_save_is_atomic_and_keeps_a_backup(ws: Workspace) -> None:
    ws.save("MEMORY.md", "first\n")
    ws.save("MEMORY.md", "second\n")
    assert ws.read("MEMORY.md") == "second\n"
    assert (ws.root / "MEMORY.md.bak").read_text() == "first\n"
    assert (ws.root / "MEMORY.md").stat().st_mode & 0o777 == 0o600
    assert not [p for p in ws.root.iterdir() if p.name.endswith(".tmp")]


def test_daily_note_list_rename_and_recoverable_delete(ws: Workspace) -> None:
    path = ws.new_daily(date(2026, 11, 22))
    assert path.read_text().startswith("# 2026-11-22")
    ws.save("MEMORY.md", "# Memory\n")
    assert [m.name for m in ws.list()] == ["MEMORY.md", "memory/2026-11-22.md"]
    ws.rename("memory/2026-11-22.md", "memory/trip.md")
    trashed = ws.delete("memory/trip.md")
    assert trashed.exists() and "# 2026-11-22" in trashed.read_text()
    assert [m.name for m in ws.list()] == ["MEMORY.md"]
    with pytest.raises(NotFoundError):
        ws.read("memory/trip.md")


def test_append_adds_after_existing_text(ws: Workspace) -> None:
    ws.save("memory/2026-01-01.md", "# day")
    ws.append("memory/2026-01-01.md", "## later\nnote\n")
    assert ws.read("memory/2026-01-01.md") == "# day\n\n## later\nnote\n"


def test_remember_starts_the_day_then_appends_under_the_time_with_secrets_masked(
    ws: Workspace,
) -> None:
    morning = datetime(2026, 3, 4, 9, 5, tzinfo=UTC)
    path = ws.remember("  keep the cache in SQLite  \n", morning)
    assert path == ws.root / "memory" / "2026-03-04.md"
    assert ws.read("memory/2026-03-04.md") == (
        "# 2026-03-04\n\n## 09:05 · remembered\n\nkeep the cache in SQLite\n"
    )
    key = "sk-ant-api03-" + "x1Y2z3" * 8
    ws.remember(f"the staging key is {key}", morning.replace(hour=17, minute=30))
    text = ws.read("memory/2026-03-04.md")
    assert text.endswith("\n\n## 17:30 · remembered\n\nthe staging key is sk-ant-…[masked]\n")
    assert key not in text
    with pytest.raises(UsageError, match="empty"):
        ws.remember(" \n ", morning)


def size(ws: Workspace) -> SizeReport:
    """The size check of ``MEMORY.md`` (which the test has written)."""
    report = ws.check().size
    assert report is not None
    return report


def test_size_check_flags_at_the_claude_code_limits(ws: Workspace) -> None:
    ws.save("MEMORY.md", "x\n" * MAX_LINES)
    assert not size(ws).flagged
    ws.save("MEMORY.md", "x\n" * (MAX_LINES + 1))
    assert size(ws).over_lines
    ws.save("MEMORY.md", "y" * (MAX_BYTES + 1))
    assert size(ws).over_bytes and not ws.check().ok


def test_check_reports_broken_relative_links(ws: Workspace) -> None:
    ws.save("memory/2026-11-18.md", "# day\n")
    ws.save(
        "MEMORY.md",
        "see [day](memory/2026-11-18.md), [gone](memory/nope.md), [web](https://x.org), [a](#top)\n",
    )
    assert ws.check().broken_links == [("MEMORY.md", 1, "memory/nope.md")]


def test_folders_made_for_memory_are_private(ws: Workspace, home: Home) -> None:
    ws.save("projects/garden/notes.md", "tomatoes\n")
    assert (ws.root / "projects").stat().st_mode & 0o777 == 0o700
    assert (ws.root / "projects" / "garden").stat().st_mode & 0o777 == 0o700
    home.watch_folders()  # what the app and `clawback watch` do on a fresh home
    assert home.workspace.stat().st_mode & 0o777 == 0o700
