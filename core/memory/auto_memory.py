"""Claude Code's own auto memory, per project, for the app to list, open and edit.

Claude Code keeps ``MEMORY.md`` and topic files in ``<projects>/<project>/memory/``, where
``<project>`` is the working folder with every character but letters and digits turned into
``-``. The ingest already indexes them (the per-project memory root of
:func:`~clawback.core.ingest.sources.configured_roots`); this module lists the very files that
root walks, so what the app shows is what search finds, and it honours the same settings
(``sources.claude_code``, ``sources.claude_code_path``) without a second copy of the rule.

Each project's memory folder is opened as a :class:`~clawback.core.memory.files.Workspace`, so
reading and saving are the workspace's own (a regular file only, never blocking; an atomic
replace with a ``.bak``; names confined to that folder). The folder name means little to a
person (``-home-me-work-api``), so a project is labelled by the working folder its sessions
ran in, as the index knows it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from clawback.core.archive import project_name
from clawback.core.config import Config
from clawback.core.db import Queryable
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.ingest.sources import Problems, SourceRoot, configured_roots
from clawback.core.memory.files import MEMORY_FILE, MemoryFile, Workspace
from clawback.core.paths import Paths
from clawback.core.records import Source

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
DEEPEST = 32  # folders below the root a project's working folder may be found at


@dataclass(frozen=True)
class ProjectMemory:
    """One Claude Code project's auto memory folder and the files in it."""

    project: str  # Claude Code's folder name for the project ("-home-me-work-api")
    folder: Path  # <projects>/<project>/memory
    files: tuple[MemoryFile, ...] = ()  # MEMORY.md first, then the topic files by name
    cwd: str | None = None  # the working folder its sessions ran in, when the index knows

    @property
    def label(self) -> str:
        """What a person calls the project: its working folder's own name."""
        return project_name(self.cwd) if self.cwd else self.project

    @property
    def place(self) -> str:
        """Where the project is, ``~`` for the home folder (the folder name if unknown)."""
        if not self.cwd:
            return self.project
        home = str(Path.home())
        if self.cwd == home or self.cwd.startswith(home + "/"):
            return "~" + self.cwd[len(home) :]
        return self.cwd

    @property
    def workspace(self) -> Workspace:
        """The folder as a workspace: file names are relative to it (``MEMORY.md``)."""
        return Workspace(self.folder)


def auto_memory_title(label: str, name: str) -> str:
    """How one of these files is named where a person sees it (the memory pane, a search hit):
    whose memory it is, which project, which file."""
    return f"Claude Code · {label} · {name}"


def auto_memory_roots(config: Config, paths: Paths) -> list[SourceRoot]:
    """The roots the ingest walks for Claude Code's auto memory (none when the Claude Code
    source is switched off)."""
    return [
        root
        for root in configured_roots(config, paths)
        if root.source is Source.MEMORY and root.per_project
    ]


def list_auto_memory(
    roots: Iterable[SourceRoot], problems: Problems | None = None
) -> list[ProjectMemory]:
    """Every project that has auto memory files, the most recently changed first.

    The files are those the ingest reads (``SourceRoot.stat_files``: no hidden files, no link
    out of the folder); what it may not read is added to ``problems``.
    """
    found: dict[Path, list[MemoryFile]] = {}
    for root in roots:
        for path, _key, st in root.stat_files(problems):
            file = Path(path)
            try:
                lines = _count_lines(Workspace(file.parent).read_bytes(file.name))
            except (UsageError, NotFoundError):  # gone, or made unreadable, since the walk
                continue
            found.setdefault(file.parent, []).append(
                MemoryFile(file.name, file, st.st_size, lines, st.st_mtime)
            )
    projects = [
        ProjectMemory(folder.parent.name, folder, tuple(sorted(files, key=_file_order)))
        for folder, files in found.items()
    ]
    return sorted(projects, key=lambda p: -max(f.modified for f in p.files))


def with_working_folders(db: Queryable, projects: list[ProjectMemory]) -> list[ProjectMemory]:
    """``projects`` with the working folder each one is about, where it can be told.

    Of a project's indexed sessions, a working folder Claude Code encodes as the project's
    folder name wins (a session may have started elsewhere), else the latest one's. With no
    session indexed (its transcripts were deleted before clawback read them), the existing
    folder whose encoding the name is, found on disk (:func:`folder_on_disk`).
    """
    labelled = []
    for memory in projects:
        start = f"{memory.project}/"
        rows = db.execute(
            """SELECT s.cwd, max(s.updated_at) AS latest
               FROM files f JOIN sessions s ON s.id = f.session_id
               WHERE f.source = ? AND f.file_key >= ? AND f.file_key < ?
                 AND s.cwd IS NOT NULL AND s.cwd != ''
               GROUP BY s.cwd ORDER BY latest DESC LIMIT 20""",
            (Source.CLAUDE_CODE.value, start, start[:-1] + "0"),  # "0" follows "/"
        ).fetchall()
        folders = [cwd for cwd, _latest in rows]
        exact = [cwd for cwd in folders if encoded(cwd) == memory.project]
        cwd = (exact or folders or [None])[0] or folder_on_disk(memory.project)
        labelled.append(replace(memory, cwd=cwd))
    return labelled


def encoded(folder: str) -> str:
    """The name Claude Code gives a working folder's project: every character but ASCII
    letters and digits becomes ``-``."""
    return _NOT_ALNUM.sub("-", folder)


def folder_on_disk(project: str, root: str = "/") -> str | None:
    """The existing folder below ``root`` that ``project`` encodes, or ``None``.

    Encoding loses which ``-`` was a ``/``, so this walks down: at each level, the entries
    whose encoded name starts what is left (a few listings, at most ``DEEPEST`` deep; tried
    longest first, backing up on a dead end).
    """
    if not project.startswith("-"):
        return None

    def walk(folder: str, rest: str, depth: int) -> str | None:
        if not rest:
            return folder
        if depth >= DEEPEST:
            return None
        try:
            names = os.listdir(folder)
        except OSError:
            return None
        fits = [n for n in names if rest == encoded(n) or rest.startswith(encoded(n) + "-")]
        for name in sorted(fits, key=len, reverse=True):
            path = os.path.join(folder, name)
            if os.path.isdir(path):
                found = walk(path, rest[len(name) + 1 :], depth + 1)
                if found is not None:
                    return found
        return None

    return walk(root, project[1:], 0)


def locate(roots: Iterable[SourceRoot], path: Path) -> tuple[Path, str] | None:
    """``(memory folder, file name)`` when ``path`` is one of Claude Code's auto memory files
    (from the path alone, as the watcher decides), else ``None``."""
    for root in roots:
        if root.accepts(path):
            return path.parent, path.name
    return None


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _file_order(file: MemoryFile) -> tuple[bool, str]:
    return file.name != MEMORY_FILE, file.name.casefold()
