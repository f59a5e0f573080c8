"""``clawback watch``: changes are searchable within about a second; Ctrl-C stops cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from clawback.core.ingest.stats import IngestStats

from tests.cli_runner import CLAWBACK
from tests.cli_runner import run_cli as run
from tests.helpers import cc_user, wait_until, write_lines


def test_watch_ingests_changes_quickly_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    home, projects = tmp_path / "home", tmp_path / "projects"
    projects.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    env = {**os.environ, "CLAWBACK_HOME": str(home)}

    def found(word: str) -> bool:
        return bool(json.loads(run("search", word, "--json", home=home).stdout))

    watcher = subprocess.Popen(
        [CLAWBACK, "watch"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while "Watching" not in (watcher.stderr.readline() if watcher.stderr else ""):
            assert time.monotonic() < deadline, "watch did not start"
        path = projects / "-home-u-p" / "s1.jsonl"
        write_lines(path, [cc_user("s1", "u1", "a xylophone appears")])
        wait_until(lambda: found("xylophone"), "the new session to become searchable")
        # Appends to a file being followed are picked up the same way.
        with path.open("a") as handle:
            handle.write(json.dumps(cc_user("s1", "u2", "then a zeppelin")) + "\n")
        wait_until(lambda: found("zeppelin"), "the appended line to become searchable")
    finally:
        watcher.send_signal(signal.SIGINT)
        _, stderr = watcher.communicate(timeout=15)
    assert watcher.returncode == 0
    assert "Traceback" not in stderr
    assert "KeyboardInterrupt" not in stderr  # issue 22: Ctrl-C is how watch stops, not news


def test_ctrl_c_in_the_middle_of_a_batch_also_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Idle, watchfiles swallows Ctrl-C; during a batch it lands in the ingest instead."""
    from clawback.core import watch as watch_module
    from clawback.core.home import Home

    home, projects = tmp_path / "home", tmp_path / "projects"
    projects.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    batch = watch_module.Changes(frozenset({projects / "-home-u-p" / "s1.jsonl"}), False)
    monkeypatch.setattr(watch_module, "watch_changes", lambda folders, **_: iter([None, batch]))

    def interrupted(self: Home, changed: set[Path], *, deleted: bool = False) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Home, "ingest_changed", interrupted)
    result = run("watch", home=home)
    assert result.returncode == 0, result.stderr
    assert "Watching" in result.stderr and "Aborted" not in result.stderr


def test_a_batch_that_fails_is_reported_and_watching_goes_on(
    home: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11: one failing batch (a bug, a locked index) used to end ``watch`` for good."""
    from clawback.core import watch

    batches = [None, watch.Changes(frozenset({Path("/x/a.jsonl")}), False),
               watch.Changes(frozenset({Path("/x/b.jsonl")}), False)]  # fmt: skip
    monkeypatch.setattr(watch, "watch_changes", lambda folders, stop_event=None: iter(batches))
    calls: list[str] = []

    def flaky(changed: set[Path], *, deleted: bool = False) -> IngestStats:
        calls.append(next(iter(changed)).name)
        if len(calls) == 1:
            raise RuntimeError("the index is on fire")
        return IngestStats(entries=3)

    monkeypatch.setattr(home, "ingest_changed", flaky)
    seen: list[IngestStats] = []
    watch.watch_sources(home, on_batch=seen.append)
    assert calls == ["a.jsonl", "b.jsonl"]
    assert "the index is on fire" in seen[1].errors[0]
    assert seen[2].entries == 3
