"""The single-writer lock shared by every clawback process on one home, and the small
non-blocking locks that say "one of these per home" (a warm process, a memory flush).

SQLite's WAL already serialises writes, but ingestion must also decide *what* to write from the
file's state in the database; two processes doing that at once would both read offset 0 and both
import the same lines. Holding this lock from reading the state to committing it makes the
decision and the write one step. It is an advisory ``flock``, released by the kernel when a
process dies, so a ``kill -9`` never leaves it stuck.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from clawback.core.paths import PRIVATE_FILE, ensure_private_dir


class WriterLock:
    """Re-entrant within one object; blocks across processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._depth = 0

    def __enter__(self) -> WriterLock:
        if self._depth == 0:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._fd = fd
        self._depth += 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


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
