"""Shared pytest fixtures."""

from __future__ import annotations

import importlib.util
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.core.home import Home

ROOT = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session: pytest.Session) -> None:
    """A strict editable install (``make install``) links each file, so a module added since
    is not importable: say so once, not as a ModuleNotFoundError in whichever test meets it."""
    missing = modules_missing_from_the_install()
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        pytest.exit(f"not in clawback's editable install (run `make install`): {shown}", 4)


def modules_missing_from_the_install() -> list[str]:
    """Source files under core/, cli/, tui/, themes/ that the installed ``clawback.*`` lacks."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {ROOT / folder: name for name, folder in setuptools["package-dir"].items()}
    missing = []
    for folder, name in folders.items():
        spec = importlib.util.find_spec(name)
        installed = Path(next(iter(spec.submodule_search_locations or []))) if spec else None
        if installed is None or installed == folder:
            continue  # the default editable mode reads the folder itself: nothing can be missing
        for source in folder.rglob("*.py"):
            inner = [
                f
                for f in folders
                if f != folder and f.is_relative_to(folder) and source.is_relative_to(f)
            ]
            packaged = (source.parent / "__init__.py").exists()
            if packaged and not inner and not (installed / source.relative_to(folder)).exists():
                missing.append(str(source.relative_to(ROOT)))
    return sorted(missing)


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
    """Every test runs against a throwaway home; nothing touches a real ~/.clawback. No test
    starts a warm process unless it asks for one (``CLAWBACK_WARM``): a hybrid search would
    otherwise leave one running for ``hooks.warm_minutes``."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("CLAWBACK_HOME", str(home))
    monkeypatch.setenv("CLAWBACK_WARM", "0")
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
