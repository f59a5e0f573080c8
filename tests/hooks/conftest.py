"""A clawback home that remembers a Claude Code project, and the events the real CLI sends.

The events are the real ones (``../shared/claude-cli/hooks/events.jsonl``, Claude Code 2.1.328):
their session ``80104611-...`` works in ``/home/user/work/demo-project``. The home indexes an
older session of that project which settled the cache layer, the current session's own first
line (which recall must leave out), a session of another project, a fact, ``MEMORY.md`` and a
daily notes file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.core.memory.facts import FactStore, NewFact

from ..helpers import cc_assistant, cc_user, write_lines

EVENTS_FILE = (
    Path(__file__).resolve().parents[3] / "shared" / "claude-cli" / "hooks" / "events.jsonl"
)
CWD = "/home/user/work/demo-project"
PROJECT_DIR = "-home-user-work-demo-project"
CURRENT = "80104611-0571-41d2-8b38-415a5c411bde"
OLDER = "0a1b2c3d-0000-4000-8000-000000000001"
OTHER = "0a1b2c3d-0000-4000-8000-000000000002"
DECISION = "We decided to drop the Redis cache layer and rely on SQLite's page cache instead."


def real_events() -> list[dict[str, Any]]:
    if not EVENTS_FILE.is_file():
        pytest.skip(f"the real CLI's hook events are not beside the project ({EVENTS_FILE})")
    return [json.loads(line) for line in EVENTS_FILE.read_text().splitlines() if line.strip()]


def event(name: str, source: str | None = None, **changes: Any) -> dict[str, Any]:
    """The first real event called ``name`` (and with ``source``), with ``changes`` applied."""
    for found in real_events():
        if found["hook_event_name"] == name and source in (None, found.get("source")):
            return {**found, **changes}
    raise AssertionError(f"no {name} event in {EVENTS_FILE}")


def in_project(line: dict[str, Any], cwd: str = CWD) -> dict[str, Any]:
    return {**line, "cwd": cwd}


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    root = tmp_path / "claude" / "projects"
    write_lines(
        root / PROJECT_DIR / f"{OLDER}.jsonl",
        [
            in_project(
                cc_user(
                    OLDER, "o1", "Should we keep the Redis cache layer?", ts="2026-11-18T09:00:00Z"
                )
            ),
            in_project(
                cc_assistant(
                    OLDER, "o2", [{"type": "text", "text": DECISION}], ts="2026-11-18T09:01:00Z"
                )
            ),
        ],
    )
    write_lines(
        root / PROJECT_DIR / f"{CURRENT}.jsonl",
        [
            in_project(
                cc_user(
                    CURRENT,
                    "c1",
                    "what did we decide about the cache layer, current session copy",
                    ts="2026-11-25T09:00:00Z",
                )
            )
        ],
    )
    write_lines(
        root / "-home-user-other" / f"{OTHER}.jsonl",
        [
            in_project(
                cc_user(
                    OTHER, "x1", "Plan the garden irrigation schedule", ts="2026-11-19T09:00:00Z"
                ),
                "/home/user/other",
            ),
            in_project(
                cc_assistant(
                    OTHER,
                    "x2",
                    [{"type": "text", "text": "Water the tomatoes at dawn."}],
                    ts="2026-11-19T09:01:00Z",
                ),
                "/home/user/other",
            ),
        ],
    )
    return root


@pytest.fixture
def hook_home(tmp_path: Path, projects: Path) -> Path:
    """The clawback home (its path), indexed, with memory files and a fact."""
    path = tmp_path / "clawback-home"
    home = Home.open(path)
    try:
        home.config.sources.claude_code_path = str(projects)
        home.config.sources.openclaw_path = str(tmp_path / "none")
        workspace = home.workspace
        (workspace / "memory").mkdir(parents=True)
        (workspace / "MEMORY.md").write_text("# Memory\n\n- The person prefers short answers.\n")
        (workspace / "memory" / "2026-11-24.md").write_text(
            "# 2026-11-24\n\n## 10:00 · demo-project (Claude Code session 11112222)\n\n"
            "Memory flush from Claude Code [session 11112222](x) · `clawback show 11112222`\n\n"
            "- Deploys go out on Thursdays.\n\n"
            "## 11:00 · other (Claude Code session 33334444)\n\n- Tomatoes need water.\n"
        )
        home.ingest_all()
        FactStore(home.db).add(
            NewFact(
                "decision",
                "The cache layer is SQLite's page cache; Redis was dropped",
                session_id=OLDER,
            )
        )
        (path / "config.toml").write_text(
            f'[sources]\nclaude_code_path = "{projects}"\nopenclaw_path = "{tmp_path / "none"}"\n'
        )
    finally:
        home.close()
    return path
