"""The shape the project promises: the core never pulls in the UI, and nothing lands as 'core'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_importing_the_whole_core_does_not_import_textual() -> None:
    code = (
        "import pkgutil, importlib, sys, clawback.core as core\n"
        "for m in pkgutil.walk_packages(core.__path__, 'clawback.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "print('textual' in sys.modules, 'clawback.tui' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_no_top_level_core_or_tui_package(tmp_path: Path) -> None:
    """Installed, only the ``clawback.*`` names exist (run away from the source tree)."""
    code = (
        "from importlib.util import find_spec as f\n"
        "print(f('core') is None, f('tui') is None, f('clawback.core') is not None,"
        " f('clawback.themes') is not None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.split() == ["True", "True", "True", "True"]


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    """A folder the editable install finds but ``packages`` omits is missing from a real
    install (``pip install .``): every package folder under the card's folders is listed."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    for name, folder in config["package-dir"].items():
        for init in (root / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(root / folder).parts
            package = ".".join((name, *relative))
            assert package in listed, f"{package} ({init.parent}) is not in pyproject's packages"
