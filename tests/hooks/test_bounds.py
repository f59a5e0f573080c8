"""Every hook stays within ``hooks.timeout_s`` counted from its process's start, its imports
included (issue 31, item 15), a huge prompt costs recall no more than a long one (item 14), and
with the warm process up a hook is a thin client of it, answered there while a slow client
holds a connection (issue 32, item 2)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawback.core.hooks import recall_block
from clawback.core.hooks.log import read_runs
from clawback.core.paths import Paths
from clawback.core.warm.server import running, socket_path, stop

from ..cli_runner import CLAWBACK, run_cli
from ..helpers import wait_until
from .conftest import DECISION, event

#: a site hook that makes importing one module slow, as a loaded machine does
SLOW_IMPORT = """\
import sys, time
class Slow:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            time.sleep({seconds})
        return None
sys.meta_path.insert(0, Slow())
"""


def hook_process(
    name: str, payload: dict[str, Any], home: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """The installed console script, as Claude Code runs it."""
    return subprocess.run(
        [CLAWBACK, "--home", str(home), "hook", name], input=json.dumps(payload),
        capture_output=True, text=True, timeout=60, env={**os.environ, **env},
    )  # fmt: skip


def set_hooks(home: Path, text: str) -> None:
    config = home / "config.toml"
    config.write_text(config.read_text() + f"[hooks]\n{text}\n")


@pytest.mark.parametrize("slow_module", ["clawback.core.hooks.run", "clawback.core.hooks.brief"])
def test_a_hook_slow_to_import_gives_up_at_its_budget_from_the_process_start(
    hook_home: Path, tmp_path: Path, slow_module: str
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_IMPORT.format(module=slow_module, seconds=4))
    set_hooks(hook_home, "timeout_s = 1")
    assert hook_process("stop", event("Stop"), hook_home).returncode == 0  # the budget, read once
    started = time.monotonic()
    done = hook_process(
        "session-start", event("SessionStart", "startup"), hook_home, PYTHONPATH=str(site)
    )
    took = time.monotonic() - started
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert took < 3.0  # the import alone takes 4 s: it was not waited for
    run = read_runs(Paths.resolve(hook_home).hooks)[-1]
    assert (run.event, run.outcome) == ("session-start", "timeout")
    assert "timeout_s = 1" in run.detail and run.ms < 2500


def test_a_hook_that_started_late_does_not_run_past_its_budget(
    hook_home: Path, tmp_path: Path
) -> None:
    """A process that got going only after its budget (a loaded machine) answers nothing."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import time\ntime.sleep(1.5)\n")
    set_hooks(hook_home, "timeout_s = 1")
    done = hook_process(
        "user-prompt", event("UserPromptSubmit", prompt="what did we decide about the cache?"),
        hook_home, PYTHONPATH=str(site),
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "")  # the recall would have found the decision
    run = read_runs(Paths.resolve(hook_home).hooks)[-1]
    assert (run.event, run.outcome) == ("user-prompt", "timeout")


def test_a_megabyte_prompt_costs_recall_a_few_thousand_characters(
    hook_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    real = recall_block.recall

    def counting(conn: Any, prompts: list[str], **kwargs: Any) -> Any:
        seen.extend(len(prompt) for prompt in prompts)
        return real(conn, prompts, **kwargs)

    monkeypatch.setattr(recall_block, "recall", counting)
    prompt = "what did we decide about the cache layer?\n" + "log line " * 120_000
    done = run_cli(
        "hook", "user-prompt", home=hook_home,
        input=json.dumps(event("UserPromptSubmit", prompt=prompt)),
    )  # fmt: skip
    assert done.returncode == 0 and DECISION in done.stdout  # its question is still read
    assert seen and max(seen) <= recall_block.PROMPT_CHARS + 3


@pytest.fixture
def warm(hook_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Paths]:
    """The home's warm process, started as the first hook starts it."""
    monkeypatch.delenv("CLAWBACK_WARM")
    paths = Paths.resolve(hook_home)
    first = hook_process("session-start", event("SessionStart", "startup"), hook_home)
    assert first.returncode == 0 and "Recent sessions" in first.stdout  # answered meanwhile
    try:
        wait_until(lambda: running(paths) and socket_path(paths).exists(), "the warm process")  # type: ignore[union-attr]
        yield paths
    finally:
        stop(paths)
        wait_until(lambda: not running(paths), "the warm process to stop")


def test_with_the_warm_process_up_every_hook_is_answered_there(warm: Paths) -> None:
    home = warm.home
    prompt = event("UserPromptSubmit", prompt="what did we decide about the cache layer?")
    recalled = hook_process("user-prompt", prompt, home)
    assert DECISION in json.loads(recalled.stdout)["hookSpecificOutput"]["additionalContext"]
    brief = hook_process("session-start", event("SessionStart", "startup"), home)
    assert "Recent sessions" in brief.stdout
    for name, claude_event in (("stop", "Stop"), ("session-end", "SessionEnd")):
        assert hook_process(name, event(claude_event), home).returncode == 0
    runs = read_runs(warm.hooks)[-4:]
    assert [run.event for run in runs] == ["user-prompt", "session-start", "stop", "session-end"]
    assert runs[0].detail.startswith("keyword, warm:")  # answered by the warm process
    assert all(run.outcome in ("ok", "empty") for run in runs)
    budget = json.loads((warm.hooks / "budget.json").read_text())
    assert budget == {"timeout_s": 5.0}  # what the hooks' own processes keep to


def test_a_slow_client_of_the_warm_process_holds_no_hook(warm: Paths) -> None:
    path = socket_path(warm)
    assert path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as slow:
        slow.connect(str(path))
        slow.sendall(b"{")  # a byte, then nothing
        prompt = event("UserPromptSubmit", prompt="what did we decide about the cache layer?")
        recalled = hook_process("user-prompt", prompt, warm.home)
        assert DECISION in recalled.stdout
        assert read_runs(warm.hooks)[-1].detail.startswith("keyword, warm:")
