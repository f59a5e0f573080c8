"""Re-reading deleted Claude Code transcripts from their kept copies, so a reindex loses none.

A reindex reads every transcript again with the current parser and masking. One whose source
Claude Code has deleted would otherwise keep the rows an older clawback made, or, if the index
itself was lost, vanish: its kept copy (:mod:`clawback.core.archive.kept`) is its source now.

Each copy is written out whole into ``<home>/kept-rebuild/<file key>`` (private), ingested
from there under its own key, and marked deleted again. A staged file is removed only after its
ingest finished, and one left by a killed run is ingested first on the next reindex: the copy
being rewritten while it is read is never the only place its lines are.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import sqlite_utils
from clawback.core.archive import KeptCopies, KeptCopyError, refresh_session
from clawback.core.db import write_transaction
from clawback.core.ingest.ingestor import Ingestor
from clawback.core.ingest.sources import SourceRoot
from clawback.core.ingest.stats import IngestStats
from clawback.core.paths import PRIVATE_FILE, ensure_private_dir
from clawback.core.records import Source

SOURCE = Source.CLAUDE_CODE.value


def rebuild_deleted(
    ingestor: Ingestor, db: sqlite_utils.Database, staging: Path, projects: Path
) -> IngestStats:
    """Ingest every deleted Claude Code transcript again from its copy; ``projects`` names
    where a transcript known only from its copy (the index was rebuilt) was last."""
    copies = ingestor.copies
    wanted: dict[str, int | None] = {}  # file key -> committed copy length (None: all of it)
    for key, kept_bytes in db.execute(
        """SELECT file_key, kept_bytes FROM files
           WHERE source = ? AND missing = 1 AND kept_bytes > 0""",
        (SOURCE,),
    ):
        wanted[key] = kept_bytes
    known = {key for (key,) in db.execute("SELECT file_key FROM files WHERE source = ?", (SOURCE,))}
    for _path, header in copies.headers():
        if header.source == SOURCE and header.key not in known:
            wanted[header.key] = None
    staged = _left_over(staging)
    for key, committed in wanted.items():
        target = staging.joinpath(*Path(key).parts)
        if target in staged:
            continue  # a killed run's: it is the whole copy, read before the copy was rewritten
        try:
            if _stage(copies, key, committed, staging, target):
                staged.add(target)
        except KeptCopyError:
            continue  # a damaged copy: its rows stay as they are
    stats = IngestStats()
    if not staged:
        return stats
    paths = {
        key: path
        for key, path in db.execute(
            "SELECT file_key, path FROM files WHERE source = ?", (SOURCE,)
        ).fetchall()
    }
    root = SourceRoot(Source.CLAUDE_CODE, staging, "kept copies", only=tuple(sorted(staged)))
    stats = ingestor.ingest([root], reimport=True)
    keys = [path.relative_to(staging).as_posix() for path in sorted(staged)]
    with ingestor.lock, write_transaction(db) as conn:
        for key in keys:
            was = paths.get(key) or str(projects.joinpath(*Path(key).parts))
            conn.execute(
                "UPDATE files SET missing = 1, path = ? WHERE source = ? AND file_key = ?",
                (was, SOURCE, key),
            )
        sessions = {
            session_id
            for key in keys
            for (session_id,) in conn.execute(
                """SELECT DISTINCT e.session_id FROM entries e JOIN files f ON f.id = e.file_id
                   WHERE f.source = ? AND f.file_key = ? AND e.session_id IS NOT NULL""",
                (SOURCE, key),
            )
        }
        for session_id in sessions:
            refresh_session(conn, session_id)
    for path in staged:
        path.unlink(missing_ok=True)
    if not _left_over(staging):
        shutil.rmtree(staging, ignore_errors=True)
    return stats


def _left_over(staging: Path) -> set[Path]:
    if not staging.is_dir():
        return set()
    return {path for path in staging.rglob("*.jsonl") if path.is_file()}


def _stage(
    copies: KeptCopies, key: str, committed: int | None, staging: Path, target: Path
) -> bool:
    """Write the copy's lines to ``target`` (a temporary name first: a half-written file must
    never look like a whole one to the next run); ``False`` if the copy holds no line."""
    lines = [line for frame in copies.read(SOURCE, key, committed) for line in frame.lines]
    if not lines:
        return False
    ensure_private_dir(staging)
    ensure_private_dir(target.parent)
    temp = target.with_name(target.name + ".part")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(b"\n".join(lines) + b"\n")
    os.replace(temp, target)
    return True
