"""Shared pytest fixtures."""

from __future__ import annotations

import importlib.util
import os
import pwd
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home

ROOT = Path(__file__).resolve().parent.parent


def _real_places() -> tuple[str, ...]:
    """Where the person running the tests keeps what clawback reads and writes: their Claude
    Code folder and settings, their clawback home, OpenClaw's agents. No test may touch them."""
    homes = {os.path.expanduser("~"), pwd.getpwuid(os.getuid()).pw_dir}
    names = (".claude", ".claude.json", ".clawback", ".openclaw")
    places = {os.path.join(home, name) for home in homes for name in names}
    for variable in ("CLAUDE_CONFIG_DIR", "CLAWBACK_HOME"):
        if os.environ.get(variable):
            places.add(os.path.abspath(os.path.expanduser(os.environ[variable])))
    return tuple(sorted(places))


REAL_PLACES = _real_places()
#: What touched a real place during the current test: (audit event, path).
TOUCHED: list[tuple[str, str]] = []
_WATCHED = frozenset({"open", "os.listdir", "os.scandir", "os.mkdir", "os.rename", "os.remove",
                      "os.rmdir", "os.chmod", "os.symlink", "os.link", "os.truncate",
                      "os.utime", "shutil.rmtree", "shutil.copytree", "shutil.move"})  # fmt: skip


def _is_real(path: object) -> str | None:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    elif isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path:
        return None
    full = os.path.abspath(path)
    for place in REAL_PLACES:
        if full == place or full.startswith(place + os.sep):
            return full
    return None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """Record every file opened, listed, made or removed in a real place (see
    :func:`_real_places`); the test that did it fails (``_isolated_home``)."""
    if event in _WATCHED and args and (path := _is_real(args[0])) is not None:
        TOUCHED.append((event, path))


def pytest_sessionstart(session: pytest.Session) -> None:
    """A strict editable install (``make install``) links each file, so a module added since
    is not importable: say so once, not as a ModuleNotFoundError in whichever test meets it.
    Then the guard that fails any test touching the person's own Claude Code or clawback files
    starts listening (an audit hook sees every open, listing and removal in this process)."""
    missing = modules_missing_from_the_install()
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        pytest.exit(f"not in clawback's editable install (run `make install`): {shown}", 4)
    sys.addaudithook(_audit)


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
) -> Iterator[Path]:
    """Every test runs against throwaway homes: clawback's (``CLAWBACK_HOME``) and the user's
    (``HOME``, so ``~/.claude/projects``, ``~/.claude.json`` and ``~/.openclaw`` are empty
    folders of the test's own; ``CLAUDE_CONFIG_DIR`` unset). A test that still opens, lists or
    writes anything in the real ones fails, naming the path. No test starts a warm process
    unless it asks for one (``CLAWBACK_WARM``): a hybrid search would otherwise leave one
    running for ``hooks.warm_minutes``."""
    home = tmp_path_factory.mktemp("home")
    user = tmp_path_factory.mktemp("user-home")
    monkeypatch.setenv("CLAWBACK_HOME", str(home))
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("CLAWBACK_WARM", "0")
    monkeypatch.delenv("CLAWBACK_CLAUDE", raising=False)
    TOUCHED.clear()
    yield home
    touched, TOUCHED[:] = sorted(set(TOUCHED)), []
    if touched:
        shown = "; ".join(f"{event} {path}" for event, path in touched[:5])
        pytest.fail(f"the test touched the real home's files: {shown}", pytrace=False)


@pytest.fixture
def claude_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A person's throwaway HOME holding an empty ``~/.claude`` (where Claude Code's settings
    are), with a project folder of the test's own as the working folder; the HOME returned."""
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return user


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
