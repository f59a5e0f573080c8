"""The small locks hooks share: a writer busy elsewhere, one memory flush per session.

Kept apart from the jobs that take them, so a hook that only asks (the brief waiting for this
session's flush) imports nothing else.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

from clawback.core.paths import PRIVATE_FILE, Paths, ensure_private_dir

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
PENDING_S = 30.0  # a job that has not started by then is not coming


def lock_free(path: Path) -> bool:
    """Whether nobody holds the ``flock`` on ``path`` right now."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


@contextlib.contextmanager
def held(path: Path) -> Iterator[bool]:
    """Hold the ``flock`` on ``path`` if nobody else does (yields whether it is held)."""
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


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
