"""``clawback health``: what the index holds per source, and everything it could not read.

Counts per source, files left mid-ingest, skipped lines and files with their reasons, torn
tails, conversations by status, and whether the ``claude`` CLI is there. Only reads.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core.faults import set_aside_files
from clawback.core.ingest.problems import skipped_files
from clawback.core.paths import Paths


@dataclass
class Health:
    database: str
    database_bytes: int
    sources: dict[str, dict[str, int]] = field(default_factory=dict)
    stuck_ingesting: list[str] = field(default_factory=list)
    skipped_lines: int = 0
    skipped_reasons: dict[str, int] = field(default_factory=dict)
    # which lines: {"path", "line", "reason"}, the first SKIPPED_LINES_SHOWN of them
    skipped_line_list: list[dict[str, Any]] = field(default_factory=list)
    skipped_files: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"}
    incomplete_tails: list[dict[str, Any]] = field(default_factory=list)  # {"path", "bytes"}
    conversations: dict[str, int] = field(default_factory=dict)
    claude_path: str | None = None
    claude_version: str | None = None
    set_aside: list[str] = field(default_factory=list)  # damaged files renamed, not deleted

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


SKIPPED_LINES_SHOWN = 200


def health(db: sqlite_utils.Database, paths: Paths, claude_command: str = "claude") -> Health:
    db_path = paths.database
    size = sum(
        Path(str(db_path) + suffix).stat().st_size
        for suffix in ("", "-wal")
        if Path(str(db_path) + suffix).exists()
    )
    report = Health(database=str(db_path), database_bytes=size)
    for source, files, missing, skipped in db.execute(
        "SELECT source, count(*), sum(missing), sum(skipped_lines) FROM files GROUP BY source"
    ).fetchall():
        report.sources[source] = {
            "files": files,
            "missing_files": missing,
            "skipped_lines": skipped,
        }
    for source, sessions, entries in db.execute(
        "SELECT s.source, count(*), sum(s.entry_count) FROM sessions s GROUP BY s.source"
    ).fetchall():
        report.sources.setdefault(source, {}).update({"sessions": sessions, "entries": entries})
    memory = db.execute(
        "SELECT count(*) FROM entries e JOIN files f ON f.id = e.file_id WHERE f.source = 'memory'"
    ).fetchone()[0]
    if "memory" in report.sources:
        report.sources["memory"]["entries"] = memory
    report.stuck_ingesting = [
        row[0] for row in db.execute("SELECT path FROM files WHERE status = 'ingesting'")
    ]
    for reason, n in db.execute(
        "SELECT reason, count(*) FROM skipped_lines GROUP BY reason ORDER BY count(*) DESC"
    ).fetchall():
        report.skipped_reasons[reason] = n
        report.skipped_lines += n
    report.skipped_line_list = [
        {"path": path, "line": line, "reason": reason}
        for path, line, reason in db.execute(
            """SELECT f.path, s.line, s.reason FROM skipped_lines s JOIN files f ON f.id = s.file_id
               ORDER BY f.path, s.line LIMIT ?""",
            (SKIPPED_LINES_SHOWN,),
        )
    ]
    report.skipped_files = skipped_files(db)
    report.incomplete_tails = [
        {"path": path, "bytes": n}
        for path, n in db.execute(
            "SELECT path, tail_bytes FROM files WHERE tail_bytes > 0 AND missing = 0 ORDER BY path"
        )
    ]
    report.conversations = dict(
        db.execute("SELECT status, count(*) FROM conversations GROUP BY status").fetchall()
    )
    report.claude_path, report.claude_version = claude_version(claude_command)
    report.set_aside = [str(path) for path in set_aside_files(paths.home)]
    return report


def claude_version(command: str = "claude") -> tuple[str | None, str | None]:
    """Where ``claude`` is and what ``claude --version`` says (never raises)."""
    path = shutil.which(os.environ.get("CLAWBACK_CLAUDE") or command)
    if not path:
        return None, None
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return path, None
    lines = out.stdout.strip().splitlines()
    return path, lines[0] if lines else None
