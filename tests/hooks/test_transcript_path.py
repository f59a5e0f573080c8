"""``stop``, ``pre-compact`` and their jobs index only a Claude Code transcript of this person's
(issue 31, item 8): a hook event's ``transcript_path`` naming a file outside the Claude Code
folders, a link out of them, something that is not a transcript, another user's file, a FIFO or
a folder is refused with the reason, and nothing of it reaches the index."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from clawback.core.hooks.log import read_runs
from clawback.core.paths import Paths

from ..cli_runner import run_cli
from ..helpers import cc_user, write_lines
from .conftest import CURRENT, PROJECT_DIR, event

WORD = "quokkasecret"


def outside(tmp: Path, projects: Path) -> Path:
    path = tmp / "elsewhere" / "notes.jsonl"
    write_lines(path, [cc_user("s-out", "u1", f"{WORD} from a file outside the folders")])
    return path


def dotenv(tmp: Path, projects: Path) -> Path:
    path = tmp / "app" / ".env"
    path.parent.mkdir()
    path.write_text(f"API_KEY=sk-live-{WORD}\n")
    return path


def link_out(tmp: Path, projects: Path) -> Path:
    link = projects / PROJECT_DIR / "linked.jsonl"
    link.symlink_to(outside(tmp, projects))
    return link


def not_a_transcript(tmp: Path, projects: Path) -> Path:
    path = projects / PROJECT_DIR / "scratch.jsonl"
    path.write_text(f"password {WORD}\nssh-ed25519 AAAAC3Nza {WORD}\n")
    return path


def another_users(tmp: Path, projects: Path) -> Path:
    if os.getuid() != 0:
        pytest.skip("only root can make a file another user's")
    path = projects / PROJECT_DIR / "theirs.jsonl"
    write_lines(path, [cc_user("s-theirs", "u1", f"{WORD} in another user's session")])
    os.chown(path, 65534, 65534)
    path.chmod(0o644)
    return path


def fifo(tmp: Path, projects: Path) -> Path:
    path = projects / PROJECT_DIR / "pipe.jsonl"
    os.mkfifo(path)
    return path


def folder(tmp: Path, projects: Path) -> Path:
    path = projects / PROJECT_DIR / "folder.jsonl"
    path.mkdir()
    return path


CASES: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "outside the folders": (outside, "not under a configured Claude Code folder"),
    ".env": (dotenv, "not a .jsonl file"),
    "a link out": (link_out, "not under a configured Claude Code folder"),
    "not a transcript": (not_a_transcript, "does not look like a Claude Code transcript"),
    "another user's": (another_users, "belongs to another user"),
    "a FIFO": (fifo, "not a regular file"),
    "a folder": (folder, "not a regular file"),
}


def found(home: Path) -> list[object]:
    done = run_cli("search", WORD, "--json", "--mode", "keyword", home=home)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_path_that_is_not_a_transcript_of_theirs_is_never_indexed(
    case: str, hook_home: Path, projects: Path, tmp_path: Path
) -> None:
    make, why = CASES[case]
    path = str(make(tmp_path, projects))
    hooks = Paths.resolve(hook_home).hooks
    for name, claude_event in (("stop", "Stop"), ("pre-compact", "PreCompact")):
        started = time.monotonic()
        done = run_cli(
            "hook", name, home=hook_home,
            input=json.dumps(event(claude_event, transcript_path=path)),
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, "")
        assert time.monotonic() - started < 3  # a FIFO is never opened for a blocking read
        run = read_runs(hooks)[-1]
        assert (run.event, run.outcome) == (name, "skipped") and why in run.detail
    # The job apart checks its argument too: it may be started by hand.
    job = run_cli("hook", "ingest-transcript", path, home=hook_home)
    assert job.returncode == 0
    run = read_runs(hooks)[-1]
    assert (run.event, run.outcome) == ("stop", "skipped") and why in run.detail
    assert found(hook_home) == []


def test_a_transcript_under_the_folders_through_a_linked_folder_is_indexed(
    hook_home: Path, projects: Path, tmp_path: Path
) -> None:
    """A dotfiles setup links a project folder in: still the person's own transcripts."""
    linked = tmp_path / "claude" / "projects" / "-linked"
    linked.symlink_to(projects / PROJECT_DIR)
    path = linked / f"{CURRENT}.jsonl"
    with path.open("a") as handle:
        handle.write(json.dumps(cc_user(CURRENT, "c9", f"{WORD} said in this session")) + "\n")
    job = run_cli("hook", "ingest-transcript", str(path), home=hook_home)
    assert job.returncode == 0
    assert read_runs(Paths.resolve(hook_home).hooks)[-1].detail == "1 entries indexed apart"
    assert len(found(hook_home)) == 1
