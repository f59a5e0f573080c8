"""The type check checks something: mypy resolves ``clawback.*`` and every package is installed.

``core/``, ``cli/`` and ``tui/`` are installed as ``clawback.core`` and so on through a
``package-dir`` map. If mypy ever loses them (a default-mode editable install, a blanket
``ignore_missing_imports``), every ``clawback.*`` import turns into ``Any`` and `make types`
passes whatever the code does. These tests hand mypy a deliberate misuse and expect it caught.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

MISUSE = """\
from clawback.core.search.engine import search
from clawback.tui.app import make_app

reveal_type(search)
search(1, "query", limit="ten")
make_app("not a home")
"""


def mypy(code: str) -> str:
    """mypy's report on ``code``, checked with the project's own configuration."""
    pytest.importorskip("mypy", reason="mypy is a dev dependency (pip install -e '.[dev]')")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    return done.stdout + done.stderr


def test_mypy_resolves_clawback_and_catches_a_misuse() -> None:
    report = mypy(MISUSE)
    assert "import-not-found" not in report, (
        f"mypy cannot find clawback (run `make install`):\n{report}"
    )
    assert 'Revealed type is "def (db: clawback.core.db.Queryable' in report, report
    assert 'Argument 1 to "search" has incompatible type "int"' in report, report
    assert 'Argument "limit" to "search" has incompatible type "str"' in report, report
    assert 'Argument 1 to "make_app" has incompatible type "str"; expected "Home"' in report, report


def test_every_package_is_installed() -> None:
    """A folder missing from ``packages`` is missing from the wheel and from mypy's view."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    roots = {ROOT / folder: name for name, folder in setuptools["package-dir"].items()}
    found = set()
    for root, name in roots.items():
        for init in root.rglob("__init__.py"):
            inside = init.parent.relative_to(root).parts
            mapped = any(other != root and init.is_relative_to(other) for other in roots)
            if not mapped:
                found.add(".".join([name, *inside]))
    assert found - set(setuptools["packages"]) == set()
