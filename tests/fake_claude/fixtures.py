"""Fixtures for tests that run the fake ``claude`` instead of the real one.

Import what you need in a test module::

    from .fake_claude.fixtures import FakeClaude, fake_claude_fixture  # noqa: F401

    async def test_something(fake_claude: FakeClaude) -> None:
        fake_claude.mode("err429")
        ...

The ``fake_claude`` fixture points ``$CLAWBACK_CLAUDE`` at ``tests/fake_claude/claude`` (so any
runner built from the config runs the fake), logs every call to a file, and returns a
:class:`FakeClaude` to pick the mode, the reply and the usage, and to read back what was run.
Nothing here touches the network or a real home.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from clawback.core.claude.errors import CLAUDE_ENV
from clawback.core.claude.runner import ClaudeRunner

FAKE_CLAUDE = Path(__file__).resolve().with_name("claude")
EXTRA_CAPTURES = Path(__file__).resolve().with_name("captures")
REPO_ROOT = Path(__file__).resolve().parents[2]
CAPTURES_ENV = "CLAWBACK_CLAUDE_CAPTURES"

FAKE_ENV_VARS = (
    "FAKE_CLAUDE_MODE",
    "FAKE_CLAUDE_REPLY",
    "FAKE_CLAUDE_STRUCTURED",
    "FAKE_CLAUDE_USAGE",
    "FAKE_CLAUDE_CONTEXT_WINDOW",
    "FAKE_CLAUDE_DELAY",
    "FAKE_CLAUDE_LOG",
    "FAKE_CLAUDE_IGNORE_SIGTERM",
    "FAKE_CLAUDE_SPAWN_CHILD",
    "FAKE_CLAUDE_RETRIES",
    "FAKE_CLAUDE_TURN_MODES",
    "FAKE_CLAUDE_AUTH",
    "CLAUDE_CODE_OAUTH_TOKEN",
)


def shared_captures() -> Path | None:
    """``shared/claude-cli/`` (the real CLI's captures), if it is next to the repository."""
    candidates = [os.environ.get(CAPTURES_ENV)]
    candidates += [str(REPO_ROOT.parent / "shared" / "claude-cli")]
    candidates += [str(REPO_ROOT / "shared" / "claude-cli")]
    for candidate in candidates:
        if candidate and (Path(candidate) / "README.md").is_file():
            return Path(candidate)
    return None


def requires_shared_captures() -> Path:
    """The captures folder, or skip the test saying why."""
    found = shared_captures()
    if found is None:
        pytest.skip(
            "shared/claude-cli/ (captures of the real claude CLI) is not next to the repository; "
            f"set {CAPTURES_ENV} to its path to run this test"
        )
    return found


# A line the real CLI prints now and then, even before system/init (see captures/README.md).
NONDETERMINISTIC = {"system/ui_invalidate"}


def kind(line: dict[str, Any]) -> str:
    event = line.get("event")
    sub = line.get("subtype") or (event.get("type") if isinstance(event, dict) else "")
    return f"{line.get('type')}/{sub}"


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def assert_same_shape(real: Any, fake: Any, where: str) -> None:
    """Same JSON types; objects with the same keys in the same order; array items alike."""
    assert json_type(fake) == json_type(real), f"{where}: {json_type(fake)} != {json_type(real)}"
    if isinstance(real, dict):
        assert list(fake) == list(real), f"{where}: keys {list(fake)} != {list(real)}"
        for key in real:
            assert_same_shape(real[key], fake[key], f"{where}.{key}")
    elif isinstance(real, list) and real and fake:
        for i, item in enumerate(fake):
            assert_same_shape(real[min(i, len(real) - 1)], item, f"{where}[{i}]")


def parse_lines(text: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [line for line in lines if kind(line) not in NONDETERMINISTIC]


@dataclass
class FakeRun:
    stdout: str
    stderr: str
    returncode: int


def run_fake(
    args: list[str], prompt: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> FakeRun:
    """Run the fake synchronously, as a shell-less subprocess, and collect everything it printed."""
    full_env = {k: v for k, v in os.environ.items() if k not in FAKE_ENV_VARS}
    full_env.update(env or {})
    proc = subprocess.run(
        [str(FAKE_CLAUDE), *args],
        input=prompt.encode("utf-8"),
        capture_output=True,
        env=full_env,
        cwd=cwd,
        timeout=30,
        check=False,
    )
    return FakeRun(
        proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", errors="replace"), proc.returncode
    )


class FakeClaude:
    """Controls the fake ``claude`` for one test (through environment variables)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        self.path = FAKE_CLAUDE
        self.log = tmp_path / "fake-claude-calls.jsonl"
        self.cwd = tmp_path / "claude-cwd"
        self.cwd.mkdir(exist_ok=True)
        self._monkeypatch = monkeypatch
        for name in FAKE_ENV_VARS:
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv(CLAUDE_ENV, str(self.path))
        monkeypatch.setenv("FAKE_CLAUDE_LOG", str(self.log))

    def _set(self, name: str, value: str | None) -> None:
        if value is None:
            self._monkeypatch.delenv(name, raising=False)
        else:
            self._monkeypatch.setenv(name, value)

    def mode(self, mode: str) -> FakeClaude:
        """success, nopartial, structured, err401, err429, err529, nokey, badjson, killed, slow,
        stall, hang or crash."""
        self._set("FAKE_CLAUDE_MODE", mode)
        return self

    def reply(self, text: str | None) -> FakeClaude:
        self._set("FAKE_CLAUDE_REPLY", text)
        return self

    def structured(self, payload: Any) -> FakeClaude:
        self._set("FAKE_CLAUDE_STRUCTURED", json.dumps(payload))
        return self

    def usage(
        self, *, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0
    ) -> FakeClaude:
        usage = dict(input=input, output=output, cache_read=cache_read, cache_write=cache_write)
        self._set("FAKE_CLAUDE_USAGE", json.dumps(usage))
        return self

    def context_window(self, tokens: int) -> FakeClaude:
        self._set("FAKE_CLAUDE_CONTEXT_WINDOW", str(tokens))
        return self

    def delay(self, seconds: float) -> FakeClaude:
        self._set("FAKE_CLAUDE_DELAY", str(seconds))
        return self

    def set_env(self, name: str, value: str | None) -> FakeClaude:
        """Any other FAKE_CLAUDE_* switch (IGNORE_SIGTERM, SPAWN_CHILD, RETRIES)."""
        self._set(name, value)
        return self

    def calls(self) -> list[dict[str, Any]]:
        """Every call so far: ``argv`` (without the executable), ``stdin``, ``cwd``, ``pid``, ..."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text("utf-8").splitlines() if line]

    def last_call(self) -> dict[str, Any]:
        calls = self.calls()
        assert calls, "the fake claude was never run"
        return calls[-1]

    def runner(self, **kwargs: Any) -> ClaudeRunner:
        """A runner for the fake with short timeouts, starting in a temporary folder."""
        kwargs.setdefault("timeout", 10.0)
        kwargs.setdefault("kill_grace", 1.0)
        kwargs.setdefault("cwd", self.cwd)
        return ClaudeRunner(str(self.path), **kwargs)


def children() -> set[int]:
    """Our own child processes, zombies included."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            found |= {int(pid) for pid in (task / "children").read_text().split()}
    return found


def is_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in {"Z", "X"}  # an orphan waiting for init to reap it is gone too


async def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if is_gone(pid):
            return True
        await asyncio.sleep(0.02)
    return is_gone(pid)


@pytest.fixture(autouse=True, name="no_leftover_processes")
def no_leftover_processes() -> Iterator[None]:
    """Fail the test if it left a child process (or an unreaped zombie) behind."""
    before = children()
    yield
    deadline = time.monotonic() + 3
    while children() - before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert children() - before == set(), "a claude process (or zombie) was left behind"


@pytest.fixture(name="fake_claude")
def fake_claude_fixture(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeClaude:
    """The fake ``claude``, on ``$CLAWBACK_CLAUDE``, in ``success`` mode, logging its calls."""
    return FakeClaude(monkeypatch, tmp_path)
