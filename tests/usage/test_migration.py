"""Migration ``0014_usage``: from a blank index and from the one before, whose homes get their
usage on the next ingest without reading their files into entries again (item 1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlite_utils
from clawback.core.db import connect
from clawback.core.home import Home
from clawback.core.schema import migrations

from tests.helpers import cc_user
from tests.usage.test_index import SID, reply, totals, write

OTHER = "7a7a7a7a-1111-4222-8333-444455556666"


def _schema(path: Path) -> set[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        return {
            (name, " ".join(sql.split()))
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"
                " AND name NOT LIKE 'sqlite_%'"
            )
        }
    finally:
        conn.close()


def _as_before_usage(db: Path) -> None:
    """Take an index back to the schema before ``0014_usage``, keeping its entries."""
    conn = sqlite3.connect(db)
    conn.executescript(
        """
        DROP TABLE usage;
        DROP TABLE usage_buckets;
        DROP INDEX files_usage_unread;
        ALTER TABLE files DROP COLUMN usage_read;
        DELETE FROM _sqlite_migrations WHERE name = '0014_usage';
        """
    )
    conn.commit()
    conn.close()


def test_a_blank_index_gets_the_usage_tables(tmp_path: Path) -> None:
    db = connect(tmp_path / "blank.db")
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert {"usage", "usage_buckets", "files_usage_unread"} <= names
    assert "usage_read" in {column.name for column in db["files"].columns}
    db.conn.close()


def test_an_index_from_before_gets_its_usage_without_a_rebuild(
    tmp_path: Path, cc_root: Path
) -> None:
    main = write(
        cc_root / "-p" / f"{SID}.jsonl",
        cc_user(SID, "q1", "question"),
        reply("a1", "msg_A", 1),
        reply("a2", "msg_A", 40),
    )
    write(cc_root / "-p" / SID / "subagents" / "agent-x.jsonl",
          reply("s1", "msg_S", 7, request="req_s", sidechain=True))  # fmt: skip
    gone = write(cc_root / "-q" / f"{OTHER}.jsonl", cc_user(OTHER, "q2", "hi"),
                 reply("b1", "msg_B", 5, session=OTHER))  # fmt: skip

    def opened(name: str) -> Home:
        home = Home.open(tmp_path / name)
        home.config.sources.claude_code_path = str(cc_root)
        home.config.sources.openclaw_path = str(tmp_path / "none")
        return home

    fresh = opened("fresh")
    fresh.ingest_all()
    expected = totals(fresh), totals(fresh, OTHER)
    fresh.close()

    old = opened("old")
    old.ingest_all()
    old.close()
    database = tmp_path / "old" / "clawback.db"
    _as_before_usage(database)
    before = tmp_path / "before.db"
    migrations.apply(sqlite_utils.Database(before), stop_before="0014_usage")
    assert _schema(database) == _schema(before)  # a faithful index from before

    # While the home was on the old version: a file grew, and one was deleted (its kept copy
    # remains).
    write(main, reply("a3", "msg_C", 3, request="req_c"), append=True)
    gone.unlink()
    home = opened("old")
    try:
        assert home.db.execute("SELECT count(*) FROM files WHERE usage_read = 0").fetchone()[0] == 3
        entries = set(home.db.execute("SELECT id, file_id, line, text FROM entries"))
        stats = home.ingest_all()
        assert stats.files == 1 and stats.reimported == 0  # only the grown file, from its end
        assert home.db.execute("SELECT count(*) FROM files WHERE usage_read = 0").fetchone()[0] == 0
        # Entries read before were not read again: each is where it was.
        assert entries <= set(home.db.execute("SELECT id, file_id, line, text FROM entries"))
        inp, out, read, write_ = expected[0]
        assert totals(home) == (inp + 10, out + 3, read, write_ + 100)
        assert totals(home, OTHER) == expected[1]  # read back from the kept copy
        again = home.ingest_all()
        assert again.files == 0 and totals(home) == (inp + 10, out + 3, read, write_ + 100)
    finally:
        home.close()
