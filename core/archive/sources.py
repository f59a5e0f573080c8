"""Where transcripts live, and how each file is named in the index.

A *source root* is a folder plus the format of the transcripts under it (or ``None`` to detect
each file's format from its first line). Files are identified by ``(source, file_key)`` where the
key is the path relative to the root, so the same transcript ingested from a backup copy and from
the live folder is one file, not two. Walking must stay cheap: an unchanged re-scan of 10,000
files is a directory walk plus one ``stat`` each, with no reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from clawback.core.config import Config
from clawback.core.paths import Paths
from clawback.core.records import Source


@dataclass(frozen=True)
class SourceRoot:
    """A folder to ingest. ``source`` is ``None`` when formats are detected per file."""

    source: Source | None
    root: Path
    name: str  # what health and progress call it
    only: tuple[Path, ...] = ()  # restrict to these files (a file named on the command line)

    def files(self) -> Iterator[Path]:
        """Every transcript file under the root, found with ``os.scandir`` (no reads)."""
        if self.only:
            yield from (path for path in self.only if path.is_file())
            return
        if not self.root.is_dir():
            return
        if self.source is Source.MEMORY:
            memory = self.root / "MEMORY.md"
            if memory.is_file():
                yield memory
            yield from sorted(_walk(self.root / "memory", suffix=".md", max_depth=1))
            return
        depth = {Source.OPENCLAW: 3, Source.NATIVE: 1}.get(self.source, 8)
        yield from _walk(self.root, suffix=".jsonl", max_depth=depth)

    def stat_files(self) -> Iterator[tuple[str, str, os.stat_result]]:
        """``(path, file key, stat)`` for every file: the re-scan's hot loop, kept on strings.

        ``pathlib`` costs more than the ``stat`` itself when 10,000 files are unchanged.
        """
        if self.only or self.source is Source.MEMORY:
            for path in self.files():
                try:
                    st = path.stat()
                except OSError:
                    continue
                yield str(path), self.file_key(path), st
            return
        depth = {Source.OPENCLAW: 3, Source.NATIVE: 1}.get(self.source, 8)
        yield from _walk_stat(str(self.root), "", ".jsonl", depth)

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
        if self.source is Source.MEMORY:
            return parts == ("MEMORY.md",) or (
                len(parts) == 2 and parts[0] == "memory" and path.suffix == ".md"
            )
        depth = {Source.OPENCLAW: 3, Source.NATIVE: 1}.get(self.source, 8)
        return path.suffix == ".jsonl" and len(parts) <= depth

    def file_key(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def _walk(folder: Path, *, suffix: str, max_depth: int) -> Iterator[Path]:
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.name.endswith(suffix) and entry.is_file():
            yield Path(entry.path)
        elif max_depth > 1 and entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), suffix=suffix, max_depth=max_depth - 1)


def _walk_stat(
    folder: str, prefix: str, suffix: str, max_depth: int
) -> Iterator[tuple[str, str, os.stat_result]]:
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name[0] == ".":
            continue
        if name.endswith(suffix) and entry.is_file():
            try:
                yield entry.path, prefix + name, entry.stat()
            except OSError:
                continue
        elif max_depth > 1 and entry.is_dir(follow_symlinks=False):
            yield from _walk_stat(entry.path, f"{prefix}{name}/", suffix, max_depth - 1)


def parse_extra(spec: str) -> SourceRoot:
    """``FORMAT:PATH`` or ``PATH`` (format detected per file) from ``sources.extra``."""
    fmt, sep, rest = spec.partition(":")
    if sep and fmt in {s.value for s in Source} and fmt != Source.MEMORY:
        return SourceRoot(Source(fmt), Path(rest).expanduser(), f"extra:{rest}")
    return SourceRoot(None, Path(spec).expanduser(), f"extra:{spec}")


def configured_roots(config: Config, paths: Paths) -> list[SourceRoot]:
    """The roots ``clawback ingest`` with no PATH walks, in a fixed order."""
    sources = config.sources
    roots: list[SourceRoot] = []
    if sources.claude_code:
        roots.append(
            SourceRoot(
                Source.CLAUDE_CODE, Path(sources.claude_code_path).expanduser(), "claude-code"
            )
        )
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
    ``<project>/<session>/subagents/agent-x.jsonl`` key).
    """
    path = path.expanduser().resolve()
    if path.is_dir():
        return SourceRoot(source, path, str(path))
    levels = 1
    if path.parent.name == "subagents":
        levels = 3
    elif source is Source.CLAUDE_CODE:
        levels = 2
    base = path.parents[levels - 1] if len(path.parents) >= levels else path.parent
    return SourceRoot(source, base, str(base), only=(path,))
