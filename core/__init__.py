"""clawback's core library: the archive (parsers, ingestion, index, search) and the chat engine.

This package is plain Python. It must never import textual or anything under ``clawback.tui``:
the terminal app is one client of the core, the CLI and the tests are others.
"""

import os
import sys


class _SqliteUtilsWithoutNumpy:
    """Lets sqlite-utils load without numpy, which it imports (when installed) only to convert
    numpy values on insert, an API clawback never uses. That import was about half of what
    opening a home cost at start-up (60 ms of `clawback ingest`'s 120 ms of imports), and a
    Claude Code hook pays it on every prompt. numpy is refused only while ``sqlite_utils.db``
    is being executed; the embeddings import it as usual, before or after. A plain class, not
    an ``importlib.abc.MetaPathFinder``: importing that took 10-35 ms of every command's start.
    """

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        loading = sys.modules.get("sqlite_utils.db")
        if name == "numpy" and loading is not None and not hasattr(loading, "Database"):
            raise ImportError("numpy is not loaded for sqlite-utils (see clawback.core)")
        return None


if not any(isinstance(finder, _SqliteUtilsWithoutNumpy) for finder in sys.meta_path):
    sys.meta_path.insert(0, _SqliteUtilsWithoutNumpy())


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
