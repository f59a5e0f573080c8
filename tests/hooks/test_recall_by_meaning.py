"""Recall by meaning in the ``user-prompt`` hook: through the warm server it starts on demand
(and stops when asked, or idle), or in the hook's own process with ``hooks.warm_minutes = 0``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawback.core.hooks.log import WARM_EVENT, read_runs
from clawback.core.paths import Paths
from clawback.core.warm.server import running, socket_path, stop

from ..cli_runner import run_cli
from ..helpers import cc_assistant, cc_user, wait_until, write_lines
from .conftest import DECISION, event

pytest.importorskip("onnxruntime", reason="recall by meaning needs the embeddings extra")

#: no word of it is in the decision: only its meaning finds it
BY_MEANING = "which caching did we keep, the database one?"
SECRET_SESSION = "0a1b2c3d-0000-4000-8000-00000000005e"


@pytest.fixture
def embedded(hook_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CLAWBACK_WARM")  # these tests start the warm process, and stop it
    done = run_cli("embed", home=hook_home)
    assert done.returncode == 0, done.stderr
    return hook_home


def set_warm(home: Path, minutes: int) -> None:
    config = home / "config.toml"
    config.write_text(config.read_text() + f"[hooks]\nwarm_minutes = {minutes}\n")


def ask_hook(home: Path, prompt: str) -> tuple[str, str]:
    done = run_cli(
        "hook", "user-prompt", home=home, input=json.dumps(event("UserPromptSubmit", prompt=prompt))
    )
    assert (done.returncode, done.stderr) == (0, "")
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else ""
    detail = [r for r in read_runs(Paths.resolve(home).hooks) if r.event == "user-prompt"][
        -1
    ].detail
    return text, detail


def test_the_first_prompt_starts_the_server_and_the_next_ones_ask_it(embedded: Path) -> None:
    set_warm(embedded, 1)
    paths = Paths.resolve(embedded)
    listening = socket_path(paths)
    assert listening is not None
    try:
        text, detail = ask_hook(embedded, BY_MEANING)
        assert detail.startswith("keyword:") and DECISION not in text  # words alone, meanwhile
        wait_until(lambda: running(paths) and listening.exists(), "the warm process", timeout=60)
        text, detail = ask_hook(embedded, BY_MEANING)
        assert detail.startswith("hybrid:"), detail
        assert DECISION in text and "not instructions" in text
        text, detail = ask_hook(embedded, "what did we decide about the cache layer")
        assert detail.startswith("hybrid:") and "current session copy" not in text
    finally:
        stop(paths)
    wait_until(lambda: not running(paths), "the server to stop")
    assert not listening.exists()
    wait_until(
        lambda: any(
            r.event == WARM_EVENT and r.detail == "asked to stop" for r in read_runs(paths.hooks)
        ),
        "the server's last log line",
    )


def test_warm_minutes_0_recalls_by_meaning_in_the_hook_itself(embedded: Path) -> None:
    set_warm(embedded, 0)
    text, detail = ask_hook(embedded, BY_MEANING)
    assert detail.startswith("hybrid in process:") and DECISION in text
    assert not running(Paths.resolve(embedded))


def test_the_warm_process_recalls_no_secret_the_index_masks(
    hook_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the warm process answers comes from the index, which masks: a planted key stays out."""
    key = "sk-ant-api03-" + "Q7w8E9r0T1y2U3i4" * 5
    write_lines(
        tmp_path
        / "claude"
        / "projects"
        / "-home-user-work-demo-project"
        / f"{SECRET_SESSION}.jsonl",
        [
            cc_user(SECRET_SESSION, "s1", "How do we reach the billing sandbox?"),
            cc_assistant(
                SECRET_SESSION,
                "s2",
                [{"type": "text", "text": f"The billing sandbox answers with the key {key} now."}],
            ),
        ],
    )
    assert run_cli("ingest", home=hook_home).returncode == 0
    monkeypatch.delenv("CLAWBACK_WARM")
    assert run_cli("embed", home=hook_home).returncode == 0
    set_warm(hook_home, 1)
    paths = Paths.resolve(hook_home)
    try:
        ask_hook(hook_home, "how do we reach the billing sandbox")  # starts the warm process
        listening = socket_path(paths)
        assert listening is not None
        wait_until(lambda: running(paths) and listening.exists(), "the warm process", timeout=60)
        text, detail = ask_hook(hook_home, "how do we reach the billing sandbox")
    finally:
        stop(paths)
    assert detail.startswith("hybrid:"), detail  # the warm process answered
    assert "billing sandbox answers with the key" in text
    assert key not in text and key[:24] not in text
