"""How clawback starts its own work apart: the one command that runs this clawback, and
:func:`spawn`, which starts it detached. A hook's ingest or flush job and the warm process a hook,
a search or a chat turn starts all go through here, so every layer reaches one definition.
Never for ``claude`` itself: its runner keeps its children (pipes, deadlines, process groups).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from clawback.core.paths import HOME_ENV, Paths

SCRIPT = "clawback"


def clawback_command() -> list[str]:
    """The absolute command that runs this clawback: its console script, else ``python -m``.

    The script beside the running interpreter is preferred over ``PATH``: it is the clawback
    this process belongs to (a venv's, pipx's), even when another one comes first on ``PATH``.
    """
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    candidates = [
        here if here is not None and here.name == SCRIPT else None,
        Path(sys.executable).parent / SCRIPT,
        Path(found) if (found := shutil.which(SCRIPT)) else None,
    ]
    for candidate in candidates:
        if candidate is not None and candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate.resolve())]
    return [str(Path(sys.executable).resolve()), "-m", "clawback.cli"]


def spawn(paths: Paths, *args: str) -> None:
    """Start ``clawback --home H <args>`` detached: own session, no stdin/stdout/stderr, and the
    hooks switched off for anything it runs (it must never answer a hook of its own)."""
    argv = [*clawback_command(), "--home", str(paths.home), *args]
    subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env={**os.environ, HOME_ENV: str(paths.home), "CLAWBACK_HOOKS": "0"},
    )
