"""A process is set up by its entry point, never by an import (issue 37 item 4).

Importing ``clawback.core`` (or its embeddings) changes nothing in the importing process: a
library embedding the core keeps its own BLAS threads and import machinery. The console script
sets both up first: one BLAS thread (a person's own value kept), and sqlite-utils without numpy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

REPORT = """\
import json, os, sys
{before}
import sqlite_utils
print(json.dumps({{
    "blas": [os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")],
    "finders": [type(f).__name__ for f in sys.meta_path],
    "numpy": "numpy" in sys.modules,
}}))
"""


def _report(before: str, **env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", REPORT.format(before=before)],
        capture_output=True, text=True, timeout=60, check=True, env={**clean, **env},
    )  # fmt: skip
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_core_sets_nothing_up() -> None:
    found = _report("import clawback.core, clawback.core.embeddings, clawback.core.db")
    assert found["blas"] == [None, None, None]
    assert "_SqliteUtilsWithoutNumpy" not in found["finders"]  # type: ignore[operator]


def test_the_console_script_sets_the_process_up_first() -> None:
    found = _report("from clawback.cli.entry import main\nmain(['--version'])")
    assert found["blas"] == ["1", "1", "1"]
    assert found["numpy"] is False  # sqlite-utils loaded without it


def test_a_persons_own_blas_threads_are_kept() -> None:
    found = _report(
        "from clawback.cli.entry import main\nmain(['--version'])", OPENBLAS_NUM_THREADS="4"
    )
    assert found["blas"] == ["4", "1", "1"]
