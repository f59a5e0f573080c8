"""The README's install section, every command run as written: three routes, in this order.

1. ``uv tool install`` and ``pipx install``, from the clone and from the built wheel: each
   installs a ``clawback`` that runs, searches the demo and has its extras, then uninstalls.
   They fetch clawback's dependencies from the package index and take a minute, so they run
   where the wheel was built: in CI after ``make smoke`` (``CLAWBACK_INSTALL_TESTS=1``).
2. The plugin: ``tests/integration/test_real_claude_plugin.py`` runs the section's ``claude
   plugin`` lines with the real Claude Code (:func:`plugin_lines` hands them over).
3. The development venv: ``.ci/run`` runs it on every CI run; checked here.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .test_quickstart import readme_section

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: each tool route and the uninstall the section names for it
TOOLS = {"uv": "uv tool uninstall clawback", "pipx": "pipx uninstall clawback"}


def shell_lines(section: str) -> list[str]:
    """Each command of the section's ``sh`` blocks, as written, its comment dropped."""
    found = []
    for block in re.findall(r"^```sh\n(.*?)^```", section, re.M | re.S):
        for line in block.splitlines():
            command = line.split("#")[0].strip()
            if command:
                found.append(command)
    return found


def install_section() -> str:
    return readme_section("Install")


def plugin_lines() -> list[list[str]]:
    """The section's ``claude plugin ...`` commands: the ones in code blocks, then the ones in
    the text (the uninstall), each as words."""
    section = install_section()
    inline = re.findall(r"`(claude plugin [^`]+)`", section)
    return [shlex.split(line) for line in [*shell_lines(section), *inline] if "claude" in line]


def test_three_routes_in_order_and_nothing_else_to_run() -> None:
    section = install_section()
    routes = re.findall(r"^\*\*(.+?)\*\*", section, re.M)
    assert [r.split(",")[0] for r in routes] == [
        "As a command of its own",
        "In Claude Code",
        "For development",
    ]
    lines = shell_lines(section)
    tools = [line.split()[0] for line in lines]
    assert tools == ["uv", "pipx", "claude", "make"], lines  # every one is run below


def test_the_wheel_the_section_names_is_the_one_make_dist_builds() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    wheels = re.findall(r"dist/(clawback-[^\[' ]+\.whl)", install_section())
    assert wheels == [f"clawback-{version}-py3-none-any.whl"], "bump the README with the version"


def test_the_development_route_is_what_ci_runs() -> None:
    [line] = [line for line in shell_lines(install_section()) if line.startswith("make")]
    ci = (ROOT / ".ci" / "run").read_text()
    for step in line.split(" && "):
        assert re.search(rf"^{re.escape(step)}\b", ci, re.M), f"{step!r} is not in .ci/run"


def test_the_plugin_route_names_the_repository_as_marketplace() -> None:
    lines = plugin_lines()
    assert [words[:3] for words in lines] == [
        ["claude", "plugin", "install"],
        ["claude", "plugin", "uninstall"],
        ["claude", "plugin", "marketplace"],
    ]
    assert lines[0][3:] == ["clawback", "--marketplace", "./"]
    assert (ROOT / ".claude-plugin" / "marketplace.json").is_file()


# -- the tool routes, installed for real ---------------------------------------------------------


def tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (the dev extra brings it: make install)")
    return found


@pytest.fixture
def sandbox(tmp_path: Path) -> dict[str, str]:
    """A person's machine in ``tmp_path``: the tools put venvs and commands there; their
    download caches stay the real ones, so a second run fetches nothing."""
    if os.environ.get("CLAWBACK_INSTALL_TESTS") != "1":
        pytest.skip("installs from the package index: set CLAWBACK_INSTALL_TESTS=1 (CI does)")
    real = Path.home()
    person = tmp_path / "person"
    person.mkdir()
    return {
        **os.environ,
        "HOME": str(person),
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        "UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR", str(real / ".cache" / "uv")),
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(real / ".cache" / "pip")),
        "CLAWBACK_HOME": str(tmp_path / "clawback-home"),
    }


def run(words: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        words, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, f"{shlex.join(words)}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done


@pytest.mark.parametrize("name", TOOLS)
def test_the_tool_route_installs_a_clawback_that_works(
    name: str, sandbox: dict[str, str], tmp_path: Path
) -> None:
    [line] = [line for line in shell_lines(install_section()) if line.split()[0] == name]
    words = shlex.split(line)
    if any(word.startswith("dist/") for word in words):
        wheel = next(word for word in words if word.startswith("dist/")).split("[")[0]
        if not (ROOT / wheel).is_file():
            pytest.fail(
                f"{wheel} is not built: run make dist first (.ci/run builds it with make smoke)"
            )
    run([tool(name), *words[1:]], sandbox)
    clawback = tmp_path / "bin" / "clawback"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (
        run([str(clawback), "--version"], sandbox).stdout.strip() == f"clawback, version {version}"
    )
    demo = run([str(clawback), "demo", "--ingest-only"], sandbox).stdout.strip()
    assert (
        "sqlite" in run([str(clawback), "--home", demo, "search", "sqlite"], sandbox).stdout.lower()
    )
    extras = re.findall(r"\[([\w,]+)\]", line)[0].split(",")
    modules = {"embeddings": ["onnxruntime", "tokenizers"], "telegram": ["telegram"]}
    python = clawback.resolve().parent / "python"  # the tool's own venv
    imports = ", ".join(module for extra in extras for module in modules[extra])
    run([str(python), "-c", f"import {imports}"], sandbox)
    uninstall = TOOLS[name]
    assert f"`{uninstall}`" in install_section()
    run([tool(name), *shlex.split(uninstall)[1:]], sandbox)
    assert not clawback.exists()
