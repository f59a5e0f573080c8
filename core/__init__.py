"""clawback's core library: the archive (parsers, ingestion, index, search) and the chat engine.

This package is plain Python. It must never import textual or anything under ``clawback.tui``:
the terminal app is one client of the core, the CLI and the tests are others.
"""

import os
import sys


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata only when asked: the name of the
    ``clawback-<version>.dist-info`` folder on ``sys.path``, which ``importlib.metadata``
    would read too after 15-40 ms of imports (the memory server's handshake carries it)."""
    if name != "__version__":
        raise AttributeError(name)
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for found in names:
            if found.startswith("clawback-") and found.endswith(".dist-info"):
                return found[len("clawback-") : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("clawback")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "0.0.0"
