"""Memory markdown files: ``MEMORY.md`` and ``memory/YYYY-MM-DD.md`` in the workspace.

People edit these by hand and the memory flush appends to them, so every write is careful: an
atomic replace that keeps the previous version as ``.bak`` (itself written atomically), deletes
that move to a trash folder, and names confined to the workspace (``..``, absolute paths and
symlinks that lead outside are refused, and so is a ``.bak`` or ``.trash`` that is a link: it
is replaced or refused, never followed). Reading is as careful: a name that is a folder, a FIFO,
too long or not UTF-8 is one clear :class:`UsageError`, never a hang or a traceback; a listing
skips what it may not read and says why in :attr:`Workspace.problems`. Temporary files a killed
save left behind are removed by :meth:`Workspace.ensure`. Nothing here re-indexes: callers pass
the changed path to the ingestor.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from clawback.core.config import atomic_write_bytes
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.paths import PRIVATE_DIR, ensure_private_dir, make_private_dirs
from clawback.core.text import mask_secrets

MEMORY_FILE = "MEMORY.md"
MEMORY_DIR = "memory"
TRASH_DIR = ".trash"
# Where Claude Code stops loading MEMORY.md: past these, the rest is silently ignored.
MAX_LINES = 200
MAX_BYTES = 25 * 1024
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# Longest name part: 255 bytes is the usual file system limit, less room for ".bak" and the
# temporary name of an atomic write (".NAME.XXXXXXXX.tmp").
MAX_NAME_BYTES = 200
STALE_TEMP_SECONDS = 60  # a save takes milliseconds; a temp file this old was left by a kill
_TEMP_NAME = re.compile(r"\..+\.[A-Za-z0-9_]{8}\.tmp")  # atomic_write_bytes' mkstemp names


@dataclass(frozen=True)
class MemoryFile:
    name: str  # relative to the workspace, POSIX separators
    path: Path
    size: int
    lines: int
    modified: float


@dataclass
class SizeReport:
    name: str
    lines: int
    bytes: int
    over_lines: bool
    over_bytes: bool

    @property
    def flagged(self) -> bool:
        return self.over_lines or self.over_bytes


@dataclass
class CheckReport:
    size: SizeReport | None
    broken_links: list[tuple[str, int, str]] = field(default_factory=list)  # name, line, target

    @property
    def ok(self) -> bool:
        return not (self.size and self.size.flagged) and not self.broken_links


class Workspace:
    """The folder holding memory files; every name given to it is checked to stay inside."""

    def __init__(self, root: Path) -> None:
        self.root = root.expanduser()
        self.problems: list[tuple[str, str]] = []  # (name, why) skipped by the last list()

    def ensure(self) -> Workspace:
        ensure_private_dir(self.root)
        (self.root / MEMORY_DIR).mkdir(exist_ok=True, mode=PRIVATE_DIR)
        self.remove_stale_temp_files()
        return self

    def remove_stale_temp_files(self, older_than: float = STALE_TEMP_SECONDS) -> int:
        """Delete the temporary files of saves that were killed; returns how many."""
        cutoff = time.time() - older_than
        removed = 0
        for folder in (self.root, self.root / MEMORY_DIR):
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if not _TEMP_NAME.fullmatch(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                        os.unlink(entry.path)
                        removed += 1
                except OSError:
                    continue
        return removed

    def holds(self, path: str | Path) -> bool:
        """Whether ``path`` (an indexed memory file's) is one of this workspace's files, not
        another folder's memory (Claude Code's auto memory is indexed as memory too)."""
        try:
            return Path(path).resolve().is_relative_to(self.root.resolve())
        except (OSError, RuntimeError):  # a symlink loop
            return False

    def resolve(self, name: str) -> Path:
        """The path for ``name``, refusing anything that would leave the workspace."""
        if not name or not name.strip():
            raise UsageError("memory file name is empty")
        candidate = Path(name)
        if candidate.is_absolute():
            raise UsageError(f"{name}: give a name relative to the workspace, not an absolute path")
        if ".." in candidate.parts:
            raise UsageError(f"{name}: '..' is not allowed in memory file names")
        if candidate.suffix != ".md":
            raise UsageError(f"{name}: memory files are markdown (.md)")
        if any(len(os.fsencode(part)) > MAX_NAME_BYTES for part in candidate.parts):
            raise UsageError(f"{name[:60]}…: name too long (at most {MAX_NAME_BYTES} bytes)")
        path = self.root / candidate
        root = self.root.resolve()
        try:
            inside = path.resolve().is_relative_to(root)
        except (OSError, RuntimeError) as exc:  # a symlink loop
            raise UsageError(f"{name}: cannot follow its links ({exc})") from None
        if not inside:
            raise UsageError(f"{name}: points outside the workspace ({root})")
        return path

    def has(self, name: str) -> bool:
        """Whether anything is at ``name``, even what is no memory file (a folder, a broken
        link, a link out): only where nothing is may a new file be offered, since saving one
        there must create it, never replace or follow what is there."""
        try:
            return os.path.lexists(self.resolve(name))
        except UsageError:  # it leads outside, or loops: something is there
            return True

    def read_bytes(self, name: str) -> bytes:
        """The bytes of memory file ``name``: only a regular file, and never blocking."""
        path = self.resolve(name)
        try:
            # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise NotFoundError(f"no memory file {name!r} in {self.root}") from None
        except OSError as exc:
            raise UsageError(f"{name}: cannot read it ({_why(exc)})") from None
        try:
            kind = os.fstat(fd).st_mode
            if not stat.S_ISREG(kind):
                what = "a folder" if stat.S_ISDIR(kind) else "not a regular file"
                raise UsageError(f"{name}: {what}, not a memory file")
            with os.fdopen(fd, "rb", closefd=False) as handle:
                return handle.read()
        except OSError as exc:
            raise UsageError(f"{name}: cannot read it ({_why(exc)})") from None
        finally:
            os.close(fd)

    def name_of(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def list(self) -> list[MemoryFile]:
        """``MEMORY.md`` first, then daily notes newest first.

        What is not a memory file it may read (a link out of the workspace, a folder or a FIFO
        named ``*.md``, an unreadable file) is left out and named in :attr:`problems`.
        """
        self.problems = []
        names = [MEMORY_FILE]
        try:
            with os.scandir(self.root / MEMORY_DIR) as entries:
                daily = [e.name for e in entries if e.name.endswith(".md")]
        except OSError:
            daily = []
        names += [f"{MEMORY_DIR}/{n}" for n in sorted(daily, reverse=True)]
        result = []
        for name in names:
            path = self.root / name
            try:
                if name == MEMORY_FILE and not path.exists():
                    continue
                data = self.read_bytes(name)
                st = path.stat()
            except (UsageError, NotFoundError, OSError) as exc:
                self.problems.append((name, str(exc)))
                continue
            lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            result.append(MemoryFile(name, path, st.st_size, lines, st.st_mtime))
        return result

    def read(self, name: str) -> str:
        data = self.read_bytes(name)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"{name}: not UTF-8 text (byte {exc.start}); convert it to UTF-8 to use it here"
            ) from None

    def save(self, name: str, text: str) -> Path:
        """Atomically replace ``name`` with ``text``, keeping the old version as ``NAME.bak``.

        The backup is written like the file (a temporary file, then a rename), so a kill leaves
        the old backup or the new one, and a ``.bak`` that is a link is replaced, not followed.
        """
        path = self.resolve(name)
        try:
            make_private_dirs(path.parent)
            if path.exists():
                atomic_write_bytes(path.with_name(path.name + ".bak"), self.read_bytes(name))
            atomic_write_bytes(path, text.encode("utf-8"))
        except OSError as exc:
            raise UsageError(f"{name}: cannot save it ({_why(exc)})") from None
        return path

    def append(self, name: str, text: str) -> Path:
        """Add ``text`` to the end of ``name`` (created if missing), via :meth:`save`."""
        try:
            current = self.read(name)
        except NotFoundError:
            current = ""
        if current and not current.endswith("\n"):
            current += "\n"
        separator = "\n" if current else ""
        return self.save(name, current + separator + text)

    def expand_name(self, name: str) -> str:
        """A name as a person types it, made whole: ``MEMORY`` is ``MEMORY.md``, a date (or a
        date with ``.md``) is that day's note, ``memory/DATE`` gets its ``.md``. Anything else
        is returned as given, so :meth:`resolve` explains what is wrong with it."""
        bare = name.strip()
        stem = bare.removesuffix(".md")
        try:
            return self.daily_name(date.fromisoformat(stem))
        except ValueError:
            pass
        if stem.upper() == "MEMORY":
            return "MEMORY.md"
        if stem.startswith(f"{MEMORY_DIR}/") and not bare.endswith(".md"):
            return f"{stem}.md"
        return name

    def daily_name(self, day: date | None = None) -> str:
        return f"{MEMORY_DIR}/{(day or datetime.now().date()).isoformat()}.md"

    def new_daily(self, day: date | None = None) -> Path:
        """Today's note, created with a heading if it does not exist yet."""
        name = self.daily_name(day)
        path = self.resolve(name)
        if not path.exists():
            self.save(name, f"# {Path(name).stem}\n\n")
        return path

    def remember(self, text: str, when: datetime | None = None) -> Path:
        """Append a note a person asked to keep (``clawback memory remember``, the plugin's
        ``/clawback:remember``) to that day's note, under the time it was kept. The text is masked
        like everything clawback stores, so a pasted key never reaches a memory file."""
        body = mask_secrets(text.strip())
        if not body:
            raise UsageError("nothing to remember: the text is empty")
        moment = when or datetime.now().astimezone()
        name = self.daily_name(moment.date())
        block = f"## {moment:%H:%M} · remembered\n\n{body}\n"
        if not self.resolve(name).exists():
            return self.save(name, f"# {Path(name).stem}\n\n{block}")
        return self.append(name, block)

    def rename(self, old: str, new: str) -> Path:
        source, target = self.resolve(old), self.resolve(new)
        if not source.exists():
            raise NotFoundError(f"no memory file {old!r}")
        if target.exists():
            raise UsageError(f"{new} already exists")
        try:
            make_private_dirs(target.parent)
            os.replace(source, target)
        except OSError as exc:
            raise UsageError(f"{old}: cannot rename it ({_why(exc)})") from None
        return target

    def delete(self, name: str) -> Path:
        """Move ``name`` to the trash folder (recoverable); returns where it went."""
        path = self.resolve(name)
        if not path.exists():
            raise NotFoundError(f"no memory file {name!r}")
        trash = self.root / TRASH_DIR
        if trash.is_symlink() or (trash.exists() and not trash.is_dir()):
            raise UsageError(
                f"{trash} is not a folder of the workspace (a link or a file); move it away"
            )
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        target = trash / f"{name.replace('/', '__')}.{stamp}"
        try:
            ensure_private_dir(trash)
            os.replace(path, target)
        except OSError as exc:
            raise UsageError(f"{name}: cannot move it to the trash ({_why(exc)})") from None
        return target

    def size_report(self) -> SizeReport | None:
        try:
            data = self.read_bytes(MEMORY_FILE)
        except (UsageError, NotFoundError):
            return None
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        return SizeReport(MEMORY_FILE, lines, len(data), lines > MAX_LINES, len(data) > MAX_BYTES)

    def check(self) -> CheckReport:
        """Size limits of ``MEMORY.md`` and relative links that point at nothing."""
        report = CheckReport(size=self.size_report())
        for memory in self.list():
            try:
                text = self.read_bytes(memory.name).decode("utf-8", errors="replace")
            except (UsageError, NotFoundError):
                continue
            for number, target in broken_links(text, memory.path.parent):
                report.broken_links.append((memory.name, number, target))
        return report


def broken_links(text: str, folder: Path) -> list[tuple[int, str]]:
    """The relative links in a note's ``text`` that point at nothing from ``folder``: (line,
    target). One rule for ``memory check`` and the editor, so both flag the same links."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                continue  # URLs, mailto:, in-page anchors
            relative = target.split("#", 1)[0]
            if relative and not (folder / relative).exists():
                found.append((number, target))
    return found


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return "name too long"
    return exc.strerror or str(exc)
