"""Files that ingestion could not read, kept in the index so ``health`` can name them.

A scan finds files it will not read (an unknown format, no permission, a symlink loop, a name
that is not UTF-8, a link out of the workspace) and files can fail while being read. Each is
one row ``(path, reason)`` in ``skipped_files``; a later scan of the same folder or file
replaces its rows, so a file that was fixed stops being named. Paths arrive sealed (masked).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from clawback.core.ingest.sources import SourceRoot, WorkItem
from clawback.core.timeutil import now_ts


def record_skipped_files(
    conn: Any,
    roots: Iterable[SourceRoot],
    work: Sequence[WorkItem],
    skipped: Sequence[tuple[str, str]],
    seal: Callable[[str], str],
) -> set[tuple[str, str]]:
    """Replace the rows of everything this scan looked at with what it skipped now; returns
    which of ``skipped`` were already recorded with the same reason."""
    wanted = set(skipped)
    known = {
        (path, reason)
        for path, reason in conn.execute("SELECT path, reason FROM skipped_files")
        if (path, reason) in wanted
    }
    paths = [seal(str(item.path)) for item in work]
    for root in roots:
        if root.only:
            paths += [seal(str(path)) for path in root.only]
        else:
            prefix = root_prefix(root, seal)
            conn.execute(
                "DELETE FROM skipped_files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)
            )
    conn.executemany("DELETE FROM skipped_files WHERE path = ?", [(p,) for p in paths])
    stamp = now_ts()
    conn.executemany(
        "INSERT OR REPLACE INTO skipped_files (path, reason, seen_at) VALUES (?, ?, ?)",
        [(path, reason, stamp) for path, reason in skipped],
    )
    return known


def root_prefix(root: SourceRoot, seal: Callable[[str], str]) -> str:
    """How the paths of files under ``root`` begin in ``skipped_files``."""
    return seal(str(root.root)).rstrip(os.sep) + os.sep


def recorded_under(
    conn: Any, roots: Iterable[SourceRoot], seal: Callable[[str], str]
) -> set[tuple[str, str]]:
    """The ``(path, reason)`` rows a scan of ``roots`` would replace (whole roots only)."""
    prefixes = tuple(root_prefix(root, seal) for root in roots if not root.only)
    rows = conn.execute("SELECT path, reason FROM skipped_files").fetchall()
    return {(path, reason) for path, reason in rows if path.startswith(prefixes)}


def skipped_files(db: Any) -> list[dict[str, str]]:
    """Every file the index knows it could not read, and why."""
    return [
        {"path": path, "reason": reason}
        for path, reason in db.execute("SELECT path, reason FROM skipped_files ORDER BY path")
    ]
