"""What a failing SQLite file means for a person, and setting a damaged file aside.

Both of clawback's databases are indexes that can be rebuilt (the index from the transcripts,
the vector store from the index), so the right answer to damage is to move the file out of the
way and rebuild, never to stop every command; and the right answer to a full disk, a read-only
home or another process holding the lock is one line that names that cause, not SQLite's
"disk I/O error" or "unable to open database file". :func:`explain` turns an error into that
line, :func:`is_damaged` says whether a file must be set aside, :func:`set_aside` does it.

This module never deletes anything: a damaged file is renamed beside itself, where a person
(or ``reindex``, for what only a person wrote) can still read what is left of it.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import time
from pathlib import Path

__all__ = [
    "cannot_write_in",
    "explain",
    "find_damage",
    "is_damaged",
    "is_index_fault",
    "set_aside",
    "set_aside_files",
]

_CORRUPT, _NOTADB = 11, 26
_READONLY, _CANTOPEN = 8, 14
_FULL, _IOERR = 13, 10
_BUSY, _LOCKED = 5, 6
_IOERR_SHORT_READ = _IOERR | (2 << 8)
_LOW_SPACE = 1024 * 1024  # less free than this: a write that failed failed for want of room
_SIDE_FILES = ("-wal", "-shm")


def _code(exc: BaseException) -> int:
    """SQLite's primary result code of ``exc`` (0 when it carries none)."""
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def is_damaged(exc: BaseException) -> bool:
    """Whether ``exc`` says the file's contents are broken (not locked, full or unreadable)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if _code(exc) in (_CORRUPT, _NOTADB):
        return True
    text = str(exc)
    return "malformed" in text or "not a database" in text


def is_index_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is the database failing (full, read-only, locked, damaged, I/O) rather
    than something about the data written to it: then no other file or row will fare better."""
    return isinstance(exc, sqlite3.Error) and (
        is_damaged(exc) or _code(exc) in (_READONLY, _CANTOPEN, _FULL, _IOERR, _BUSY, _LOCKED)
    )


def find_damage(conn: sqlite3.Connection) -> str | None:
    """SQLite's first complaint about the open file's pages, or ``None`` when they are sound.

    ``PRAGMA quick_check`` reads every page (a second or so per gigabyte): for a rebuild or a
    writer's start, not for every search.
    """
    try:
        found = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        if is_damaged(exc):
            return " ".join(str(exc).split())
        raise
    if found == ["ok"]:
        return None
    said = [line for line in "\n".join(found).splitlines() if not line.startswith("***")]
    return f"database disk image is malformed: {said[0] if said else found[0]}"


def cannot_write_in(folder: Path) -> bool:
    """Whether nothing can be written in ``folder`` (a read-only mount, or no permission)."""
    probe = folder / f".clawback-write-probe-{os.getpid()}"
    try:
        probe.touch()
    except OSError as exc:
        return exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    probe.unlink(missing_ok=True)
    return False


def _disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < _LOW_SPACE
    except OSError:
        return False


def explain(exc: BaseException, path: Path | None = None) -> str:
    """One line for the person: what went wrong with the database at ``path``, and what to do.

    Read-only homes, full disks, damage and another process's lock each get their own line;
    anything else keeps SQLite's own words.
    """
    name = str(path) if path is not None else "the index"
    folder = path.parent if path is not None else None
    code = _code(exc)
    text = " ".join(str(exc).split())
    if is_damaged(exc):
        return (
            f"{name} is damaged ({text}). Run `clawback reindex`: it sets the file aside and"
            " rebuilds the index from the transcripts, keeping labels and edited facts it can"
            " still read."
        )
    if getattr(exc, "sqlite_errorcode", 0) == _IOERR_SHORT_READ:
        return (
            f"{name}: its write-ahead log ({name}-wal) is shorter than the index expects, as"
            " when it is cut under a running clawback (watch, mcp, the app): stop those and"
            " run the command again; if it persists, run `clawback reindex`."
        )
    if code == _FULL or (folder is not None and code == _IOERR and _disk_full(folder)):
        return (
            f"the disk holding {name} is full: free some space and run the command again"
            " (what was written before is kept; the next run goes on from there)."
        )
    if (
        code == _READONLY
        or "readonly database" in text
        or (folder is not None and code in (_CANTOPEN, _IOERR) and cannot_write_in(folder))
    ):
        return (
            f"{folder or name} is read-only: clawback can search and show what is indexed, but"
            " ingesting, chatting and embedding need a home it can write to."
        )
    if code in (_BUSY, _LOCKED) or "locked" in text:
        return (
            f"{name} is locked by another process (an ingest, `watch`, `embed` or the app)"
            " that has held it for too long: try again when it has finished."
        )
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return f"the disk holding {name} is full: free some space and run the command again."
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return (
            f"{folder or name} is read-only: clawback can search and show what is indexed, but"
            " ingesting, chatting and embedding need a home it can write to."
        )
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
        return (
            f"{folder or name} cannot be written by you ({exc.strerror}): clawback can search and"
            " show what is indexed, but ingesting, chatting and embedding need a home it can"
            " write to."
        )
    if isinstance(exc, OSError):
        return f"{name}: {exc.strerror or exc}"
    return f"database {name}: {text}"


def set_aside(path: Path) -> Path:
    """Rename a damaged database (and its WAL and shared-memory files) beside itself.

    Returns the new name, ``<name>.damaged-<UTC time>``; the next open creates a fresh file.
    """
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    serial = 1
    while target.exists():
        serial += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{serial}")
    for suffix in _SIDE_FILES:  # the log first: a lone WAL must never meet a fresh file
        side = Path(str(path) + suffix)
        if side.exists():
            os.replace(side, Path(str(target) + suffix))
    if path.exists():
        os.replace(path, target)
    return target


def set_aside_files(folder: Path) -> list[Path]:
    """The damaged files :func:`set_aside` left in ``folder`` (not their log and index files),
    oldest first: ``health`` names them until a person deletes them."""
    found = [
        path
        for path in folder.glob("*.damaged-*")
        if not path.name.endswith(_SIDE_FILES) and path.is_file()
    ]
    return sorted(found, key=lambda path: path.name.rsplit(".damaged-", 1)[1])
