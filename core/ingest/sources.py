"""Where transcripts live, and how each file is named in the index.

A *source root* is a folder plus the format of the transcripts under it (or ``None`` to detect
each file's format from its first line). Files are identified by ``(source, file_key)`` where the
key is the path relative to the root, so the same transcript ingested from a backup copy and from
the live folder is one file, not two. What identifies never passes through masking alone: a key
that masking would change is stored masked with a digest of the real key (:func:`stored_key`),
so two files whose keys mask alike stay two files. Walking must stay cheap: an unchanged re-scan
of 10,000 files is a directory walk plus one ``stat`` each, with no reads.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from clawback.core.archive import key_digest
from clawback.core.config import Config
from clawback.core.paths import Paths
from clawback.core.records import Source

Problems = list[tuple[str, str]]  # (path, why it was not read), for health and ingest --json
# How deep transcripts sit: <agent>/sessions/<id>.jsonl, flat, else (Claude Code and folders
# detected per file) anywhere up to DEEPEST_FOLDERS folders below the root. Folder links are not
# followed, so the bound is against bind-mount loops and runaway trees, not against real layouts;
# a folder past it is named in health, never skipped silently.
DEEPEST_FOLDERS = 32
_TRANSCRIPT_DEPTH: dict[Source | None, int] = {Source.OPENCLAW: 3, Source.NATIVE: 1}
_TOO_DEEP = f"more than {DEEPEST_FOLDERS} folders below the source root (not searched)"
QUIET_SECONDS = 60.0  # a file unchanged this long is finished: its unterminated tail is read


@dataclass(frozen=True)
class SourceRoot:
    """A folder to ingest. ``source`` is ``None`` when formats are detected per file."""

    source: Source | None
    root: Path
    name: str  # what health and progress call it
    only: tuple[Path, ...] = ()  # restrict to these files (a file named on the command line)
    #: memory files under a Claude Code projects folder (``<project>/memory/*.md``: Claude
    #: Code's auto memory), not a workspace's ``MEMORY.md`` and ``memory/*.md``
    per_project: bool = False

    @property
    def depth(self) -> int:
        """How many folders deep a transcript may sit under the root."""
        return _TRANSCRIPT_DEPTH.get(self.source, DEEPEST_FOLDERS + 1)

    def files(self, problems: Problems | None = None) -> Iterator[Path]:
        """Every transcript file under the root, found with ``os.scandir`` (no reads)."""
        for path, _key, _st in self.stat_files(problems):
            yield Path(path)

    def stat_files(
        self, problems: Problems | None = None
    ) -> Iterator[tuple[str, str, os.stat_result]]:
        """``(path, file key, stat)`` for every file: the re-scan's hot loop, kept on strings.

        ``pathlib`` costs more than the ``stat`` itself when 10,000 files are unchanged. What
        cannot be a transcript although its name says so (a symlink loop, a FIFO, an
        unreadable folder, a name that is not UTF-8, a memory file linking out of the
        workspace) is not yielded but added to ``problems`` as ``(path, why)``.
        """
        problems = problems if problems is not None else []
        if self.only:
            for path in self.only:
                st = _regular_file(str(path), problems)
                if st is not None and _utf8_name(str(path), problems):
                    yield str(path), self.file_key(path), st
            return
        if self.source is Source.MEMORY:
            yield from self._memory_files(problems)
            return
        deep = self.source not in _TRANSCRIPT_DEPTH  # a fixed layout has nothing deeper
        yield from _walk_stat(str(self.root), "", ".jsonl", self.depth, problems, deep)

    def _memory_files(self, problems: Problems) -> Iterator[tuple[str, str, os.stat_result]]:
        """``MEMORY.md`` and ``memory/*.md``; a link that leads out of the workspace is refused.

        Per project (Claude Code's auto memory), the same in each ``<project>/memory/``: the
        key is ``<project>/memory/<name>.md`` and a link may not lead out of that folder.
        """
        if not self.per_project:
            found = [("MEMORY.md", str(self.root / "MEMORY.md"))]
            found += _markdown_in(self.root / "memory", "memory/")
            yield from _sealed(found, os.path.realpath(self.root), problems)
            return
        try:
            with os.scandir(self.root) as it:
                projects = sorted(e.name for e in it if e.name[0] != "." and e.is_dir())
        except OSError:
            return
        for project in projects:
            folder = self.root / project / "memory"
            found = _markdown_in(folder, f"{project}/memory/")
            yield from _sealed(found, os.path.realpath(folder), problems)

    def accepts(self, path: Path) -> bool:
        """Would :meth:`files` list ``path``? Decided from the path alone (for watcher events)."""
        try:
            parts = path.relative_to(self.root).parts
        except ValueError:
            return False
        if not parts or any(part.startswith(".") for part in parts):
            return False
        if self.only:
            return path in self.only
        if self.source is Source.MEMORY and self.per_project:
            return len(parts) == 3 and parts[1] == "memory" and path.suffix == ".md"
        if self.source is Source.MEMORY:
            return parts == ("MEMORY.md",) or (
                len(parts) == 2 and parts[0] == "memory" and path.suffix == ".md"
            )
        return path.suffix == ".jsonl" and len(parts) <= self.depth

    def file_key(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


@dataclass
class WorkItem:
    """A file a scan found that needs reading: where, in which format, and its stat."""

    root: SourceRoot
    path: Path
    source: Source
    key: str
    size: int
    mtime: float


def is_quiet(item: WorkItem) -> bool:
    """Unchanged for ``QUIET_SECONDS``: a writer that left a line unterminated is done."""
    return time.time() - item.mtime >= QUIET_SECONDS


def stored_key(key: str, seal: Callable[[str], str]) -> str:
    """The key a file is known by in the index: its real relative ``key``, or when masking
    changes that (a secret in a folder name, or a random-looking temp folder masking takes for
    one), the masked key with a digest of the real one before the extension. The real key never
    reaches the index, and files whose keys mask alike never share a row."""
    sealed = seal(key)
    if sealed == key:
        return key
    stem, dot, extension = sealed.rpartition(".")
    if not dot or "/" in extension or not key.endswith(dot + extension):
        stem, dot, extension = sealed, "", ""
    return f"{stem}~{key_digest(key)}{dot}{extension}"


def _markdown_in(folder: Path, prefix: str) -> list[tuple[str, str]]:
    """``(key, path)`` of the ``*.md`` files in ``folder`` (none when it is missing)."""
    try:
        with os.scandir(folder) as it:
            return sorted(
                (f"{prefix}{e.name}", e.path)
                for e in it
                if e.name.endswith(".md") and e.name[0] != "."
            )
    except OSError:
        return []


def _sealed(
    found: list[tuple[str, str]], root: str, problems: Problems
) -> Iterator[tuple[str, str, os.stat_result]]:
    """The files of ``found`` that exist, refusing a link that leads out of ``root``."""
    for key, path in found:
        if not os.path.lexists(path):
            continue
        if os.path.islink(path) and not os.path.realpath(path).startswith(root + os.sep):
            problems.append((path, "a link that leads out of the workspace (not read)"))
            continue
        st = _regular_file(path, problems)
        if st is not None and _utf8_name(path, problems):
            yield path, key, st


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _regular_file(path: str, problems: Problems) -> os.stat_result | None:
    """The stat of ``path`` if it is a regular file (links followed); else why not, noted."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems.append((path, f"cannot read: {_why(exc)}"))
        return None
    if stat.S_ISREG(st.st_mode):
        return st
    if not stat.S_ISDIR(st.st_mode):
        problems.append((path, "not a regular file (a FIFO, socket or device)"))
    return None


def _utf8_name(path: str, problems: Problems) -> bool:
    """Whether ``path`` can be stored as text: a name that is not UTF-8 is noted instead."""
    if path.isascii():
        return True
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        problems.append((shown, "file name is not valid UTF-8 (rename it to index it)"))
        return False
    return True


def _walk_stat(
    folder: str, prefix: str, suffix: str, max_depth: int, problems: Problems, deep: bool
) -> Iterator[tuple[str, str, os.stat_result]]:
    """Files ending in ``suffix`` at most ``max_depth - 1`` folders down; with ``deep``, each
    folder below that is added to ``problems``."""
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except FileNotFoundError:
        return
    except OSError as exc:
        problems.append((folder, f"cannot read the folder: {_why(exc)}"))
        return
    for entry in entries:
        name = entry.name
        if name[0] == ".":
            continue
        if name.endswith(suffix):
            st = _regular_file(entry.path, problems)
            if st is not None:
                if _utf8_name(entry.path, problems):
                    yield entry.path, prefix + name, st
                continue
        try:
            is_folder = (max_depth > 1 or deep) and entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if not is_folder:
            continue
        if max_depth <= 1:
            problems.append((entry.path, _TOO_DEEP))
        elif _utf8_name(entry.path, problems):
            yield from _walk_stat(
                entry.path, f"{prefix}{name}/", suffix, max_depth - 1, problems, deep
            )


def parse_extra(spec: str) -> SourceRoot:
    """``FORMAT:PATH`` or ``PATH`` (format detected per file) from ``sources.extra``."""
    fmt, sep, rest = spec.partition(":")
    if sep and fmt in {s.value for s in Source} and fmt != Source.MEMORY:
        return SourceRoot(Source(fmt), Path(rest).expanduser(), f"extra:{rest}")
    return SourceRoot(None, Path(spec).expanduser(), f"extra:{spec}")


def claude_code_projects(config: Config) -> Path:
    """Where Claude Code keeps its projects (``sources.claude_code_path``): each project's
    transcripts and its auto memory. The one place that setting becomes a folder."""
    return Path(config.sources.claude_code_path).expanduser()


def configured_roots(config: Config, paths: Paths) -> list[SourceRoot]:
    """The roots ``clawback ingest`` with no PATH walks, in a fixed order."""
    sources = config.sources
    roots: list[SourceRoot] = []
    if sources.claude_code:
        projects = claude_code_projects(config)
        roots.append(SourceRoot(Source.CLAUDE_CODE, projects, "claude-code"))
        # Claude Code's own auto memory: <project>/memory/MEMORY.md and its topic files
        roots.append(SourceRoot(Source.MEMORY, projects, "claude-code-memory", per_project=True))
    if sources.openclaw:
        roots.append(
            SourceRoot(Source.OPENCLAW, Path(sources.openclaw_path).expanduser(), "openclaw")
        )
    if sources.native:
        roots.append(SourceRoot(Source.NATIVE, paths.sessions, "native"))
    roots.append(SourceRoot(Source.MEMORY, config.workspace(paths), "memory"))
    roots.extend(parse_extra(spec) for spec in sources.extra)
    return roots


def root_for_path(path: Path, source: Source | None) -> SourceRoot:
    """A root and its files for a PATH given on the command line (a folder or one file).

    For one file, ``source`` should already be detected (see ``Ingestor.detect``).

    For one file the root is chosen so its key matches what a full scan would give: a Claude
    Code transcript keeps its ``<project>/<session>.jsonl`` key (and a subagent file its
    ``<project>/<session>/subagents/agent-x.jsonl`` key, a workflow's agent its
    ``.../subagents/workflows/<run>/agent-x.jsonl`` key).
    """
    path = path.expanduser().resolve()
    if path.is_dir():
        return SourceRoot(source, path, str(path))
    levels = 1
    above = [parent.name for parent in path.parents]
    if "subagents" in above:  # <session>/subagents/[workflows/<run>/]agent-x.jsonl
        levels = above.index("subagents") + 4
    elif source is Source.CLAUDE_CODE:
        levels = 2
    base = path.parents[levels - 1] if len(path.parents) >= levels else path.parent
    return SourceRoot(source, base, str(base), only=(path,))
