"""A command imports only what it uses: ``clawback search`` pays for no chat, memory or UI code.

Start-up is most of a search's time, and one stray top-level import (a type used only in an
annotation, a helper module that pulls in sqlite-utils) undoes the lazy CLI without any other
test noticing. This runs a real search in a fresh interpreter and lists what it imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..cli_runner import run_cli
from ..helpers import cc_user, write_lines

#: What a keyword search must not import (packages, with everything under them).
NOT_FOR_SEARCH = (
    "clawback.core.chat",
    "clawback.core.memory",
    "clawback.tui",
    "textual",
    "rich",
    "sqlite_utils",
)

SEARCH_THEN_LIST_MODULES = """\
import json, sys
from clawback.cli.main import cli
cli.main(["search", "tangerine", "--json"], standalone_mode=False)
print(json.dumps(sorted(sys.modules)))
"""


def test_search_imports_no_chat_memory_ui_rich_or_sqlite_utils(tmp_path: Path) -> None:
    write_lines(tmp_path / "src" / "proj" / "s1.jsonl", [cc_user("s1", "u1", "tangerine plan")])
    home = tmp_path / "home"
    ingested = run_cli("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home)
    assert ingested.returncode == 0, ingested.stderr

    done = subprocess.run(
        [sys.executable, "-c", SEARCH_THEN_LIST_MODULES],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
        env={**os.environ, "CLAWBACK_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    hits, _, modules = done.stdout.rstrip("\n").rpartition("\n")
    assert [hit["session_id"] for hit in json.loads(hits)] == ["s1"]  # a real search ran
    imported = json.loads(modules)
    assert "clawback.cli.search" in imported
    unwanted = [
        name
        for name in imported
        if any(name == root or name.startswith(root + ".") for root in NOT_FOR_SEARCH)
    ]
    assert unwanted == []


#: What ``clawback ingest`` with nothing to do must not import: the services a home can build
#: (chat, claude, memory lifecycle, hooks, MCP), the UI, and the health report.
NOT_FOR_INGEST = (
    "clawback.core.chat",
    "clawback.core.claude",
    "clawback.core.memory.compaction",
    "clawback.core.memory.flush",
    "clawback.core.memory.librarian",
    "clawback.core.memory.facts",
    "clawback.core.hooks",
    "clawback.core.mcp",
    "clawback.core.search",
    "clawback.core.ingest.health",
    "clawback.tui",
    "textual",
    "numpy",  # sqlite-utils would import it, for an API clawback never uses (core/startup.py)
)

INGEST_THEN_LIST_MODULES = """\
import json, sys
from clawback.core.startup import prepare_process
prepare_process()  # what the console script does first
from clawback.cli.main import cli
cli.main(["ingest"], standalone_mode=False)
print(json.dumps(sorted(sys.modules)))
"""


def test_an_unchanged_ingest_imports_only_what_it_uses(tmp_path: Path) -> None:
    """Issue 22: an ingest with nothing to do took 0.35 s, 0.03 s of it the work: it imported
    the chat engine and the memory services before it knew it needed them."""
    imported = _modules_of_an_unchanged_ingest(tmp_path)
    unwanted = [
        name
        for name in imported
        if any(name == root or name.startswith(root + ".") for root in NOT_FOR_INGEST)
    ]
    assert unwanted == []


def test_an_unchanged_ingest_loads_no_rich_and_looks_for_no_plugins(tmp_path: Path) -> None:
    """Issue 32 item 3: an unchanged ingest printed its one line through rich and let
    sqlite-utils read every installed package's metadata looking for plugins."""
    imported = _modules_of_an_unchanged_ingest(tmp_path)
    assert [m for m in imported if m in ("rich", "importlib.metadata")] == []


VERSION_THEN_LIST_MODULES = """\
import json, sys
from clawback.cli.entry import main
main(["--version"])
print(json.dumps(sorted(sys.modules)))
"""


def test_version_is_answered_without_click() -> None:
    from importlib.metadata import version

    done = subprocess.run(
        [sys.executable, "-c", VERSION_THEN_LIST_MODULES],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    said, _, modules = done.stdout.rstrip("\n").rpartition("\n")
    assert said == f"clawback, version {version('clawback')}"  # as click's --version says it
    assert [m for m in json.loads(modules) if m == "click" or m.startswith("click.")] == []


HOOK_THEN_LIST_MODULES = """\
import json, sys
sys.argv = ["clawback", "--home", sys.argv[1], "hook", "stop"]
from clawback.cli.entry import main
main()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

#: What a hook the warm process answers must not import: it is a bare Python start plus a
#: socket round trip (issue 32, item 2)
NOT_FOR_A_THIN_HOOK = (
    "click",
    "clawback.core.config",
    "clawback.core.hooks.run",
    "clawback.core.paths",
    "dataclasses",
    "sqlite3",
    "pathlib",
    "typing",
)


def test_a_hook_the_warm_process_answers_imports_only_the_client(tmp_path: Path) -> None:
    import threading

    from clawback.core.paths import Paths
    from clawback.core.warm.server import serve, socket_path, stop

    from ..helpers import wait_until

    paths = Paths.resolve(tmp_path / "home").ensure()
    asked: list[dict[str, object]] = []

    def answer(request: dict[str, object]) -> dict[str, object]:
        asked.append(request)
        return {"output": ""}

    server = threading.Thread(target=serve, args=(paths, answer), kwargs={"idle_s": 60})
    server.start()
    try:
        wait_until(lambda: socket_path(paths).exists(), "the socket")  # type: ignore[union-attr]
        event = {"session_id": "s", "transcript_path": "", "cwd": "/w", "hook_event_name": "Stop"}
        done = subprocess.run(
            [sys.executable, "-c", HOOK_THEN_LIST_MODULES, str(paths.home)],
            input=json.dumps(event), capture_output=True, text=True, timeout=60, check=True,
            env={k: v for k, v in os.environ.items() if k != "CLAWBACK_WARM"},
        )  # fmt: skip
    finally:
        stop(paths)
        server.join(10)
    assert [request["hook"] for request in asked] == ["stop"]  # the warm process answered it
    imported = json.loads(done.stderr)
    unwanted = [
        name
        for name in imported
        if any(name == root or name.startswith(root + ".") for root in NOT_FOR_A_THIN_HOOK)
    ]
    assert unwanted == []


def _modules_of_an_unchanged_ingest(tmp_path: Path) -> list[str]:
    """The modules a second ``clawback ingest`` of one unchanged transcript imported."""
    projects = tmp_path / "projects"
    write_lines(projects / "proj" / "s1.jsonl", [cc_user("s1", "u1", "tangerine plan")])
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    assert run_cli("ingest", home=home).returncode == 0
    done = subprocess.run(
        [sys.executable, "-c", INGEST_THEN_LIST_MODULES],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
        env={**os.environ, "CLAWBACK_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary, _, modules = done.stdout.rstrip("\n").rpartition("\n")
    assert "1 unchanged" in summary  # the ingest ran, and found nothing to do
    imported: list[str] = json.loads(modules)
    return imported
