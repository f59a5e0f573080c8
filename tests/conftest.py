"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.core.home import Home


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``shared/`` folder beside the project (real transcripts); skip the test if absent."""
    path = Path(__file__).resolve().parents[2] / "shared"
    if not path.is_dir():
        pytest.skip(f"shared/ transcripts not found beside the project at {path}")
    return path


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test runs against a throwaway home; nothing touches a real ~/.clawback."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("CLAWBACK_HOME", str(home))
    monkeypatch.delenv("CLAWBACK_CLAUDE", raising=False)
    return home


@pytest.fixture
def cc_root(tmp_path: Path) -> Path:
    root = tmp_path / "claude-projects"
    root.mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path, cc_root: Path) -> Iterator[Home]:
    """An opened home whose configured sources point only inside ``tmp_path``."""
    opened = Home.open(tmp_path / "clawback-home")
    opened.config.sources.claude_code_path = str(cc_root)
    opened.config.sources.openclaw_path = str(tmp_path / "openclaw-agents")
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clawback.core.demo import build_demo_home

    return build_demo_home(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def demo_home(demo_dir: Path, tmp_path: Path) -> Iterator[Home]:
    """A private copy of the demo home, so tests may change it."""
    import shutil

    from clawback.core.demo import build_demo_home
    from clawback.core.home import Home

    copy = tmp_path / "demo"
    shutil.copytree(demo_dir, copy, symlinks=True)
    build_demo_home(copy)  # re-points config at the copy's sources
    opened = Home.open(copy)
    yield opened
    opened.close()
