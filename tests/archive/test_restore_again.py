"""Restoring as a person does it more than once: two forced restores in one second keep both
files that were there, a session restored, resumed, deleted and restored again from a folder not
named the way Claude Code names them, a transcript that still exists elsewhere, and a kept copy
that is not a regular file."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from clawback.core.archive.restore import RestoreError, project_folder, session_files
from clawback.core.archive.sessions import list_sessions, resolve_session
from clawback.core.home import Home
from clawback.core.records import Source

from tests.helpers import cc_user, write_lines

SESSION = "5d2c8f0e-1b7a-4c3e-9f6d-2a8b0c4e6f1a"


def _lines(n: int, start: int = 0) -> list[dict[str, object]]:
    return [cc_user(SESSION, f"u{i}", f"turn {i} about the quokka migration")
            for i in range(start, start + n)]  # fmt: skip


@pytest.fixture
def deleted(home: Home, cc_root: Path) -> Path:
    """A session Claude Code wrote and deleted; its own place, where restore writes it."""
    path = cc_root / project_folder("/home/u/proj") / f"{SESSION}.jsonl"
    write_lines(path, _lines(2))
    home.ingest_all()
    path.unlink()
    home.ingest_all()
    return path


def test_two_forced_restores_in_one_second_keep_both_files_that_were_there(
    home: Home, deleted: Path
) -> None:
    """Issue 31 item 1: both runs named the same backup, and the second rename replaced the
    first backup: the person's original transcript was gone."""
    session = resolve_session(home.db, SESSION)
    deleted.parent.mkdir(parents=True, exist_ok=True)
    deleted.write_text("the person's own first file\n")
    first = home.restore(session, force=True)
    deleted.write_text("the person's own second file\n")  # and again, within the second
    second = home.restore(session, force=True)
    backups = sorted(deleted.parent.glob(f"{deleted.name}.clawback-backup-*"))
    contents = sorted(p.read_text() for p in backups)
    assert contents == ["the person's own first file\n", "the person's own second file\n"]
    assert first[0].backup != second[0].backup
    assert {first[0].backup, second[0].backup} == set(backups)
    third = home.restore(session, force=True)  # the restored file itself is kept too
    assert third[0].backup is not None and len(list(deleted.parent.glob("*backup*"))) == 3


def test_a_forced_restore_over_a_symlink_moves_the_link_not_its_target(
    home: Home, deleted: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "mine.jsonl"
    elsewhere.write_text("mine\n")
    deleted.parent.mkdir(parents=True, exist_ok=True)
    deleted.symlink_to(elsewhere)
    [done] = home.restore(resolve_session(home.db, SESSION), force=True)
    assert done.backup is not None and done.backup.is_symlink()
    assert os.readlink(done.backup) == str(elsewhere) and elsewhere.read_text() == "mine\n"
    assert not deleted.is_symlink() and "quokka" in deleted.read_text()


def test_restore_resume_delete_restore_from_an_oddly_named_folder(
    home: Home, cc_root: Path
) -> None:
    """Issue 31 item 5: after the second delete every restore failed ("two files of session
    ... would both be written"), even with --force, while ``sessions --deleted`` offered it."""
    odd = cc_root / "my project (old laptop)" / f"{SESSION}.jsonl"
    write_lines(odd, _lines(3))
    home.ingest_all()
    odd.unlink()
    home.ingest_all()
    session = resolve_session(home.db, SESSION)
    [restored] = home.restore(session)
    place = cc_root / project_folder("/home/u/proj") / f"{SESSION}.jsonl"
    assert restored.path == place
    with place.open("a") as file:  # claude --resume carries it on in that file
        file.writelines(line + "\n" for line in map(_json, _lines(2, start=3)))
    home.ingest_all()
    assert len(session_files(home.db, SESSION)) == 2
    place.unlink()  # and Claude Code deletes it again
    home.ingest_all()
    deleted = [s.id for s in list_sessions(home.db, source="claude-code", limit=None)
               if s.source_missing]  # fmt: skip
    assert deleted == [SESSION]
    [again] = home.restore(resolve_session(home.db, SESSION))
    assert again.path == place and again.lines == 5  # the resumed turns are there too
    assert [f"turn {i} " in place.read_text() for i in range(5)] == [True] * 5
    assert not resolve_session(home.db, SESSION).source_missing


def _json(line: dict[str, object]) -> str:
    import json

    return json.dumps(line)


def test_two_different_files_for_one_place_still_stop_it(home: Home, cc_root: Path) -> None:
    """Files that are not one the continuation of the other are never chosen between."""
    first = cc_root / "backup-a" / f"{SESSION}.jsonl"
    second = cc_root / "backup-b" / f"{SESSION}.jsonl"
    write_lines(first, _lines(2))
    write_lines(second, [cc_user(SESSION, "x1", "something else entirely")])
    home.ingest_all()
    shutil.rmtree(first.parent)
    shutil.rmtree(second.parent)
    home.ingest_all()
    with pytest.raises(RestoreError, match="hold different lines; nothing was written"):
        home.restore(resolve_session(home.db, SESSION))


def test_a_transcript_that_still_exists_elsewhere_is_named_not_copied(
    home: Home, cc_root: Path
) -> None:
    """Issue 31 item 5: restore wrote a second copy without a word."""
    odd = cc_root / "kept by hand" / f"{SESSION}.jsonl"
    write_lines(odd, _lines(2))
    home.ingest_all()
    place = cc_root / project_folder("/home/u/proj") / f"{SESSION}.jsonl"
    with pytest.raises(RestoreError, match=f"still exists at {odd}") as refused:
        home.restore(resolve_session(home.db, SESSION))
    assert "nothing was written" in str(refused.value) and "--force" in str(refused.value)
    assert not place.exists()
    [copy] = home.restore(resolve_session(home.db, SESSION), force=True)
    assert copy.path == place and copy.also == [odd]
    assert odd.read_text() == "".join(_json(x) + "\n" for x in _lines(2))


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_kept_copy_that_is_not_a_file_is_refused_at_once(
    home: Home, deleted: Path, kind: str
) -> None:
    """Issue 31 item 12: a kept copy linked to /dev/zero was read until the process was killed
    (21 GB), a FIFO waited for ever."""
    [copy] = home.paths.kept.rglob("*.kept")
    copy.unlink()
    if kind == "fifo":
        os.mkfifo(copy)
    else:
        copy.symlink_to("/dev/zero")
    started = time.monotonic()
    with pytest.raises(RestoreError, match="not a regular file"):
        home.restore(resolve_session(home.db, SESSION))
    assert time.monotonic() - started < 5
    assert not deleted.exists()


def test_a_working_folder_longer_than_a_file_name_is_shortened_as_claude_code_does(
    home: Home, cc_root: Path, tmp_path: Path
) -> None:
    """Issue 31 item 17: restore failed with "File name too long". Claude Code (2.1.328) cuts
    the folder name at 200 and adds the base-36 of its string hash (checked against the real
    CLI in tests/integration/test_project_folder_real_claude.py)."""
    cwd = "/home/u/" + "/".join(["a folder with a long name, " * 3] * 4)
    three = "a-folder-with-a-long-name--" * 3
    assert project_folder(cwd) == f"-home-u-{three}-{three}-a-folder-with-a-long-name--a-1c2jjg"
    assert project_folder("/home/u/emoji-🦘") == "-home-u-emoji---"  # two UTF-16 units, two "-"
    backup = tmp_path / "backup"
    line = cc_user(SESSION, "u1", "deep in the folders")
    line["cwd"] = cwd
    write_lines(backup / f"{SESSION}.jsonl", [line])
    home.ingest_paths([backup], Source.CLAUDE_CODE)
    [done] = home.restore(resolve_session(home.db, SESSION), cc_root)  # a copy, to a folder named
    assert done.path == cc_root / project_folder(cwd) / f"{SESSION}.jsonl"
    assert len(done.path.parent.name) == 207 and done.path.is_file()
