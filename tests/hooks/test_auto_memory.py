"""Claude Code's own auto memory (``<project>/memory/MEMORY.md`` and topic files under the
projects folder) is indexed as memory files of that project: searchable, recalled, kept apart
from clawback's own workspace files."""

from __future__ import annotations

import json
import os
from pathlib import Path

from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source

from ..cli_runner import run_cli
from .conftest import PROJECT_DIR, event


def test_auto_memory_is_indexed_with_its_project_and_recalled(
    hook_home: Path, projects: Path
) -> None:
    memory = projects / PROJECT_DIR / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(
        "# Project memory\n\n- Use the staging bucket zebrafin for uploads.\n"
    )
    (memory / "deploys.md").write_text("# Deploys\n\nThe zebrafin bucket is emptied on Sundays.\n")
    (memory / ".hidden.md").write_text("zebrafin hidden\n")
    (memory / "notes.txt").write_text("zebrafin text file\n")
    home = Home.open(hook_home)
    try:
        home.ingest_all()
        keys = sorted(
            key for (key,) in home.db.execute("SELECT file_key FROM files WHERE source = 'memory'")
        )
    finally:
        home.close()
    assert f"{PROJECT_DIR}/memory/MEMORY.md" in keys and f"{PROJECT_DIR}/memory/deploys.md" in keys
    assert "MEMORY.md" in keys  # the workspace's own, a different file
    assert not any(key.endswith((".hidden.md", "notes.txt")) for key in keys)
    found = json.loads(run_cli("search", "zebrafin", "--json", home=hook_home).stdout)
    assert {(hit["source"], hit["file"]) for hit in found} == {
        ("memory", f"{PROJECT_DIR}/memory/MEMORY.md"),
        ("memory", f"{PROJECT_DIR}/memory/deploys.md"),
    }
    prompt = event("UserPromptSubmit", prompt="which bucket do the zebrafin uploads use")
    done = run_cli("hook", "user-prompt", home=hook_home, input=json.dumps(prompt))
    assert (
        "staging bucket zebrafin"
        in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    )


def test_the_watcher_knows_auto_memory_paths(tmp_path: Path) -> None:
    root = SourceRoot(Source.MEMORY, tmp_path, "claude-code-memory", per_project=True)
    assert root.accepts(tmp_path / "-home-u-p" / "memory" / "MEMORY.md")
    assert root.accepts(tmp_path / "-home-u-p" / "memory" / "topic.md")
    assert not root.accepts(tmp_path / "-home-u-p" / "s1.jsonl")
    assert not root.accepts(tmp_path / "MEMORY.md")
    assert not root.accepts(tmp_path / "-home-u-p" / "memory" / "deep" / "x.md")


def test_a_link_out_of_a_projects_memory_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("not memory")
    memory = tmp_path / "projects" / "-home-u-p" / "memory"
    memory.mkdir(parents=True)
    os.symlink(secret, memory / "MEMORY.md")
    problems: list[tuple[str, str]] = []
    root = SourceRoot(Source.MEMORY, tmp_path / "projects", "m", per_project=True)
    assert list(root.stat_files(problems)) == []
    assert problems and "leads out" in problems[0][1]
