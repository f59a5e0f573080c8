"""Fixtures the CLI tests share: a home embedded, whose warm process (if a test starts one) is
stopped after; a home holding one chat session (``flush``, ``compact``); a person's Claude Code session
(``resume``, ``restore``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.core.paths import Paths
from clawback.core.warm.server import running, stop

from ..cli_runner import run_cli
from ..helpers import cc_assistant, cc_user, wait_until, write_lines
from .claude_code_world import make_world
from .seeded_chat import seeded_chat

#: the one session the embedded homes hold; the last line is found by meaning alone
#: ("which caching did we keep, the database one?"), with a real model
SAID = [
    "tangerine protocol launch checklist",
    "we picked the tangerine protocol for the launch on Monday",
    "the rollout of the orange build went fine",
    "citrus names for every release from now on",
    "the launch checklist is done, ship it",
    "We decided to drop the Redis cache layer and rely on SQLite's page cache instead.",
]


def embedded_home(tmp_path: Path, model: str) -> Path:
    """A home holding :data:`SAID`, embedded with ``model``, where the warm process is allowed
    (one minute idle), searches included (no hooks are installed)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[embeddings]\nmodel = "{model}"\n[hooks]\nwarm_minutes = 1\nwarm_for_search = true\n'
    )
    lines = []
    for n, text in enumerate(SAID):
        lines.append(cc_user("s1", f"u{n}", text, ts=f"2026-11-1{n}T10:00:00Z"))
        lines.append(cc_assistant("s1", f"a{n}", [{"type": "text", "text": f"noted: {text}"}]))
    write_lines(tmp_path / "src" / "proj" / "s1.jsonl", lines)
    ingested = run_cli("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home)
    assert ingested.returncode == 0, ingested.stderr
    embedded = run_cli("embed", home=home)
    assert embedded.returncode == 0, embedded.stderr
    return home


def stop_warm(home: Path) -> None:
    paths = Paths.resolve(home)
    stop(paths)
    wait_until(lambda: not running(paths), "the warm process to stop", timeout=30)


@pytest.fixture
def warm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An embedded home (the test-only ``hash`` model: quick, and no onnxruntime) where the
    warm process may start."""
    pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")
    monkeypatch.delenv("CLAWBACK_WARM")
    home = embedded_home(tmp_path, "hash")
    yield home
    stop_warm(home)


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[Path, str]:
    """A home with one indexed chat session of 10 messages: (home, session id)."""
    return seeded_chat(tmp_path)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A user's HOME with a Claude Code session whose working folder exists, and a clawback
    home configured to read that HOME's Claude Code projects."""
    return make_world(tmp_path)
