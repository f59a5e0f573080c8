"""Where the locks of one memory flush per session live, and whether one runs.

Kept apart from the jobs that take them, so a hook that only asks (the brief waiting for this
session's flush) imports nothing else. The locks themselves are :mod:`clawback.core.locking`'s.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from clawback.core.locking import lock_free
from clawback.core.paths import Paths

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
PENDING_S = 30.0  # a job that has not started by then is not coming


def flush_lock(paths: Paths, session_id: str) -> Path:
    return paths.hooks / "flush" / f"{_SAFE.sub('_', session_id)}.lock"


def flush_state(paths: Paths, session_id: str) -> Path:
    return paths.hooks / "flush" / f"{_SAFE.sub('_', session_id)}.json"


def flush_pending(paths: Paths, session_id: str) -> Path:
    """Marks a flush asked for and not finished: the job apart takes its lock only once its
    process has started, and a brief after the compaction must not miss it in between."""
    return paths.hooks / "flush" / f"{_SAFE.sub('_', session_id)}.pending"


def flush_running(paths: Paths, session_id: str) -> bool:
    """A flush of the session runs, or was asked for less than :data:`PENDING_S` ago."""
    if not lock_free(flush_lock(paths, session_id)):
        return True
    try:
        return time.time() - flush_pending(paths, session_id).stat().st_mtime < PENDING_S
    except OSError:
        return False
