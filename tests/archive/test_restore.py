"""Restoring a Claude Code session from its kept copy: the same entries as the original, every
file of the session, and never an overwrite."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from clawback.core.archive.restore import RestoreError, project_folder, session_files
from clawback.core.archive.sessions import list_sessions, resolve_session
from clawback.core.errors import UsageError
from clawback.core.formats import PARSERS
from clawback.core.formats.lines import LineReader, decode_line
from clawback.core.home import Home
from clawback.core.records import Source
from clawback.core.text.masking import mask_secrets

from tests.helpers import cc_assistant, cc_user, write_lines

SESSION = "5d2c8f0e-1b7a-4c3e-9f6d-2a8b0c4e6f1a"
SECRET = "sk-ant-api03-" + "Zq8xWm3Kd9Lp2Rt7Vb4Nc6Hy1Js5Gf0" * 2


def parsed(path: Path) -> list[Any]:
    """What the project's own Claude Code parser makes of a file, line by line, with every text
    masked (the copy holds masked text; the parser's output of the original is masked when it
    enters the index)."""
    parser = PARSERS[Source.CLAUDE_CODE]
    out: list[Any] = []
    for raw, _end, count in LineReader(path, 0, 32 << 20, finished=True):
        if not raw or not raw.strip():
            out.extend([None] * (count if raw is not None else 1))
            continue
        values, _problem = decode_line(raw)
        for value in values:
            line = parser(value)
            entries = [
                dataclasses.replace(
                    e, text=mask_secrets(e.text), display=e.display and mask_secrets(e.display)
                )
                for e in line.entries
            ]
            meta = line.meta and dataclasses.replace(
                line.meta,
                title=line.meta.title and mask_secrets(line.meta.title),
                cwd=line.meta.cwd and mask_secrets(line.meta.cwd),
            )
            out.append((entries, meta, line.unknown))
    return out


def _claude_code_files(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.rglob("*.jsonl")) if "pi-mono" not in p.parts]


def shared_folders(shared_dir: Path) -> list[Path]:
    """Each repository's folder of the shared real Claude Code transcripts and peer fixtures
    (one home each: some sessions are in two repositories' fixtures)."""
    folders = []
    for name in ("real-transcripts/claude-code", "peer-fixtures"):
        folder = shared_dir / name
        if not folder.is_dir():
            pytest.skip(f"../shared/{name} not present at {folder}")
        folders += [p for p in sorted(folder.iterdir()) if p.is_dir() and "pi-mono" not in p.name]
    return folders


def _finished(folder: Path) -> None:
    """Date every file an hour back, as the writers of these transcripts are long done: the
    ingest reads an unterminated last line only from a file quiet for a minute, and a copy of
    ../shared made moments before the tests (as CI makes it) is not, so its tails would be left
    for a later ingest and the restored files would lack them."""
    old = time.time() - 3600
    for path in folder.rglob("*"):
        os.utime(path, (old, old), follow_symlinks=False)


def test_restored_transcripts_parse_to_the_same_entries_as_the_originals(
    shared_dir: Path, tmp_path: Path
) -> None:
    keys: list[str] = []
    for at, folder in enumerate(shared_folders(shared_dir)):
        sources = tmp_path / str(at) / "projects"
        shutil.copytree(folder, sources)
        _finished(sources)
        keys += _restores_each_session_as_it_was(sources, tmp_path / str(at))
    # Sub-agents and compacted sessions are among them.
    assert len(keys) > 50
    assert any("subagents" in key or "/agent-" in key for key in keys)
    assert any(key.endswith("dag_compact_after_rewind.jsonl") for key in keys)


def _restores_each_session_as_it_was(sources: Path, work: Path) -> list[str]:
    home = Home.open(work / "home")
    home.config.sources.claude_code_path = str(sources)
    home.config.sources.openclaw = False
    home.ingest_all()
    sessions = list_sessions(home.db, source="claude-code", limit=None)
    originals = {f.key for s in sessions for f in session_files(home.db, s.id)}
    moved = work / "gone"
    shutil.move(sources, moved)  # Claude Code deleted them all
    home.ingest_all()
    assert all(s.source_missing for s in list_sessions(home.db, source="claude-code", limit=None))
    checked = set()
    for at, session in enumerate(sessions):
        written = home.restore(session, work / "restored" / str(at))
        files = session_files(home.db, session.id)
        assert len(written) == len(files)
        for done, file in zip(written, files, strict=True):
            original = moved / Path(file.path).relative_to(sources)
            assert parsed(done.path) == parsed(original), file.key
            assert done.path.stat().st_mode & 0o777 == 0o600
            checked.add(file.key)
    assert checked == originals
    home.close()
    return sorted(originals)


@pytest.fixture
def deleted(home: Home, cc_root: Path) -> tuple[Path, list[bytes]]:
    """A session with a sub-agent and a secret, ingested, then deleted by Claude Code."""
    main = cc_root / "-home-u-proj" / f"{SESSION}.jsonl"
    agent = cc_root / "-home-u-proj" / SESSION / "subagents" / "agent-a1b2c3d.jsonl"
    write_lines(main, [
        cc_user(SESSION, "u1", "deploy it"),
        cc_assistant(SESSION, "a1", [{"type": "text", "text": f"using {SECRET}"}]),
    ])  # fmt: skip
    sidechain = cc_user(SESSION, "s1", "look around")
    sidechain["isSidechain"] = True
    write_lines(agent, [sidechain])
    home.ingest_all()
    originals = [main.read_bytes(), agent.read_bytes()]
    shutil.rmtree(cc_root / "-home-u-proj")
    home.ingest_all()
    return main, originals


def test_restore_writes_the_session_and_its_sub_agents_where_claude_code_looks(
    home: Home, deleted: tuple[Path, list[bytes]]
) -> None:
    main, (main_bytes, agent_bytes) = deleted
    session = resolve_session(home.db, SESSION)
    assert session.source_missing
    written = home.restore(session)
    agent = main.parent / SESSION / "subagents" / "agent-a1b2c3d.jsonl"
    assert [w.path for w in written] == [main, agent]
    assert agent.read_bytes() == agent_bytes
    restored = main.read_bytes().splitlines()
    assert restored[0] == main_bytes.splitlines()[0]
    assert SECRET not in restored[1].decode() and "[masked]" in restored[1].decode()
    # Back where it was, it is no longer a deleted session.
    assert not resolve_session(home.db, SESSION).source_missing


def test_restore_never_overwrites_and_force_keeps_a_backup(
    home: Home, deleted: tuple[Path, list[bytes]]
) -> None:
    main, _ = deleted
    session = resolve_session(home.db, SESSION)
    main.parent.mkdir(parents=True)
    main.write_text("mine\n")
    with pytest.raises(RestoreError, match=r"already exists; nothing was written \(--force"):
        home.restore(session)
    assert main.read_text() == "mine\n"
    assert not (main.parent / SESSION).exists()  # not even the sub-agent was written
    written = home.restore(session, force=True)
    assert written[0].backup is not None and written[0].backup.read_text() == "mine\n"
    assert written[0].backup.name.startswith(f"{main.name}.clawback-backup-")
    assert main.read_text() != "mine\n"


def test_restore_to_another_projects_folder(
    home: Home, deleted: tuple[Path, list[bytes]], tmp_path: Path
) -> None:
    written = home.restore(resolve_session(home.db, SESSION), tmp_path / "elsewhere")
    assert written[0].path == tmp_path / "elsewhere" / "-home-u-proj" / f"{SESSION}.jsonl"


def test_restore_without_a_copy_says_why(home: Home, cc_root: Path) -> None:
    home.config.archive.keep_lines = False
    path = cc_root / "-home-u-proj" / f"{SESSION}.jsonl"
    write_lines(path, [cc_user(SESSION, "u1", "hello")])
    home.ingest_all()
    path.unlink()
    with pytest.raises(RestoreError, match=r"no copy of .* was kept .*keep_lines was off"):
        home.restore(resolve_session(home.db, SESSION), cc_root / "out")


def test_only_claude_code_sessions_are_restored(demo_home: Home) -> None:
    native = list_sessions(demo_home.db, source="native")[0]
    with pytest.raises(UsageError, match="is a native session: only Claude Code sessions"):
        demo_home.restore(native)


def test_a_flat_file_goes_to_its_sessions_project_folder(home: Home, tmp_path: Path) -> None:
    backup = tmp_path / "backup"
    write_lines(backup / f"{SESSION}.jsonl", [cc_user(SESSION, "u1", "hello")])
    write_lines(backup / SESSION / "subagents" / "agent-a1.jsonl", [cc_user(SESSION, "s1", "hi")])
    home.ingest_paths([backup], Source.CLAUDE_CODE)
    out = tmp_path / "out"
    done, agent = home.restore(resolve_session(home.db, SESSION), out)
    assert done.also == [backup / f"{SESSION}.jsonl"]  # a copy asked for: the original is named
    assert done.path == out / project_folder("/home/u/proj") / f"{SESSION}.jsonl"
    assert agent.path == done.path.parent / SESSION / "subagents" / "agent-a1.jsonl"
    assert project_folder("/home/u/my.proj_x") == "-home-u-my-proj-x"
    assert json.loads(done.path.read_text())["uuid"] == "u1"
