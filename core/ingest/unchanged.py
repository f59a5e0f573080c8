"""The ``clawback ingest`` that finds nothing to do, answered through a plain read connection.

Most runs of ``clawback ingest`` find every file as it was. Opening the home to write imports the
whole ingest path (sqlite-utils among it) before the scan can say so, which was most of such a
run's time. :func:`unchanged_rescan` asks the questions the full ingest asks, with the same
:func:`.scan.scan` and :func:`.scan.gone_files`, and answers only when the answer is "nothing":
a file to read, a file gone, a new problem to record, or a repair, usage read-back, summary title
or conversation end still waiting, or a home it could not write to, and it returns ``None`` so
the full ingest runs (and says what is wrong, if anything is).
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from clawback.core.archive import any_ripe
from clawback.core.config import Config, load_config
from clawback.core.db import connect_reader
from clawback.core.errors import ClawbackError
from clawback.core.ingest.problems import recorded_under
from clawback.core.ingest.scan import gone_files, scan
from clawback.core.ingest.sources import configured_roots
from clawback.core.ingest.stats import IngestStats
from clawback.core.paths import Paths
from clawback.core.records import Source
from clawback.core.safejson import clean_text
from clawback.core.text import seal

# Work a full ingest does first even when no file changed (see Ingestor.recover and ingest):
# a file a killed run left half-read, usage not yet read back, summaries to match to sessions.
_FILES_WAITING = (
    "SELECT 1 FROM files WHERE status = 'ingesting' OR usage_read = 0 OR new_entries = 1 LIMIT 1"
)


def unchanged_rescan(paths: Paths) -> IngestStats | None:
    """The stats of ``clawback ingest`` over every configured source when it would change
    nothing in the index; ``None`` when it would change something or cannot tell."""
    started = time.perf_counter()
    try:
        config = load_config(paths.config)
    except ClawbackError:
        return None  # the full open names what is wrong with the settings
    if not os.access(paths.database.parent, os.W_OK):
        return None  # a home it cannot write to: the full ingest says so, even with no change
    conn = connect_reader(paths.database)
    if conn is None:
        return None
    try:
        stats = _unchanged(conn, config, paths)
    except (sqlite3.Error, OSError):
        return None  # the full ingest meets the same trouble and says what it is
    finally:
        conn.close()
    if stats is not None:
        stats.seconds = time.perf_counter() - started
    return stats


def _unchanged(conn: sqlite3.Connection, config: Config, paths: Paths) -> IngestStats | None:
    archive = config.archive
    if conn.execute(_FILES_WAITING).fetchone() or any_ripe(conn, archive.conversation_gap_minutes):
        return None
    max_line = archive.max_line_mb * 1024 * 1024

    def detect(path: Path) -> tuple[Source | None, str]:
        from clawback.core.formats.detect import detect_file

        return detect_file(path, max_line)

    sealing = seal if archive.mask_secrets else clean_text
    roots = configured_roots(config, paths)
    stats = IngestStats()
    found = scan(
        conn, roots, reimport=False, stats=stats, seal=sealing, detect=detect,
        keep=archive.keep_lines,
    )  # fmt: skip
    if found.work or not stats.unchanged or gone_files(conn, found.seen, full=True):
        return None
    problems = set(stats.skipped_files)
    if recorded_under(conn, roots, sealing) != problems:
        return None  # a problem to record, or a fixed one to forget
    stats.known_skips = problems
    return stats
