"""Keeping a long-running process (``watch``, ``clawback mcp``, the app) on the index it opened.

Two things can happen to the files under a process that holds the index open for hours:

- The shared-memory file (``clawback.db-shm``) is cut short. SQLite maps that file into memory,
  and touching a mapped page past the new end of the file raises SIGBUS, which kills the process
  with no message. :func:`guard_bus_errors` catches that signal and grows the file back to the
  size it had (zeros, which SQLite reads as "rebuild the log index"), so the read that faulted
  goes on; if there is nothing to mend it prints one line and exits instead. :meth:`IndexFile.mend`
  does the same mending before each unit of work, which is where it nearly always happens.
- The index is deleted or replaced by another file. Its old inode stays readable for whoever
  has it open, so a process would go on writing to (or answering from) a file no one else sees.
  :meth:`IndexFile.changed` notices, so the caller reopens the index by its path.

This module changes no database content; it only grows a shared-memory file back.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import os
import signal
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawback.core.db import connect_reader
from clawback.core.errors import ClawbackError

__all__ = ["FollowingReader", "IndexFile", "guard_bus_errors"]

#: why a file is no longer the index it was, though it is still there
CUT = "cut to 0 bytes"
#: what a cut ``-shm`` grows back to at least: its first regions (32 KiB each), sparse zeros
MEND_BYTES = 1024 * 1024
_MEND_LIMIT = 8  # faults in a row with nothing left to mend: give up with one line


@dataclass
class IndexFile:
    """The index file a process opened, as it was when opened (or last reopened)."""

    path: Path
    identity: tuple[int, int] | None = None  # (device, inode) when opened
    had_pages: bool = False  # not an empty file when opened
    shm_bytes: int = 0  # the largest size of the -shm file seen

    def __post_init__(self) -> None:
        self.opened()

    @property
    def shm(self) -> Path:
        return Path(f"{self.path}-shm")

    def opened(self) -> None:
        """Record the file as it is now (call after opening or reopening the connection)."""
        self.identity = _identity(self.path)
        self.had_pages = _size(self.path) > 0
        self.shm_bytes = max(self.shm_bytes, _size(self.shm))
        _GUARDED[str(self.path)] = self

    def changed(self) -> str | None:
        """Why the path no longer names the file that was opened ("removed", "replaced",
        :data:`CUT`), or ``None`` while it does."""
        now = _identity(self.path)
        if now != self.identity:
            return "removed" if now is None else "replaced"
        if self.had_pages and _size(self.path) == 0:
            return CUT
        return None

    def mend(self) -> bool:
        """Grow a cut ``-shm`` back to the size seen (at least :data:`MEND_BYTES`); ``True``
        when it had been cut. Safe from a signal handler: one stat and one truncate."""
        size = _size(self.shm)
        if size >= self.shm_bytes and size > 0:
            self.shm_bytes = size
            return False
        if not self.shm.exists():
            return False
        try:
            os.truncate(self.shm, max(self.shm_bytes, MEND_BYTES))
        except OSError:
            return False
        self.shm_bytes = max(self.shm_bytes, MEND_BYTES)
        return True


class FollowingReader:
    """A read connection that stays on the index at its path (the MCP server's): before each
    query it mends a cut ``-shm`` and, when the file was removed or replaced, reopens it."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.index = IndexFile(path)
        self.conn = conn

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.follow()
        return self.conn.execute(sql, parameters)

    def follow(self) -> None:
        """Mend, and reopen if the file changed; a removed index is one clear error until a
        new one is there (``clawback watch`` or ``ingest`` makes it)."""
        self.index.mend()
        why = self.index.changed()
        if why is None:
            return
        fresh = None if why == CUT else connect_reader(self.index.path)
        if fresh is None:
            raise ClawbackError(
                f"The index {self.index.path} was {why} and no complete one is there yet:"
                " run `clawback reindex` (or keep `clawback watch` running) to rebuild it."
            )
        fresh.execute("PRAGMA query_only = ON")
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        self.conn = fresh
        self.index.opened()

    def close(self) -> None:
        self.conn.close()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


_GUARDED: dict[str, IndexFile] = {}
_HANDLER: list[object] = []  # the installed C callback, kept alive
_faults_in_a_row = 0


def _on_bus_error(signum: int) -> None:
    """SIGBUS: mend what was cut and return, so the faulting read runs again; when there is
    nothing to mend, a few tries (another thread may be mending), then one line and exit."""
    global _faults_in_a_row
    mended = any([guarded.mend() for guarded in list(_GUARDED.values())])
    _faults_in_a_row = 0 if mended else _faults_in_a_row + 1
    if _faults_in_a_row < _MEND_LIMIT:
        return
    names = ", ".join(f"{name}-shm" for name in _GUARDED) or "a file mapped in memory"
    line = (
        f"clawback: stopped: {names} was cut short under this process and could not be"
        " mended (bus error); start it again.\n"
    )
    with contextlib.suppress(OSError):
        os.write(2, line.encode())
    os._exit(128 + signal.SIGBUS)


def guard_bus_errors() -> bool:
    """Catch SIGBUS in this process (once): mend cut ``-shm`` files, or exit with one line.

    Only for long-running processes that hold the index open; ``False`` where the platform
    offers no way (no ``signal`` in the C library, or no SIGBUS).
    """
    if _HANDLER:
        return True
    if not hasattr(signal, "SIGBUS") or sys.platform == "win32":
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name, use_errno=True)
    handler_type = ctypes.CFUNCTYPE(None, ctypes.c_int)
    handler = handler_type(_on_bus_error)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = [ctypes.c_int, handler_type]
    libc.signal(int(signal.SIGBUS), handler)
    _HANDLER.append(handler)
    # Connections the interpreter closes as it shuts down touch the file too, when no Python
    # can run any more: mend once more before that.
    atexit.register(_mend_all)
    return True


def _mend_all() -> None:
    for guarded in list(_GUARDED.values()):
        guarded.mend()
