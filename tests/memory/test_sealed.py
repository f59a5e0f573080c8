"""Issue 11, class 4: memory files stay inside the workspace, and odd names get one clear error.

A hostile workspace holds links out of it (a ``.bak``, the ``.trash`` folder, a note), names
that are folders, FIFOs, too long or not UTF-8. Nothing outside may be read, written, moved
or chmodded; every command answers with one line, never a traceback or a hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clawback.core.errors import UsageError
from clawback.core.home import Home
from clawback.core.ingest.health import health
from clawback.core.memory.files import Workspace

from tests.cli_runner import run_cli


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir(mode=0o755)
    (folder / "x.md").write_text("OUTSIDE ORIGINAL\n")
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "home" / "workspace").ensure()


def test_save_replaces_a_symlinked_backup_instead_of_writing_through_it(
    ws: Workspace, outside: Path
) -> None:
    ws.save("memory/2026-01-01.md", "first\n")
    os.symlink(outside / "x.md", ws.root / "memory" / "2026-01-01.md.bak")
    os.symlink(outside / "x.md", ws.root / "MEMORY.md.bak")
    ws.save("MEMORY.md", "one\n")
    ws.save("MEMORY.md", "two\n")
    ws.save("memory/2026-01-01.md", "second\n")  # what flush --yes does
    assert (outside / "x.md").read_text() == "OUTSIDE ORIGINAL\n"
    bak = ws.root / "memory" / "2026-01-01.md.bak"
    assert not bak.is_symlink() and bak.read_text() == "first\n"
    assert (ws.root / "MEMORY.md.bak").read_text() == "one\n"


def test_a_symlinked_trash_is_refused_and_nothing_moves_out(ws: Workspace, outside: Path) -> None:
    ws.save("memory/note.md", "keep me\n")
    os.symlink(outside, ws.root / ".trash")
    with pytest.raises(UsageError, match="trash"):
        ws.delete("memory/note.md")
    assert (ws.root / "memory" / "note.md").read_text() == "keep me\n"
    assert sorted(p.name for p in outside.iterdir()) == ["x.md"]
    assert outside.stat().st_mode & 0o777 == 0o755  # not chmodded


def test_list_check_and_ingest_do_not_read_a_note_linking_out(
    tmp_path: Path, outside: Path
) -> None:
    home = Home.open(tmp_path / "home")
    ws = Workspace(home.workspace).ensure()
    ws.save("memory/2026-01-01.md", "inside note\n")
    os.symlink(outside / "x.md", ws.root / "memory" / "evil.md")
    try:
        assert [f.name for f in ws.list()] == ["memory/2026-01-01.md"]
        assert ws.problems and ws.problems[0][0] == "memory/evil.md"
        assert ws.check().ok
        stats = home.ingest_all()
        texts = [r[0] for r in home.db.execute("SELECT text FROM entries")]
        assert not any("OUTSIDE" in t for t in texts)
        assert any("inside note" in t for t in texts)
        named = {item["path"]: item["reason"] for item in stats.to_dict()["skipped_files"]}
        assert "out of the workspace" in named[str(ws.root / "memory" / "evil.md")]
        assert health(home.db, home.paths, "no-claude").skipped_files
    finally:
        home.close()


def _one_line_error(home: Path, *args: str) -> str:
    result = run_cli(*args, home=home)
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    return result.stderr


def test_odd_names_each_give_one_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memory = home / "workspace" / "memory"
    memory.mkdir(parents=True)
    (memory / "dir.md").mkdir()
    (memory / "bad.md").write_bytes(b"caf\xe9 \xff\n")
    os.mkfifo(memory / "f.md")
    long = "memory/" + "a" * 300 + ".md"
    started = time.monotonic()
    assert "too long" in _one_line_error(home, "memory", "show", long)
    assert "folder" in _one_line_error(home, "memory", "show", "memory/dir.md")
    assert "UTF-8" in _one_line_error(home, "memory", "show", "memory/bad.md")
    assert "not a regular file" in _one_line_error(home, "memory", "show", "memory/f.md")
    assert time.monotonic() - started < 20  # the FIFO did not hang
    listed = run_cli("memory", "list", "--json", home=home)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    assert "memory/bad.md" in listed.stdout  # listed (bytes are counted, not decoded)
    assert "f.md" in listed.stderr and "dir.md" in listed.stderr
    checked = run_cli("memory", "check", home=home)
    assert checked.returncode in (0, 1) and "Traceback" not in checked.stderr


def test_stale_temp_files_of_killed_saves_are_cleaned_on_start(tmp_path: Path) -> None:
    home = Home.open(tmp_path / "home")
    home.close()
    memory = tmp_path / "home" / "workspace" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    stale = memory / ".2026-01-01.md.ab12cd34.tmp"
    fresh = memory / ".2026-01-02.md.ef56gh78.tmp"  # a save in flight right now
    mine = memory / ".notes.tmp"  # not a name clawback makes
    for path in (stale, fresh, mine):
        path.write_text("half a note")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(mine, (old, old))
    Home.open(tmp_path / "home").close()
    assert not stale.exists()
    assert fresh.exists() and mine.exists()


def test_a_backup_write_killed_half_way_leaves_the_old_backup_whole(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.save("MEMORY.md", "v1\n")
    ws.save("MEMORY.md", "v2\n")  # .bak = v1
    real_replace = os.replace

    def killed(src: str, dst: str) -> None:
        if str(dst).endswith(".bak"):
            raise KeyboardInterrupt  # the process dies between writing and renaming
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        ws.save("MEMORY.md", "v3\n")
    monkeypatch.setattr(os, "replace", real_replace)
    assert (ws.root / "MEMORY.md.bak").read_text() == "v1\n"
    assert (ws.root / "MEMORY.md").read_text() == "v2\n"
    assert not list(ws.root.glob(".*.tmp"))  # the temporary file went with the failure


def test_subprocess_fifo_show_does_not_hang(tmp_path: Path) -> None:
    """The installed command, not only the in-process one: a FIFO note returns at once."""
    home = tmp_path / "home"
    (home / "workspace" / "memory").mkdir(parents=True)
    os.mkfifo(home / "workspace" / "memory" / "f.md")
    done = subprocess.run(
        [sys.executable, "-m", "clawback.cli", "--home", str(home), "memory", "show", "memory/f.md"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode != 0 and "not a regular file" in done.stderr
