"""Claude Code's auto memory listed per project: exactly the files the ingest indexes, from the
configured projects folder, labelled with the working folder a person knows."""

from __future__ import annotations

import os
import time
from pathlib import Path

from clawback.core.home import Home
from clawback.core.memory.auto_memory import (
    auto_memory_roots,
    encoded,
    folder_on_disk,
    list_auto_memory,
    locate,
    with_working_folders,
)

from ..helpers import cc_user, write_lines


def _memory(projects: Path, project: str, files: dict[str, str], age: float = 0) -> Path:
    folder = projects / project / "memory"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
        stamp = time.time() - age
        os.utime(folder / name, (stamp, stamp))
    return folder


def test_projects_list_their_memory_first_the_newest_project_first(
    home: Home, cc_root: Path
) -> None:
    _memory(cc_root, "-home-u-old", {"MEMORY.md": "# Old\n"}, age=3600)
    folder = _memory(
        cc_root,
        "-home-u-proj",
        {"zeta.md": "z\n", "MEMORY.md": "# Memory\n\n- a\n", "Alpha.md": "a", ".hidden.md": "h"},
    )
    (folder / "notes.txt").write_text("not markdown")
    (folder / "MEMORY.md.bak").write_text("a backup")
    (cc_root / "-home-u-bare").mkdir()  # a project without auto memory is not listed
    listed = list_auto_memory(auto_memory_roots(home.config, home.paths))
    assert [p.project for p in listed] == ["-home-u-proj", "-home-u-old"]
    proj = listed[0]
    assert proj.folder == folder
    assert [f.name for f in proj.files] == ["MEMORY.md", "Alpha.md", "zeta.md"]
    assert [f.lines for f in proj.files] == [3, 1, 1]
    assert proj.files[0].path == folder / "MEMORY.md"
    assert proj.workspace.read("Alpha.md") == "a"  # names are relative to the memory folder


def test_the_listing_is_what_the_ingest_indexes(home: Home, cc_root: Path) -> None:
    _memory(cc_root, "-home-u-proj", {"MEMORY.md": "# M\n", "topic.md": "t\n"})
    outside = cc_root.parent / "outside.md"
    outside.write_text("not memory")
    os.symlink(outside, cc_root / "-home-u-proj" / "memory" / "link.md")
    home.ingest_all()
    indexed = {
        Path(path)
        for (path,) in home.db.execute(
            "SELECT path FROM files WHERE source = 'memory' AND file_key LIKE '%/memory/%'"
        )
    }
    problems: list[tuple[str, str]] = []
    listed = list_auto_memory(auto_memory_roots(home.config, home.paths), problems)
    assert {f.path for p in listed for f in p.files} == indexed
    assert len(indexed) == 2
    assert problems and "leads out" in problems[0][1]


def test_the_configured_projects_folder_is_followed_and_a_disabled_source_lists_nothing(
    home: Home, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    _memory(elsewhere, "-srv-x", {"MEMORY.md": "x\n"})
    assert list_auto_memory(auto_memory_roots(home.config, home.paths)) == []
    home.config.sources.claude_code_path = str(elsewhere)
    assert [p.project for p in list_auto_memory(auto_memory_roots(home.config, home.paths))] == [
        "-srv-x"
    ]
    home.config.sources.claude_code = False
    assert auto_memory_roots(home.config, home.paths) == []


def test_a_project_is_labelled_by_the_working_folder_of_its_sessions(
    home: Home, cc_root: Path
) -> None:
    _memory(cc_root, "-home-u-proj", {"MEMORY.md": "m\n"})
    _memory(cc_root, "-home-u-gone", {"MEMORY.md": "g\n"})
    write_lines(cc_root / "-home-u-proj" / "s1.jsonl", [cc_user("s1", "u1", "hello")])
    other = cc_user("s2", "u2", "started elsewhere", ts="2026-11-21T10:00:00.000Z")
    other["cwd"] = "/tmp/elsewhere"
    write_lines(cc_root / "-home-u-proj" / "s2.jsonl", [other])
    home.ingest_all()
    listed = list_auto_memory(auto_memory_roots(home.config, home.paths))
    labelled = {p.project: p for p in with_working_folders(home.db, listed)}
    proj = labelled["-home-u-proj"]
    assert proj.cwd == "/home/u/proj"  # the folder Claude Code named the project after
    assert (proj.label, proj.place) == ("proj", "/home/u/proj")
    gone = labelled["-home-u-gone"]  # no session indexed: its folder name is all there is
    assert (gone.cwd, gone.label, gone.place) == (None, "-home-u-gone", "-home-u-gone")


def test_place_shortens_the_home_folder(tmp_path: Path) -> None:
    from clawback.core.memory.auto_memory import ProjectMemory

    memory = ProjectMemory("-x", tmp_path, cwd=str(Path.home() / "work" / "api"))
    assert (memory.label, memory.place) == ("api", "~/work/api")


def test_locate_names_a_path_of_auto_memory_only(home: Home, cc_root: Path) -> None:
    roots = auto_memory_roots(home.config, home.paths)
    path = cc_root / "-home-u-proj" / "memory" / "topic.md"
    assert locate(roots, path) == (path.parent, "topic.md")
    assert locate(roots, cc_root / "-home-u-proj" / "s1.jsonl") is None
    assert locate(roots, home.workspace / "MEMORY.md") is None


def test_without_sessions_the_folder_is_found_on_disk(
    home: Home, cc_root: Path, tmp_path: Path
) -> None:
    """Claude Code deleted the transcripts before clawback read them, the memory stayed."""
    folder = tmp_path / "work" / "my-api.v2"
    folder.mkdir(parents=True)
    (tmp_path / "work" / "my").mkdir()  # a dead end the walk backs out of
    project = encoded(str(folder))
    assert project.startswith("-") and "my-api-v2" in project
    _memory(cc_root, project, {"MEMORY.md": "m\n"})
    listed = list_auto_memory(auto_memory_roots(home.config, home.paths))
    [memory] = with_working_folders(home.db, listed)
    assert (memory.cwd, memory.label) == (str(folder), "my-api.v2")


def test_folder_on_disk_prefers_the_longest_name_and_gives_up_on_nothing(tmp_path: Path) -> None:
    (tmp_path / "a-b").mkdir()
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert folder_on_disk("-a-b", str(tmp_path)) == str(tmp_path / "a-b")
    (tmp_path / "a" / "b" / "c").mkdir()
    assert folder_on_disk("-a-b-c", str(tmp_path)) == str(tmp_path / "a" / "b" / "c")
    assert folder_on_disk("-a-x", str(tmp_path)) is None
    assert folder_on_disk("no-leading-dash", str(tmp_path)) is None
