"""Memory markdown files: ``MEMORY.md`` and ``memory/YYYY-MM-DD.md`` in the workspace.

People edit these by hand and the memory flush appends to them, so every write is careful: an
atomic replace that keeps the previous version as ``.bak``, deletes that move to a trash folder,
and names confined to the workspace (``..``, absolute paths and symlinks that lead outside are
refused). Nothing here re-indexes: callers pass the changed path to the ingestor.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from clawback.core.config import atomic_write_bytes
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.paths import ensure_private_dir

MEMORY_FILE = "MEMORY.md"
MEMORY_DIR = "memory"
TRASH_DIR = ".trash"
# Where Claude Code stops loading MEMORY.md: past these, the rest is silently ignored.
MAX_LINES = 200
MAX_BYTES = 25 * 1024
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


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

    def ensure(self) -> Workspace:
        ensure_private_dir(self.root)
        (self.root / MEMORY_DIR).mkdir(exist_ok=True, mode=0o700)
        return self

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
        path = self.root / candidate
        root = self.root.resolve()
        if not path.resolve().is_relative_to(root):
            raise UsageError(f"{name}: points outside the workspace ({root})")
        return path

    def name_of(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def list(self) -> list[MemoryFile]:
        """``MEMORY.md`` first, then daily notes newest first."""
        found = []
        main = self.root / MEMORY_FILE
        if main.is_file():
            found.append(main)
        folder = self.root / MEMORY_DIR
        if folder.is_dir():
            found += sorted(
                (p for p in folder.glob("*.md") if p.is_file()), key=lambda p: p.name, reverse=True
            )
        result = []
        for path in found:
            st = path.stat()
            with path.open("rb") as handle:
                lines = sum(1 for _ in handle)
            result.append(MemoryFile(self.name_of(path), path, st.st_size, lines, st.st_mtime))
        return result

    def read(self, name: str) -> str:
        path = self.resolve(name)
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFoundError(f"no memory file {name!r} in {self.root}") from None

    def save(self, name: str, text: str) -> Path:
        """Atomically replace ``name`` with ``text``, keeping the old version as ``NAME.bak``."""
        path = self.resolve(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            shutil.copy2(path, path.with_name(path.name + ".bak"))
        atomic_write_bytes(path, text.encode("utf-8"))
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

    def daily_name(self, day: date | None = None) -> str:
        return f"{MEMORY_DIR}/{(day or datetime.now().date()).isoformat()}.md"

    def new_daily(self, day: date | None = None) -> Path:
        """Today's note, created with a heading if it does not exist yet."""
        name = self.daily_name(day)
        path = self.resolve(name)
        if not path.exists():
            self.save(name, f"# {Path(name).stem}\n\n")
        return path

    def rename(self, old: str, new: str) -> Path:
        source, target = self.resolve(old), self.resolve(new)
        if not source.exists():
            raise NotFoundError(f"no memory file {old!r}")
        if target.exists():
            raise UsageError(f"{new} already exists")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        return target

    def delete(self, name: str) -> Path:
        """Move ``name`` to the trash folder (recoverable); returns where it went."""
        path = self.resolve(name)
        if not path.exists():
            raise NotFoundError(f"no memory file {name!r}")
        trash = self.root / TRASH_DIR
        ensure_private_dir(trash)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        target = trash / f"{name.replace('/', '__')}.{stamp}"
        os.replace(path, target)
        return target

    def size_report(self) -> SizeReport | None:
        path = self.root / MEMORY_FILE
        if not path.is_file():
            return None
        data = path.read_bytes()
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        return SizeReport(MEMORY_FILE, lines, len(data), lines > MAX_LINES, len(data) > MAX_BYTES)

    def check(self) -> CheckReport:
        """Size limits of ``MEMORY.md`` and relative links that point at nothing."""
        report = CheckReport(size=self.size_report())
        for memory in self.list():
            text = memory.path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), 1):
                for target in _LINK.findall(line):
                    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                        continue  # URLs, mailto:, in-page anchors
                    relative = target.split("#", 1)[0]
                    if relative and not (memory.path.parent / relative).exists():
                        report.broken_links.append((memory.name, number, target))
        return report
