"""The SQLite index: opening connections (migrated, or a lean reader) and write transactions.

The database is an index over the transcripts and can be rebuilt from them (``clawback
reindex``), except for what only a person wrote here (session labels, edited facts), which
rebuilding never drops. Connections use WAL and a busy timeout so a reader (the app, a search)
never blocks the single writer (ingestion) and vice versa. The schema lives in
:mod:`clawback.core.schema`; this module imports sqlite-utils only when a full connection is
opened, so a search from the command line starts quickly.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from clawback.core.faults import cannot_write_in
from clawback.core.paths import ensure_private_file

if TYPE_CHECKING:  # imported when a full connection is opened (start-up cost, not a cycle)
    import sqlite_utils

BUSY_TIMEOUT_MS = 15_000


class Queryable(Protocol):
    """What a read needs of a connection: ``sqlite3.Connection`` or ``sqlite_utils.Database``.

    Searches take either, so the command line can search through a plain connection without
    importing sqlite-utils.
    """

    def execute(self, sql: str, parameters: Any = ..., /) -> sqlite3.Cursor: ...


WAL_CHECKPOINT_PAGES = 10_000  # see connect()
WAL_KEEP_BYTES = 8 * 1024 * 1024
#: the newest migration in :mod:`clawback.core.schema` (a test keeps the two in step)
LATEST_MIGRATION = "0014_usage"


def connect(path: Path | str | None = None) -> sqlite_utils.Database:
    """Open (and migrate) the index. ``None`` gives an in-memory database for tests."""
    import sqlite_utils
    from clawback.core.schema import migrations

    read_only = False
    if path is None:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    else:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if _cut_to_nothing(path):
            raise sqlite3.DatabaseError(CUT_TO_NOTHING)
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _use_wal(conn)
        except sqlite3.OperationalError:
            conn.close()
            if not (path.is_file() and cannot_write_in(path.parent)):
                raise
            conn, read_only = read_only_connection(path), True
        else:
            conn.execute("PRAGMA synchronous = NORMAL")
            # Ingestion commits once per file, and a checkpoint (which syncs the database
            # file) every 1,000 pages, SQLite's default, came every few files: a tenth of
            # ingest time. Every 10,000 pages (40 MB) instead, and the WAL is cut back to
            # 8 MB once emptied.
            conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            conn.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    conn.isolation_level = None  # we open transactions ourselves: BEGIN IMMEDIATE for writers
    # No sqlite-utils plugins: none may change clawback's connection, and looking for them
    # read every installed package's metadata (importlib.metadata, 30-60 ms of each start).
    db = sqlite_utils.Database(conn, execute_plugins=False)
    if migrations.pending(db):
        if read_only:  # what it would take to migrate cannot be written: say why
            raise sqlite3.OperationalError(
                "attempt to write a readonly database (the index needs upgrading first)"
            )
        # Two processes opening a new home at once must not both create the schema: the
        # write lock taken up front makes the second wait, then find nothing pending.
        with write_transaction(db):
            migrations.apply(db)
    _add_vocabulary(conn)
    if path is not None and not read_only:
        for suffix in ("", "-wal", "-shm"):
            ensure_private_file(Path(str(path) + suffix))
    return db


def connect_reader(path: Path) -> sqlite3.Connection | None:
    """A plain connection for queries, or ``None`` when the index must be opened fully first.

    It is ``None`` when the database does not exist yet or its schema is behind
    (:data:`LATEST_MIGRATION` not applied): :func:`connect` creates or migrates it.
    """
    if not path.is_file() or _cut_to_nothing(path):  # the full open says what is wrong
        return None
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        try:
            current = _current(conn)
        except sqlite3.OperationalError:
            conn.close()
            if not cannot_write_in(path.parent):
                raise
            conn = read_only_connection(path)
            current = _current(conn)
    except sqlite3.DatabaseError:
        conn.close()
        return None
    if not current:
        conn.close()
        return None
    conn.isolation_level = None
    _add_vocabulary(conn)
    return conn


CUT_TO_NOTHING = "database disk image is malformed: the file was cut to 0 bytes"


def _cut_to_nothing(path: Path) -> bool:
    """Whether the index file was cut to nothing while its log still holds data.

    Switching a new file to WAL writes its first page into the file itself, so an empty file
    beside a log with data is what remains of a cut index; left alone, opening it would wait
    out the busy timeout on the old log's readers and say "locked".
    """
    log = Path(f"{path}-wal")
    return path.is_file() and path.stat().st_size == 0 and log.is_file() and log.stat().st_size > 0


def _current(conn: sqlite3.Connection) -> bool:
    """Whether the schema is up to date (the newest migration is recorded)."""
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return bool(
        conn.execute(
            "SELECT 1 FROM _sqlite_migrations WHERE migration_set = 'clawback' AND name = ?",
            (LATEST_MIGRATION,),
        ).fetchone()
    )


def read_only_connection(path: Path) -> sqlite3.Connection:
    """A connection that only reads, for an index in a home nothing can be written to.

    A WAL database normally needs its ``-shm`` file created or writable; on a read-only
    mount SQLite reads it as it is, or, when no log is waiting to be folded in, the file is
    opened immutable (nothing can change it while the mount is read-only).
    """
    log = Path(str(path) + "-wal")
    settled = not (log.exists() and log.stat().st_size > 0)
    uri = f"{path.resolve().as_uri()}?mode=ro{'&immutable=1' if settled else ''}"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def _add_vocabulary(conn: sqlite3.Connection) -> None:
    """The index's vocabulary, for search's prefix expansion; temp, so per connection and free."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.entries_vocab"
        " USING fts5vocab(main, entries_fts, 'row')"
    )


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting for another process that is doing the same.

    Switching a new database to WAL takes an exclusive lock, and SQLite answers "database is
    locked" at once instead of calling the busy handler, so two processes creating one home at
    the same moment (two ``clawback ingest`` runs, say) retry here up to the busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite3.Connection]:
    """One write transaction, taking the write lock up front.

    ``BEGIN IMMEDIATE`` makes a second writer wait (``busy_timeout``) at the start instead of
    failing half-way when a read transaction tries to upgrade. Inside another write transaction
    (an ingest commits small files together) it is a savepoint: its work is undone alone on an
    error and committed with the outer transaction.
    """
    conn = db.conn
    if conn.in_transaction:
        conn.execute("SAVEPOINT nested")
        try:
            yield conn
        except BaseException:
            # Some errors (a full disk) make SQLite roll the whole transaction back itself:
            # then there is nothing left to undo, and the original error is the one to see.
            if conn.in_transaction:
                conn.execute("ROLLBACK TO nested")
                conn.execute("RELEASE nested")
            raise
        conn.execute("RELEASE nested")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    # Gone only if SQLite rolled it back under a savepoint whose error the caller handled
    # (an ingest goes on to the next file): what was lost is read again next time.
    if conn.in_transaction:
        conn.execute("COMMIT")
