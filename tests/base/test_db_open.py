"""Opening the index when another process is creating it at the same moment.

Switching a new database to WAL needs an exclusive lock, and when two openers both want it
SQLite answers "database is locked" at once rather than calling the busy handler (waiting
would deadlock). Seen about once in 40 as a flaky two-ingests-at-once test; the race itself is
too rare to provoke on demand, so these tests drive the retry with a connection that is locked
for a while.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from clawback.core import db


class LockedFor:
    """Answers the WAL switch with "database is locked" ``times`` times, then succeeds."""

    def __init__(self, times: int) -> None:
        self.left, self.calls = times, 0

    def execute(self, sql: str) -> None:
        assert sql == "PRAGMA journal_mode = WAL"
        self.calls += 1
        if self.left:
            self.left -= 1
            raise sqlite3.OperationalError("database is locked")


def test_the_wal_switch_waits_for_the_other_opener() -> None:
    conn = LockedFor(3)
    db._use_wal(conn)  # type: ignore[arg-type]
    assert conn.calls == 4


def test_the_wal_switch_gives_up_after_the_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        db._use_wal(LockedFor(10**6))  # type: ignore[arg-type]


def test_other_errors_are_not_retried() -> None:
    class Broken:
        calls = 0

        def execute(self, sql: str) -> None:
            self.calls += 1
            raise sqlite3.OperationalError("disk I/O error")

    conn = Broken()
    with pytest.raises(sqlite3.OperationalError, match="disk"):
        db._use_wal(conn)  # type: ignore[arg-type]
    assert conn.calls == 1


def test_a_second_opener_finds_the_index_in_wal(tmp_path: Path) -> None:
    path = tmp_path / "clawback.db"
    first, second = db.connect(path), db.connect(path)
    assert first.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert second.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    first.conn.close()
    second.conn.close()


def test_the_lean_reader_knows_the_newest_migration() -> None:
    """connect_reader trusts LATEST_MIGRATION to tell a current schema from one to migrate."""
    from clawback.core.schema import migrations

    assert migrations._migrations[-1].name == db.LATEST_MIGRATION


def test_the_lean_reader_opens_a_current_index_and_refuses_an_old_one(tmp_path: Path) -> None:
    path = tmp_path / "clawback.db"
    assert db.connect_reader(path) is None  # not there yet: the full open creates it
    db.connect(path).conn.close()
    reader = db.connect_reader(path)
    assert reader is not None
    assert reader.execute("SELECT count(*) FROM entries").fetchone() == (0,)
    reader.close()
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = ?", (db.LATEST_MIGRATION,))
    assert db.connect_reader(path) is None  # behind: the full open migrates first


def test_a_write_transaction_inside_another_is_a_savepoint(tmp_path: Path) -> None:
    index = db.connect(tmp_path / "t.db")
    index.execute("CREATE TABLE t (n INTEGER)")
    with db.write_transaction(index) as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ZeroDivisionError), db.write_transaction(index) as inner:
            inner.execute("INSERT INTO t VALUES (2)")
            raise ZeroDivisionError  # undoes this part alone
        with db.write_transaction(index) as inner:
            inner.execute("INSERT INTO t VALUES (3)")
        other = sqlite3.connect(tmp_path / "t.db")
        assert other.execute("SELECT count(*) FROM t").fetchone()[0] == 0  # not committed yet
    assert [n for (n,) in other.execute("SELECT n FROM t ORDER BY n")] == [1, 3]
    other.close()


def test_the_error_that_made_sqlite_roll_back_is_the_one_raised(tmp_path: Path) -> None:
    index = db.connect(tmp_path / "t.db")
    with (
        pytest.raises(ZeroDivisionError),
        db.write_transaction(index),
        db.write_transaction(index) as inner,
    ):
        inner.execute("ROLLBACK")  # what SQLite does itself on a full disk
        raise ZeroDivisionError
    assert not index.conn.in_transaction


def test_a_group_whose_transaction_sqlite_dropped_still_ends_cleanly(tmp_path: Path) -> None:
    index = db.connect(tmp_path / "t.db")
    index.execute("CREATE TABLE t (n INTEGER)")
    with db.write_transaction(index):
        with pytest.raises(ZeroDivisionError), db.write_transaction(index) as inner:
            inner.execute("INSERT INTO t VALUES (1)")
            inner.execute("ROLLBACK")  # SQLite on a full disk; the caller goes on
            raise ZeroDivisionError
        with db.write_transaction(index) as alone:  # a transaction of its own now
            alone.execute("INSERT INTO t VALUES (2)")
    assert [n for (n,) in index.execute("SELECT n FROM t")] == [2]
