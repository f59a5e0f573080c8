"""What the benches timing whole ``clawback`` processes share: clawback's bytecode written as an
installed copy has it, and waiting until the warm process listens."""

from __future__ import annotations

import compileall
import time

from clawback.core.paths import Paths
from clawback.core.warm.server import running, socket_path


def compile_clawback() -> None:
    """Write the bytecode of clawback's own modules, as pip does when it installs them: a bench
    that recompiled on every start would time the compiler."""
    import clawback.cli
    import clawback.core

    for package in [*clawback.core.__path__, *clawback.cli.__path__]:
        compileall.compile_dir(package, quiet=1)


def wait_for_warm(paths: Paths, seconds: float = 60) -> bool:
    """Whether the home's warm process runs and listens within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        listening = socket_path(paths)
        if running(paths) and listening is not None and listening.exists():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
