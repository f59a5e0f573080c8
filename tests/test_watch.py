"""``clawback watch``: changes are searchable within about a second; Ctrl-C stops cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from .cli_runner import CLAWBACK
from .cli_runner import run_cli as run
from .helpers import cc_user, write_lines


def test_watch_ingests_changes_quickly_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    home, projects = tmp_path / "home", tmp_path / "projects"
    projects.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    env = {**os.environ, "CLAWBACK_HOME": str(home)}
    watcher = subprocess.Popen(
        [CLAWBACK, "watch"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while "Watching" not in (watcher.stderr.readline() if watcher.stderr else ""):
            assert time.monotonic() < deadline, "watch did not start"
        time.sleep(0.3)
        path = projects / "-home-u-p" / "s1.jsonl"
        write_lines(path, [cc_user("s1", "u1", "a xylophone appears")])
        written = time.monotonic()
        found_after = None
        while time.monotonic() - written < 10:
            hits = json.loads(run("search", "xylophone", "--json", home=home).stdout)
            if hits:
                found_after = time.monotonic() - written
                break
            time.sleep(0.1)
        assert found_after is not None, "the new session never became searchable"
        # Appends to a file being followed are picked up the same way.
        with path.open("a") as handle:
            handle.write(json.dumps(cc_user("s1", "u2", "then a zeppelin")) + "\n")
        deadline = time.monotonic() + 10
        while not json.loads(run("search", "zeppelin", "--json", home=home).stdout):
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        watcher.send_signal(signal.SIGINT)
        _, stderr = watcher.communicate(timeout=15)
    assert watcher.returncode == 0
    assert "Traceback" not in stderr
