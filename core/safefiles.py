"""Reading and replacing files clawback does not own, without losing, following or hanging.

A person's files (Claude Code's settings, transcripts) and clawback's own side files may be
anything by the time clawback opens them: a FIFO (opening it for reading waits for a writer for
ever), a link to ``/dev/zero`` (reading it never ends), a file of gigabytes, a symlink into a
dotfiles repository, read-only. :func:`read_regular` reads regular files only and never more than
it was told; :func:`replace_through` writes a file where its symlinks lead, atomically;
:func:`set_aside` and :func:`keep_bytes` keep a backup under a name no other backup holds, so a
second run in the same second never replaces the first one's.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from clawback.core.errors import ClawbackError
from clawback.core.paths import PRIVATE_FILE

BACKUP_INFIX = ".clawback-backup-"


class FileRefused(ClawbackError):
    """A file clawback will not read or write as it is; the message says why, in words."""


def read_regular(path: Path, limit: int, *, what: str = "", head: bool = False) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed): at most ``limit``.

    A file larger than ``limit`` is refused, or with ``head`` only its first ``limit`` bytes
    are read. A FIFO, a device or a folder is refused without waiting for it: the file is
    opened non-blocking and checked before any byte is read. ``FileNotFoundError`` passes
    through (a missing file is often fine); every other failure is a :class:`FileRefused`.
    """
    name = what or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FileRefused(f"{name}: cannot read: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{name}: {_kind(info.st_mode)}, not a regular file; left alone")
        if info.st_size > limit and not head:
            raise FileRefused(
                f"{name}: {info.st_size:,} bytes, more than the {limit:,} clawback reads;"
                " left alone"
            )
        chunks, left = [], limit + (0 if head else 1)
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise FileRefused(f"{name}: cannot read: {_reason(exc)}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # it grew while being read
        raise FileRefused(f"{name}: more than the {limit:,} bytes clawback reads; left alone")
    return data


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def resolved_target(path: Path) -> Path:
    """Where ``path`` leads through every symlink (itself when it is not one).

    A link loop, or a link through something that is not a folder, is refused.
    """
    if not path.is_symlink():
        return path
    try:
        return Path(os.path.realpath(path, strict=False))
    except (OSError, RuntimeError) as exc:
        raise FileRefused(f"{path}: a symlink that leads nowhere usable ({exc})") from None


def replace_through(path: Path, data: bytes, *, mode: int | None = None) -> Path:
    """Replace the file ``path`` leads to with ``data``, atomically; returns that file.

    A symlink (a dotfiles setup) stays a symlink: the temporary file is written beside the
    link's target and renamed over it, so readers of either name see the old bytes or the new,
    never half. The file keeps its permission bits (``mode`` for a new one, else private); one
    that is not a regular file is refused.
    """
    target = resolved_target(path)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise FileRefused(f"{path}: {_kind(info.st_mode)}, not a regular file; left alone")
    keep = stat.S_IMODE(info.st_mode) if info is not None else (mode or PRIVATE_FILE)
    if not target.parent.is_dir():
        raise FileRefused(f"{path}: the folder {target.parent} does not exist")
    fd, temp = _new_temp(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), keep)
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return target


def _new_temp(beside: Path) -> tuple[int, Path]:
    """A new private file beside ``beside`` (a hidden name nothing else uses), open to write."""
    while True:
        temp = beside.with_name(f".{beside.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE), temp
        except FileExistsError:
            continue


def backup_names(path: Path, stamp: str | None = None) -> Callable[[int], Path]:
    """The n-th candidate name of a backup of ``path``: ``<name>.clawback-backup-<time>``,
    then ``-2``, ``-3``... for more in the same second."""
    stamp = stamp or time.strftime("%Y%m%dT%H%M%S")
    base = f"{path.name}{BACKUP_INFIX}{stamp}"
    return lambda n: path.with_name(base if n == 1 else f"{base}-{n}")


def _link_to_a_free_name(source: Path, names: Callable[[int], Path]) -> Path:
    """Hard-link ``source`` (itself, not where a symlink leads) to the first free name.

    ``os.link`` fails when the name is taken, even by a file that appeared a moment ago, so two
    runs racing for one name both keep their backup.
    """
    for n in range(1, 10_000):
        name = names(n)
        try:
            os.link(source, name, follow_symlinks=False)
        except FileExistsError:
            continue
        return name
    raise FileRefused(f"{source}: too many backups beside it already; move some away")


def set_aside(path: Path) -> Path:
    """Move the file (or symlink) at ``path`` to a backup name no other file holds; returns it."""
    backup = _link_to_a_free_name(path, backup_names(path))
    os.unlink(path)
    return backup


def keep_bytes(path: Path, data: bytes) -> Path:
    """Keep ``data`` (a file's bytes before clawback changed it) as a new private backup
    beside ``path``; never replaces an older backup."""
    fd, temp = _new_temp(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), PRIVATE_FILE)
            os.fsync(handle.fileno())
        return _link_to_a_free_name(temp, backup_names(path))
    finally:
        temp.unlink(missing_ok=True)


def is_read_only(path: Path) -> bool:
    """Whether a person made ``path`` read-only (no write bit for its owner), which clawback
    honours even where it could write anyway (as root, or by replacing the file)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return False
        raise
    return not info.st_mode & stat.S_IWUSR
