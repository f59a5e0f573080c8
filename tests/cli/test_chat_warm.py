"""A ``clawback chat`` turn recalls by meaning through the home's warm process, as ``clawback
search`` does: a turn that finds none loads the vectors itself and then starts it, later turns
ask it and import neither numpy nor the model's runtime, and the recall block is exactly the one a turn that
loads everything itself builds. Real processes: the warm process is the installed ``clawback
hook serve``; ``claude`` is the fake."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawback.core.paths import Paths
from clawback.core.warm.server import STARTED_NAME, running, socket_path

from ..cli_runner import run_cli
from ..helpers import wait_until
from .conftest import embedded_home, stop_warm
from .test_chat import calls, env_for, fake_env

pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")

QUESTIONS = [
    "launch checklist",
    "when did we pick the tangerine protocol for the launch?",
    "shipping the release",
    "orange citrus rollout",
]
#: no word of it is in the decision it should recall: only a real model's meaning finds it
BY_MEANING = "which caching did we keep, the database one?"
DECISION = "We decided to drop the Redis cache layer"


def prepared(home: Path, question: str, **env: str) -> dict[str, Any]:
    """``clawback chat --new --dry-run --json``: the prompt a new turn would send, recall
    included; it writes nothing, so the index stays as it was."""
    done = run_cli("chat", "--new", "--dry-run", "--json", question, env={**fake_env(home), **env})
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def turn(home: Path, question: str, **env: str) -> str:
    """A real turn with the fake claude; the prompt it was sent."""
    done = run_cli("chat", "--new", question, env={**fake_env(home), **env})
    assert done.returncode == 0, done.stderr
    return str(calls(home)[-1]["stdin"])


def wait_warm(paths: Paths) -> None:
    listening = socket_path(paths)
    assert listening is not None
    wait_until(lambda: running(paths) and listening.exists(), "the warm process", timeout=60)


def test_recall_is_the_same_warm_or_loaded_here(warm_home: Path) -> None:
    paths = Paths.resolve(warm_home)
    # The first turn finds no warm process: it loads the vectors itself, and starts one after.
    turn(warm_home, QUESTIONS[0])
    assert (paths.hooks / STARTED_NAME).exists()
    wait_warm(paths)
    loaded_here = {q: prepared(warm_home, q, CLAWBACK_WARM="0") for q in QUESTIONS}
    for question in QUESTIONS:
        assert prepared(warm_home, question) == loaded_here[question]
    # The vector side made a difference to compare: recall by words alone is another block.
    config = warm_home / "config.toml"
    config.write_text(config.read_text().replace('model = "hash"', 'model = "none"'))
    by_words = {q: prepared(warm_home, q)["prompt"] for q in QUESTIONS}
    assert [q for q in QUESTIONS if by_words[q] != loaded_here[q]["prompt"]]


def test_warm_off_loads_here_and_starts_nothing(warm_home: Path) -> None:
    paths = Paths.resolve(warm_home)
    turn(warm_home, QUESTIONS[1], CLAWBACK_WARM="0")
    config = warm_home / "config.toml"
    config.write_text(config.read_text().replace("warm_minutes = 1", "warm_minutes = 0"))
    turn(warm_home, QUESTIONS[2])
    assert not running(paths) and not (paths.hooks / STARTED_NAME).exists()


#: what a process that searches its own vectors imports
LOADING_HERE = {
    "clawback.core.embeddings.semantic",
    "clawback.core.embeddings.embedder",
    "clawback.core.embeddings.store",
}
TURN_THEN_LIST_MODULES = """\
import json, sys
from clawback.core.startup import prepare_process
prepare_process()  # what the console script does first
from clawback.cli.main import cli
cli.main(["chat", "--new", sys.argv[1], "--json"], standalone_mode=False)
print(json.dumps(sorted(sys.modules)))
"""


@pytest.fixture
def model_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An embedded home with the real model (onnxruntime), the warm process allowed."""
    pytest.importorskip("onnxruntime", reason="the real model needs the embeddings extra")
    monkeypatch.delenv("CLAWBACK_WARM")
    home = embedded_home(tmp_path, "minilm")
    yield home
    stop_warm(home)


def test_a_warm_turn_recalls_by_meaning_importing_neither_numpy_nor_the_model(
    model_home: Path,
) -> None:
    paths = Paths.resolve(model_home)
    turn(model_home, QUESTIONS[0])  # starts the warm process
    wait_warm(paths)
    here = prepared(model_home, BY_MEANING, CLAWBACK_WARM="0")["prompt"]
    assert DECISION in here  # found by meaning alone
    done = subprocess.run(
        [sys.executable, "-c", TURN_THEN_LIST_MODULES, BY_MEANING],
        capture_output=True, text=True, timeout=60, check=False, env=env_for(model_home),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert DECISION in calls(model_home)[-1]["stdin"]  # by meaning, from the warm process
    modules = set(json.loads(done.stdout.rstrip("\n").rpartition("\n")[2]))
    assert not modules & LOADING_HERE
    assert not [m for m in modules if m.split(".")[0] in ("numpy", "onnxruntime", "tokenizers")]
