"""How clawback starts its own work apart: the command that runs this clawback, started detached."""

from __future__ import annotations

import subprocess
from pathlib import Path

from clawback.core.paths import Paths
from clawback.core.spawning import clawback_command, spawn

from tests.helpers import wait_until


def test_the_command_is_an_absolute_clawback_that_runs() -> None:
    command = clawback_command()
    assert Path(command[0]).is_absolute()
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "clawback" in done.stdout


def test_spawn_runs_this_clawback_on_the_home_it_is_given(tmp_path: Path) -> None:
    paths = Paths.resolve(tmp_path / "home")
    spawn(paths, "ingest")  # returns at once; the ingest makes the home's index apart
    wait_until(paths.database.exists, "the spawned ingest's index", timeout=60)
