"""What every clawback process sets up first, before it imports anything heavy.

Called by each entry point (the console script, and so the CLI, the app, the hooks, the memory
server and the warm process; the benches do the same), never on import: a library embedding the
core decides these for its own process.

- BLAS runs one thread. A nearest-neighbour search is one memory-bound matrix-vector product,
  and a second BLAS thread only fights the process's own threads (docs/embeddings.md). Set before
  numpy can be imported; a value the person set is kept.
- sqlite-utils loads without numpy, which it imports (when installed) only to convert numpy
  values on insert, an API clawback never uses: that import was about half of what opening a home
  cost, on every hook. numpy is refused only while ``sqlite_utils.db`` is being executed; the
  embeddings import it as usual, before or after.

Only ``os`` and ``sys`` here: a hook the warm process answers loads this and little else.
"""

from __future__ import annotations

import os
import sys

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class _SqliteUtilsWithoutNumpy:
    """A plain class, not an ``importlib.abc.MetaPathFinder``: importing that took 10-35 ms of
    every command's start."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        loading = sys.modules.get("sqlite_utils.db")
        if name == "numpy" and loading is not None and not hasattr(loading, "Database"):
            raise ImportError("numpy is not loaded for sqlite-utils (see clawback.core.startup)")
        return None


def prepare_process() -> None:
    """Set this process up as a clawback command (idempotent)."""
    for variable in BLAS_THREADS:
        os.environ.setdefault(variable, "1")
    if not any(isinstance(finder, _SqliteUtilsWithoutNumpy) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SqliteUtilsWithoutNumpy())
