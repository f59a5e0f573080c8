"""The user-prompt hook recalls from the session's own project first: it passes the event's
working folder to recall, so at equal relevance that project's past sessions lead the block."""

from __future__ import annotations

from pathlib import Path

from clawback.core.home import Home

from ..helpers import cc_user, write_lines
from .conftest import CWD, PROJECT_DIR, event, in_project
from .test_hook_contract import context_of, hook

OTHER_CWD = "/home/user/other"


def test_the_sessions_project_comes_first(hook_home: Path, projects: Path) -> None:
    said = "the deploy script lives in {}/deploy.sh"
    ours = in_project(cc_user("d1", "d1", said.format("scripts"), ts="2026-11-20T09:00:00Z"))
    theirs = in_project(cc_user("d2", "d2", said.format("tools"), ts="2026-11-20T09:00:00Z"))
    write_lines(projects / PROJECT_DIR / "d1.jsonl", [ours])
    write_lines(projects / "-home-user-other" / "d2.jsonl", [{**theirs, "cwd": OTHER_CWD}])
    home = Home.open(hook_home)
    try:
        home.ingest_all()
    finally:
        home.close()
    for cwd, first, second in ((CWD, "scripts/", "tools/"), (OTHER_CWD, "tools/", "scripts/")):
        prompt = event("UserPromptSubmit", prompt="where does the deploy script live?", cwd=cwd)
        recalled = context_of(hook("user-prompt", prompt, hook_home), "UserPromptSubmit")
        assert recalled.index(first) < recalled.index(second), cwd
