"""What clawback writes is the person's alone (issue 31, item 9): the warm socket's folder in the
shared temp dir is never a link or a folder another user can write, and every file and folder
under the home is private whatever the umask."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.core.hooks.log import read_runs
from clawback.core.paths import Paths
from clawback.core.warm.server import running, socket_path, stop

from ..cli_runner import CLAWBACK
from ..fake_claude.fixtures import FAKE_CLAUDE
from ..helpers import cc_assistant, cc_user, wait_until, write_lines

SESSION = "5e55e55e-0000-4000-8000-000000000001"


@pytest.fixture
def temp_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The system temp dir, as another local user could have prepared it (a short path, as a
    socket's must be)."""
    shared = Path(tempfile.mkdtemp(prefix="cb-"))
    shared.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    yield shared
    shutil.rmtree(shared, ignore_errors=True)


def deep_home(tmp_path: Path) -> Paths:
    return Paths.resolve(tmp_path / ("deep-" * 20) / "home").ensure()


def test_a_link_planted_as_the_socket_folder_is_refused_and_its_target_untouched(
    tmp_path: Path, temp_dir: Path
) -> None:
    victim = tmp_path / "victim-public"
    victim.mkdir()
    victim.chmod(0o755)
    (temp_dir / f"clawback-{os.getuid()}").symlink_to(victim)
    assert socket_path(deep_home(tmp_path)) is None
    assert victim.stat().st_mode & 0o777 == 0o755  # was chmodded to 0700 before


@pytest.mark.parametrize("mode", [0o777, 0o755, 0o710])
def test_a_socket_folder_others_can_reach_is_refused_not_changed(
    tmp_path: Path, temp_dir: Path, mode: int
) -> None:
    folder = temp_dir / f"clawback-{os.getuid()}"
    folder.mkdir()
    folder.chmod(mode)
    assert socket_path(deep_home(tmp_path)) is None
    assert folder.stat().st_mode & 0o777 == mode


def test_a_file_in_the_socket_folders_place_is_refused(tmp_path: Path, temp_dir: Path) -> None:
    (temp_dir / f"clawback-{os.getuid()}").write_text("")
    assert socket_path(deep_home(tmp_path)) is None


def test_a_missing_socket_folder_is_made_private_under_any_umask(
    tmp_path: Path, temp_dir: Path
) -> None:
    old = os.umask(0)
    try:
        path = socket_path(deep_home(tmp_path))
    finally:
        os.umask(old)
    assert path is not None and path.parent == temp_dir / f"clawback-{os.getuid()}"
    assert stat.S_IMODE(os.lstat(path.parent).st_mode) == 0o700


# -- the whole home under umask 000 --------------------------------------------------------------


@pytest.fixture
def no_umask() -> Iterator[None]:
    """Every process this test starts (and the jobs they start) runs under ``umask 000``."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def not_private(home: Path) -> list[str]:
    """Everything under ``home`` that another user could read or write (links not followed)."""
    found = []
    for folder, folders, files in os.walk(home):
        for name in [*folders, *files]:
            path = Path(folder) / name
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                continue
            if st.st_mode & 0o077:
                found.append(f"{path.relative_to(home)} {stat.filemode(st.st_mode)}")
    return sorted(found)


def test_everything_under_the_home_is_private_under_umask_000(
    tmp_path: Path, no_umask: None
) -> None:
    home = tmp_path / "home"
    projects = tmp_path / "projects"
    transcript = projects / "-work-proj" / f"{SESSION}.jsonl"
    write_lines(
        transcript,
        [
            {**cc_user(SESSION, "u1", "how do we rotate the zeppelin logs?"), "cwd": "/work/proj"},
            cc_assistant(SESSION, "a1", [{"type": "text", "text": "Weekly, with logrotate."}]),
        ],
    )
    home.mkdir(mode=0o700)
    config = home / "config.toml"
    config.write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
        '[embeddings]\nmodel = "hash-64"\n'  # the test embedder: vectors, and a warm process
    )
    config.chmod(0o600)  # the person's own file
    env = {
        **os.environ,
        "CLAWBACK_HOME": str(home),
        "CLAWBACK_CLAUDE": str(FAKE_CLAUDE),
        "FAKE_CLAUDE_REPLY": "- Logs rotate weekly.",
        "FAKE_CLAUDE_DELAY": "2",  # the flush job keeps its .pending file that long at least
    }
    env.pop("CLAWBACK_WARM")  # the first prompt starts the warm process, as in use

    def clawback(*args: str, stdin: str = "") -> None:
        done = subprocess.run(
            [CLAWBACK, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, done.stderr

    def hook(name: str, claude_event: str, **fields: str) -> None:
        base = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": "/work/proj"}
        clawback(
            "hook", name, stdin=json.dumps({**base, "hook_event_name": claude_event, **fields})
        )

    clawback("ingest")
    clawback("embed")
    paths = Paths.resolve(home)
    hook("session-start", "SessionStart", source="startup")
    try:
        hook("user-prompt", "UserPromptSubmit", prompt="zeppelin logs")
        wait_until(lambda: running(paths), "the warm process", timeout=60)
        clawback("search", "zeppelin")  # asks the warm process
    finally:
        stop(paths)
    wait_until(lambda: not running(paths), "the warm process to stop")
    with transcript.open("a") as handle:
        handle.write(json.dumps(cc_user(SESSION, "u2", "and the kites?")) + "\n")
    hook("stop", "Stop")
    hook("pre-compact", "PreCompact", trigger="manual")
    hooks = paths.hooks
    assert [p.name for p in hooks.glob("flush/*.pending")] == [f"{SESSION}.pending"]
    assert not_private(home) == []

    def jobs_done() -> bool:
        runs = read_runs(hooks)
        flushed = any(r.event == "pre-compact" and r.detail.startswith("flush") for r in runs)
        indexed = any(r.event == "stop" and "indexed apart" in r.detail for r in runs)
        return flushed and indexed and not any(hooks.glob("flush/*.pending"))

    wait_until(jobs_done, "the jobs apart", timeout=60)
    assert not_private(home) == []
