"""``clawback search`` by meaning through the home's warm process: a search that finds none loads
the vectors itself and then starts it, later searches ask it, and what they print is exactly
what a search that loads everything itself prints. Real processes: the warm process is the
installed ``clawback hook serve``, the one the hooks start too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clawback.core.paths import Paths
from clawback.core.warm.server import STARTED_NAME, running, socket_path

from ..cli_runner import run_cli
from ..helpers import wait_until
from .conftest import stop_warm

pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")

QUERIES = [
    "launch checklist",
    "when did we pick the tangerine protocol for the launch?",
    '"launch checklist" tangerine',
    "orange citrus rollout",
]


@pytest.fixture
def home(warm_home: Path) -> Path:
    return warm_home


def search(home: Path, *args: str, env: dict[str, str | None] | None = None) -> tuple[str, str]:
    done = run_cli("search", *args, home=home, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def test_searches_are_the_same_warm_or_loaded_here(home: Path) -> None:
    paths = Paths.resolve(home)
    loaded_here = {q: search(home, q, "--json", env={"CLAWBACK_WARM": "0"})[0] for q in QUERIES}
    assert not running(paths) and not (paths.hooks / STARTED_NAME).exists()

    _, stderr = search(home, QUERIES[0])  # finds none: answers itself, then starts it
    assert "(hybrid)" in stderr and (paths.hooks / STARTED_NAME).exists()
    listening = socket_path(paths)
    assert listening is not None
    wait_until(lambda: running(paths) and listening.exists(), "the warm process", timeout=60)
    assert json.loads(run_cli("hooks", "status", "--json", home=home).stdout)["warm_process"]
    for query in QUERIES:
        assert search(home, query, "--json")[0] == loaded_here[query]
        assert "(hybrid, warm)" in search(home, query)[1]
    assert json.loads(loaded_here[QUERIES[-1]])  # the vector side found something to compare


def test_a_search_that_needs_no_vectors_starts_nothing(home: Path) -> None:
    paths = Paths.resolve(home)
    search(home, "launch", "--mode", "keyword")
    search(home, "launch check*")  # a prefix: keywords alone, whatever the mode
    assert not running(paths) and not (paths.hooks / STARTED_NAME).exists()


def test_warm_minutes_0_loads_here_and_starts_nothing(home: Path) -> None:
    paths = Paths.resolve(home)
    config = home / "config.toml"
    config.write_text(config.read_text().replace("warm_minutes = 1", "warm_minutes = 0"))
    _, stderr = search(home, QUERIES[0])
    assert "(hybrid)" in stderr
    assert not running(paths) and not (paths.hooks / STARTED_NAME).exists()


SEARCH_THEN_LIST_MODULES = """\
import json, sys
from clawback.core.startup import prepare_process
prepare_process()  # what the console script does first
from clawback.cli.main import cli
cli.main(["search", "launch checklist", "--json"], standalone_mode=False)
print(json.dumps(sorted(sys.modules)))
"""


def test_a_warm_search_loads_neither_numpy_nor_the_vectors(home: Path) -> None:
    paths = Paths.resolve(home)
    search(home, QUERIES[0])  # starts the warm process
    wait_until(lambda: socket_path(paths).exists(), "the warm process", timeout=60)  # type: ignore[union-attr]
    done = subprocess.run(
        [sys.executable, "-c", SEARCH_THEN_LIST_MODULES],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "CLAWBACK_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found, _, modules = done.stdout.rstrip("\n").rpartition("\n")
    assert {hit["found_by"] for hit in json.loads(found)} & {"semantic", "both"}
    assert [m for m in json.loads(modules) if m.split(".")[0] in ("numpy", "onnxruntime")] == []


@pytest.fixture
def person(claude_user: Path) -> Path:
    return claude_user


def chosen_by_nobody(home: Path) -> None:
    config = home / "config.toml"
    config.write_text(config.read_text().replace("warm_for_search = true\n", ""))


def test_without_hooks_a_search_starts_no_warm_process(home: Path, person: Path) -> None:
    """Issue 32 item 4: a plain search left a 250 MB process running for 10 minutes for
    people who never installed the hooks, without a word."""
    chosen_by_nobody(home)
    paths = Paths.resolve(home)
    for _ in range(2):
        _, stderr = search(home, QUERIES[0])
        assert "(hybrid)" in stderr and "warm process" not in stderr
    assert not running(paths) and not (paths.hooks / STARTED_NAME).exists()


def test_with_hooks_installed_a_search_starts_one_and_says_so_once(
    home: Path, person: Path
) -> None:
    from clawback.core.hooks.settings import hook_command

    chosen_by_nobody(home)
    command = hook_command(["/opt/bin/clawback"], home, "Stop")
    (person / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}})
    )
    paths = Paths.resolve(home)
    _, stderr = search(home, QUERIES[0])
    assert "Started a warm process" in stderr and "hooks.warm_minutes = 0" in stderr
    wait_until(lambda: running(paths) and socket_path(paths).exists(), "the warm process", 60)  # type: ignore[union-attr]
    assert "(hybrid, warm)" in search(home, QUERIES[0])[1]
    health = run_cli("health", home=home).stdout
    assert "Warm process running (pid" in health and "MB, leaves after 1 min" in health
    said = json.loads(run_cli("health", "--json", home=home).stdout)["hooks"]["warm_process"]
    assert said["memory_kb"] > 0 and said["idle_left_s"] > 0
    stop_warm(home)
    os.utime(paths.hooks / STARTED_NAME, (0, 0))  # started long ago: a search may start one
    _, stderr = search(home, QUERIES[0])  # and does, without saying it again
    assert "Started a warm process" not in stderr
    wait_until(lambda: socket_path(paths).exists(), "the second warm process", 60)  # type: ignore[union-attr]
