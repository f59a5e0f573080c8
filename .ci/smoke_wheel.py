"""Smoke-test clawback as people install it: the built wheel, in a fresh venv, not editable.

    make smoke    # builds dist/ (python -m build), installs the wheel, runs this with its python

Run by the venv the wheel went into, from outside the checkout, so ``import clawback`` can only
be the installed package. It checks what an editable install of the checkout cannot show: that
the wheel and the sdist hold every file of the package (themes, stylesheets, the demo archive,
the model's tokenizer, the migrations), that ``clawback --version`` is the package's version,
that ``clawback demo`` starts the app and draws its first screen with no terminal, that
``clawback search`` finds the demo archive, and that ``clawback mcp`` answers a tool call.
Every step prints one line; the first failure ends the run with exit code 1.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import tomllib
import zipfile
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CLAWBACK = str(BIN / "clawback")
TIMEOUT = 120
#: the app must have listed the demo's sessions this many seconds after it is ready
FIRST_SCREEN_S = 3


class SmokeError(Exception):
    """One check failed: the message says which and what was seen."""


def check(name: str, step: Callable[[], str]) -> None:
    started = time.monotonic()
    try:
        said = step()
    except SmokeError as exc:
        print(f"FAIL  {name}: {exc}", flush=True)
        sys.exit(1)
    print(f"ok    {name} ({time.monotonic() - started:.1f} s){': ' + said if said else ''}")


def run(*args: str, env: dict[str, str] | None = None, stdin: str = "") -> str:
    done = subprocess.run(
        [CLAWBACK, *args], input=stdin, capture_output=True, text=True, timeout=TIMEOUT,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    if done.returncode != 0:
        raise SmokeError(f"`clawback {' '.join(args)}` exited {done.returncode}: {done.stderr}")
    return done.stdout


def tracked_package_files() -> dict[str, str]:
    """Each file git tracks in the package's folders -> where the wheel must hold it."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = sorted(setuptools["package-dir"].items(), key=lambda item: -len(item[1]))
    listed = subprocess.run(
        ["git", "ls-files", "-z", *{folder for _, folder in folders}],
        capture_output=True, text=True, cwd=REPO, check=True,
    ).stdout.split("\0")  # fmt: skip
    wanted = {}
    for path in filter(None, listed):
        # the longest folder first: cli/toplevel is the top package `clawback`, not clawback.cli
        package, folder = next((p, f) for p, f in folders if path.startswith(f"{f}/"))
        wanted[path] = f"{package.replace('.', '/')}/{path[len(folder) + 1 :]}"
    return wanted


def wheel_holds_every_package_file(dist: Path) -> str:
    [wheel] = dist.glob("clawback-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = tracked_package_files()
    missing = sorted(path for path, inside in wanted.items() if inside not in names)
    if missing:
        raise SmokeError(f"{wheel.name} lacks {len(missing)} files: {', '.join(missing[:8])}")
    kinds = {
        "themes": r"^clawback/themes/.+\.toml$",
        "stylesheets": r"^clawback/tui/.+\.tcss$",
        "demo archive": r"^clawback/core/demo/data/.+\.jsonl$",
        "migrations": r"^clawback/core/schema\.py$",
        "model data": r"^clawback/core/embeddings/data/.+\.json\.gz$",
    }
    counts = {kind: sum(bool(re.match(rx, n)) for n in names) for kind, rx in kinds.items()}
    if not all(counts.values()):
        raise SmokeError(f"{wheel.name}: none of {[k for k, n in counts.items() if not n]}")
    stray = sorted(n for n in names if n.split("/")[0] in {"tests", "bench", "plugin", "docs"})
    if stray:
        raise SmokeError(f"{wheel.name} holds what is not the package: {stray[:5]}")
    return f"{wheel.name}, {len(names)} files: " + ", ".join(f"{n} {k}" for k, n in counts.items())


def sdist_holds_every_package_file(dist: Path) -> str:
    [sdist] = dist.glob("clawback-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    wanted = [*tracked_package_files(), "pyproject.toml", "README.md"]
    missing = sorted(path for path in wanted if path not in names)
    if missing:
        raise SmokeError(f"{sdist.name} lacks {len(missing)} files: {', '.join(missing[:8])}")
    return f"{sdist.name}, {len(names)} files"


def version_is_the_packages() -> str:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    said = run("--version").strip()
    module = subprocess.run(
        [sys.executable, "-m", "clawback", "--version"], capture_output=True, text=True,
        timeout=TIMEOUT,
    ).stdout.strip()  # fmt: skip
    expected = f"clawback, version {declared}"
    if said != expected or module != expected or version("clawback") != declared:
        raise SmokeError(
            f"pyproject says {declared}, the install {version('clawback')}: {said!r}, {module!r}"
        )
    return f"{said} (and python -m clawback)"


def the_install_is_not_the_checkout() -> str:
    import clawback.core

    where = Path(clawback.core.__file__).resolve()
    if Path(sys.prefix).resolve() not in where.parents:
        raise SmokeError(f"clawback.core does not come from this venv: {where}")
    return str(where.parent)


def demo_draws_its_first_screen(home: Path, shots: Path) -> str:
    """``clawback demo`` itself, with Textual's headless driver and its screenshot timer (the
    app saves its screen after the delay and exits): no terminal needed."""
    run("demo", env={
        "CLAWBACK_HOME": str(home),
        "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver",
        "TEXTUAL_SCREENSHOT": str(FIRST_SCREEN_S),
        "TEXTUAL_SCREENSHOT_LOCATION": str(shots),
        "TEXTUAL_SCREENSHOT_FILENAME": "first-screen.svg",
    })  # fmt: skip
    svg = shots / "first-screen.svg"
    if not svg.is_file():
        raise SmokeError("the app saved no screenshot")
    text = html.unescape("".join(re.findall(r"<text[^>]*>(.*?)</text>", svg.read_text())))
    text = text.replace("\xa0", " ")
    expected = ["Sessions", "Choosing the search index", "6 sessions", "Quit"]
    absent = [part for part in expected if part not in text]
    if absent:
        raise SmokeError(f"the first screen lacks {absent}; it shows: {text[:400]!r}")
    return f"{svg} shows the demo's 6 sessions"


def search_finds_the_demo(home: Path) -> str:
    demo = Path(run("demo", "--ingest-only", env={"CLAWBACK_HOME": str(home)}).strip())
    hits = json.loads(run("--home", str(demo), "search", "sqlite", "--json"))
    if not hits or not any("sqlite" in json.dumps(hit).lower() for hit in hits):
        raise SmokeError(f"no hit for 'sqlite' in the demo archive: {hits!r:.300}")
    return f"{len(hits)} hits for 'sqlite'"


def mcp_answers_a_tool_call(home: Path) -> str:
    """A client's first exchange: initialize, then one memory_search call, each answer awaited
    before the next line (the server ends at end of input, dropping what is still running)."""
    demo = Path(run("demo", "--ingest-only", env={"CLAWBACK_HOME": str(home)}).strip())
    server = subprocess.Popen(
        [CLAWBACK, "--home", str(demo), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    watchdog = threading.Timer(TIMEOUT, server.kill)
    watchdog.start()

    def send(*messages: dict[str, object]) -> dict[str, object]:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        server.stdin.flush()
        wanted = messages[-1]["id"]
        for line in server.stdout:
            answer: dict[str, object] = json.loads(line)
            if answer.get("id") == wanted:
                return answer
        raise SmokeError(f"the server ended without answering request {wanted}")

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "smoke", "version": "1"}}})  # fmt: skip
        called = send(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "memory_search", "arguments": {"query": "sqlite", "max_results": 3}}},
        )  # fmt: skip
    finally:
        server.stdin.close()
        server.wait(timeout=TIMEOUT)
        watchdog.cancel()
    result = called.get("result")
    found = result.get("structuredContent", {}).get("results") if isinstance(result, dict) else None
    if not found:
        raise SmokeError(f"memory_search found nothing for 'sqlite': {called!r:.400}")
    return f"memory_search answered with {len(found)} hits; the server exited {server.returncode}"


def main() -> None:
    dist = Path(sys.argv[1]).resolve()
    work = Path(tempfile.mkdtemp(prefix="clawback-smoke-"))
    home = work / "home"
    steps: list[tuple[str, Callable[[], str]]] = [
        ("the installed package, not the checkout", the_install_is_not_the_checkout),
        ("the wheel holds every package file", lambda: wheel_holds_every_package_file(dist)),
        ("the sdist holds every package file", lambda: sdist_holds_every_package_file(dist)),
        ("clawback --version", version_is_the_packages),
        ("clawback demo draws its first screen", lambda: demo_draws_its_first_screen(home, work)),
        ("clawback search on the demo", lambda: search_finds_the_demo(home)),
        ("clawback mcp answers a tool call", lambda: mcp_answers_a_tool_call(home)),
    ]
    try:
        for name, step in steps:
            check(name, step)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"smoke: {len(steps)} passed, 0 failed")


if __name__ == "__main__":
    main()
