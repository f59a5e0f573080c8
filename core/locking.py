"""The single-writer lock shared by every clawback process on one home.

SQLite's WAL already serialises writes, but ingestion must also decide *what* to write from the
file's state in the database; two processes doing that at once would both read offset 0 and both
import the same lines. Holding this lock from reading the state to committing it makes the
decision and the write one step. It is an advisory ``flock``, released by the kernel when a
process dies, so a ``kill -9`` never leaves it stuck.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from clawback.core.paths import PRIVATE_FILE


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
