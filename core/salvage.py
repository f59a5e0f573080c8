"""Rebuilding a damaged index: what is read back out of it first, and put into the fresh one.

Everything the transcripts hold comes back from them (``clawback reindex``), but a few tables
hold what only exists here: session labels, the chat sessions and their compaction ledger, and
knowledge facts (some edited by hand). :func:`read_salvage` reads what it can of those from the
damaged file, table by table and row by row, and says which could not be read whole;
:func:`restore` writes them into the fresh index before the transcripts are read again, and
:func:`restore_labels` puts the labels back once the sessions exist again.

This module reads the damaged file only; it never writes to it or deletes it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawback.core.db import write_transaction

if TYPE_CHECKING:
    import sqlite_utils

__all__ = ["Salvage", "read_salvage", "restore", "restore_labels"]

#: tables kept whole, in the order they are restored
KEPT_TABLES = ("chat_sessions", "compactions", "facts")


@dataclass
class Salvage:
    """What was read out of a damaged index."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    labels: list[tuple[str, str]] = field(default_factory=list)  # (session id, label)
    files: list[tuple[str, str, str]] = field(default_factory=list)  # (source, key, path)
    unreadable: list[str] = field(default_factory=list)  # what could not be read whole
    notice: str = ""  # the line that tells the person (set by whoever set the file aside)

    def summary(self) -> str:
        """One line: what was kept, and what could not be read."""
        kept = [f"{len(self.labels)} labels"] + [
            f"{len(rows)} {table.replace('_', ' ')}" for table, rows in self.tables.items()
        ]
        line = "kept " + ", ".join(kept)
        if self.unreadable:
            line += "; could not read all of: " + ", ".join(self.unreadable)
        return line


def _rows(conn: sqlite3.Connection, sql: str) -> tuple[list[sqlite3.Row], bool]:
    """The rows ``sql`` gives until the damage stops it, and whether it read them all."""
    found: list[sqlite3.Row] = []
    try:
        for row in conn.execute(sql):
            found.append(row)
    except sqlite3.DatabaseError:
        return found, False
    return found, True


def read_salvage(path: Path) -> Salvage:
    """Read what a person made out of the damaged index at ``path`` (as much as can be read)."""
    salvage = Salvage()
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error:
        salvage.unreadable = ["labels", *KEPT_TABLES, "the list of indexed files"]
        return salvage
    conn.row_factory = sqlite3.Row
    with contextlib.closing(conn):
        for table in KEPT_TABLES:
            rows, whole = _rows(conn, f"SELECT * FROM {table}")
            salvage.tables[table] = [dict(row) for row in rows]
            if not whole:
                salvage.unreadable.append(table.replace("_", " "))
        labels, whole = _rows(conn, "SELECT id, label FROM sessions WHERE label IS NOT NULL")
        salvage.labels = [(row["id"], row["label"]) for row in labels]
        if not whole:
            salvage.unreadable.append("labels")
        files, whole = _rows(conn, "SELECT source, file_key, path FROM files WHERE missing = 0")
        salvage.files = [(row["source"], row["file_key"], row["path"]) for row in files]
        if not whole:
            salvage.unreadable.append("the list of indexed files")
    return salvage


def restore(db: sqlite_utils.Database, salvage: Salvage) -> None:
    """Write the kept tables into the fresh index ``db`` (their columns as the schema has them).

    The files the old index knew are not written: ``reindex`` reads them again from where they
    are, and the fresh index records them as it does."""
    with write_transaction(db) as conn:
        for table, rows in salvage.tables.items():
            columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            for row in rows:
                kept = {name: value for name, value in row.items() if name in columns}
                names = ", ".join(f'"{name}"' for name in kept)
                marks = ", ".join("?" * len(kept))
                conn.execute(
                    f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})", list(kept.values())
                )
        if salvage.tables.get("facts"):
            conn.execute("INSERT INTO facts_fts (facts_fts) VALUES ('rebuild')")


def restore_labels(db: sqlite_utils.Database, salvage: Salvage) -> int:
    """Put the kept labels back on the sessions that exist again; how many found their session."""
    with write_transaction(db) as conn:
        before = conn.total_changes
        conn.executemany(
            "UPDATE sessions SET label = ? WHERE id = ? AND label IS NULL",
            [(label, session_id) for session_id, label in salvage.labels],
        )
        return conn.total_changes - before
