"""The shape the project promises: the core never pulls in the UI, and nothing lands as 'core'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


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


#: The rooms whose ``__init__.py`` is their door (an import-linter contract keeps the other
#: packages out of the modules behind it); each loads its names on first use.
DOORS = (
    "clawback.core.search",
    "clawback.core.recall",
    "clawback.core.warm",
    "clawback.core.claude",
    "clawback.core.memory",
    "clawback.core.text",
    "clawback.core.archive",
)


def _door_types(door: str) -> dict[str, str]:
    """What the door's ``TYPE_CHECKING`` block imports for mypy: each name and its module."""
    import ast
    import importlib

    module = importlib.import_module(door)
    tree = ast.parse(Path(str(module.__file__)).read_text())
    return {
        alias.name: node.module.removeprefix(door + ".")
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def test_each_door_exports_what_mypy_sees_from_where_it_is_defined() -> None:
    import importlib

    for door in DOORS:
        module = importlib.import_module(door)
        homes = module._HOMES
        assert _door_types(door) == homes, door  # mypy's view and the runtime's agree
        assert sorted(module.__all__) == sorted(homes)
        for name, home in homes.items():
            behind = importlib.import_module(f"{door}.{home}")
            assert getattr(module, name) is getattr(behind, name), f"{door}.{name}"
        with pytest.raises(AttributeError):
            module.not_a_name  # noqa: B018


def test_importing_a_door_loads_nothing_behind_it() -> None:
    """A door is free: ``clawback ingest`` and the hooks import it without the search."""
    for door in DOORS:
        code = (
            f"import sys, {door}\n"
            f"print(sorted(m for m in sys.modules if m.startswith('{door}.')))\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "[]", door
