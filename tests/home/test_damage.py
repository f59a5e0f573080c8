"""A damaged, read-only, full or half-written index: one clear line each, and ``reindex``
rebuilds a damaged one from the transcripts, keeping what a person made (issue 19)."""

from __future__ import annotations

import errno
import gc
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from clawback.core.faults import explain

from tests.cli_runner import CLAWBACK, run_cli
from tests.fake_claude.fixtures import FAKE_CLAUDE
from tests.helpers import cc_assistant, cc_user, corrupt_pages, write_lines

SID = "abcdef01-2222-4333-8444-555555555555"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with one ingested session (the quokka migration), a label and an edited fact."""
    home, projects = tmp_path / "home", tmp_path / "projects"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw_path = "{tmp_path / "none"}"\n'
    )
    turns = [cc_user(SID, "u1", "plan the quokka migration")]
    turns += [
        cc_assistant(SID, f"a{i}", [{"type": "text", "text": f"step {i}: move table {i} " * 40}])
        for i in range(200)
    ]
    write_lines(projects / "proj" / f"{SID}.jsonl", turns)
    assert run_cli("ingest", home=home).returncode == 0
    with sqlite3.connect(home / "clawback.db") as conn:
        conn.execute("UPDATE sessions SET label = 'quokka work' WHERE id = ?", (SID,))
        conn.execute(
            "INSERT INTO facts (type, content, created_at, updated_at, edited)"
            " VALUES ('decision', 'keep the quokkas in postgres', '2026-01-01', '2026-01-01', 1)"
        )
    with sqlite3.connect(home / "clawback.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return home


def corrupt_table(database: Path, table: str) -> None:
    """Garbage over every page of ``table`` but its root: the rest of the file stays sound."""
    with sqlite3.connect(database) as conn:
        pages = [row[0] for row in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno", (table,))][1:]  # fmt: skip
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    assert pages, f"{table} has one page only"
    with database.open("r+b") as file:
        for page in pages:
            file.seek((page - 1) * size)
            file.write(b"\xde\xad\xbe\xef" * (size // 4))


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    assert stderr.count("\n") == 1, stderr
    return stderr


def test_a_damaged_index_is_one_line_then_reindex_rebuilds_it_keeping_labels_and_facts(
    home: Path,
) -> None:
    corrupt_table(home / "clawback.db", "entries")
    for command in (("search", "quokka"), ("health",), ("show", SID)):
        failed = run_cli(*command, home=home)
        assert failed.returncode == 1
        assert "is damaged" in one_line(failed.stderr) and "clawback reindex" in failed.stderr

    rebuilt = run_cli("reindex", home=home)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "Traceback" not in rebuilt.stderr
    assert "set aside as clawback.db.damaged-" in rebuilt.stderr
    assert "kept 1 labels" in rebuilt.stderr and "1 facts" in rebuilt.stderr
    assert "could not read" not in rebuilt.stderr
    assert len(list(home.glob("clawback.db.damaged-*"))) >= 1

    found = run_cli("search", "quokka", "--json", home=home)
    assert found.returncode == 0 and SID in found.stdout
    listed = run_cli("sessions", "--json", home=home)
    assert '"quokka work"' in listed.stdout
    facts = run_cli("facts", home=home)
    assert "keep the quokkas in postgres" in facts.stdout
    assert run_cli("reindex", home=home).stderr.count("damaged") == 0  # sound now
    told = run_cli("health", home=home)
    assert "Set aside as damaged" in told.stdout and "clawback.db.damaged-" in told.stdout


def test_reindex_says_what_it_could_not_read(home: Path) -> None:
    corrupt_pages(home / "clawback.db", first_page=2)
    rebuilt = run_cli("reindex", home=home)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "could not read all of" in rebuilt.stderr and "labels" in rebuilt.stderr
    found = run_cli("search", "quokka", "--json", home=home)
    assert found.returncode == 0 and SID in found.stdout


def test_a_wal_cut_short_under_a_running_process_is_one_line(home: Path) -> None:
    """A process holds the index open with a log not yet folded in; the log is cut short."""
    holder = subprocess.Popen(
        [shutil.which("python3") or "python3", "-c", (
            "import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(home / 'clawback.db')!r})\n"
            "c.execute('PRAGMA wal_autocheckpoint = 0')\n"
            "for i in range(30):\n"
            "    c.execute('UPDATE entries SET text = text || ? WHERE id % 30 = ?', ('x', i))\n"
            "    c.commit()\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        wal = home / "clawback.db-wal"
        with wal.open("r+b") as file:
            file.truncate(4096)
        for command in (("search", "quokka"), ("health",)):
            failed = run_cli(*command, home=home)
            assert failed.returncode == 1
            assert "write-ahead log" in one_line(failed.stderr)
    finally:
        holder.kill()
        holder.wait()
    gc.collect()  # a connection the failed calls left to the collector holds the log index too
    assert run_cli("search", "quokka", home=home).returncode == 0  # the holder is gone


def _in_private_mounts(script: str) -> subprocess.CompletedProcess[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run([unshare, "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("no private mount namespace here (needs root)")
    return subprocess.run(
        [unshare, "-m", "sh", "-euc", script], capture_output=True, text=True, check=False
    )


def test_a_read_only_home_still_reads_and_says_why_it_cannot_write(home: Path) -> None:
    run = _in_private_mounts(
        f"mount --bind {home} {home}; mount -o remount,ro,bind {home}\n"
        f"export CLAWBACK_HOME={home}\n"
        f"{CLAWBACK} search quokka --json > {home.parent}/search.out\n"
        f"{CLAWBACK} sessions --json > {home.parent}/sessions.out\n"
        f"{CLAWBACK} ingest 2> {home.parent}/ingest.err || echo $? > {home.parent}/ingest.rc\n"
    )
    assert run.returncode == 0, run.stderr
    assert SID in (home.parent / "search.out").read_text()
    assert "quokka work" in (home.parent / "sessions.out").read_text()
    said = one_line((home.parent / "ingest.err").read_text())
    assert "is read-only" in said and "search" in said
    assert (home.parent / "ingest.rc").read_text().strip() == "1"


def test_a_full_disk_says_so(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    write_lines(
        projects / "p" / f"{SID}.jsonl",
        [cc_user(SID, f"u{i}", f"line {i} " + "words " * 400) for i in range(400)],
    )
    small = tmp_path / "small"
    small.mkdir()
    run = _in_private_mounts(
        f"mount -t tmpfs -o size=1m tmpfs {small}\n"
        f"mkdir {small}/home\n"
        f"printf '[sources]\\nclaude_code_path = \"{projects}\"\\n' > {small}/home/config.toml\n"
        f"CLAWBACK_HOME={small}/home {CLAWBACK} ingest 2> {tmp_path}/ingest.err"
        f" || echo $? > {tmp_path}/ingest.rc\n"
    )
    assert run.returncode == 0, run.stderr
    said = one_line((tmp_path / "ingest.err").read_text())
    assert "is full" in said, said
    assert (tmp_path / "ingest.rc").read_text().strip() == "1"


def test_a_chat_turn_on_a_full_disk_says_so(tmp_path: Path) -> None:
    """It said "disk I/O error"."""
    small = tmp_path / "small"
    small.mkdir()
    run = _in_private_mounts(
        f"mount -t tmpfs -o size=600k tmpfs {small}\n"
        f"export CLAWBACK_HOME={small}/home CLAWBACK_CLAUDE={FAKE_CLAUDE}\n"
        f"{CLAWBACK} chat 'hello there' > /dev/null\n"
        f"dd if=/dev/zero of={small}/fill bs=1k count=2000 2> /dev/null || true\n"
        f"{CLAWBACK} chat 'hello again, with more words' 2> {tmp_path}/chat.err"
        f" || echo $? > {tmp_path}/chat.rc\n"
    )
    assert run.returncode == 0, run.stderr
    said = one_line((tmp_path / "chat.err").read_text())
    assert "the disk holding" in said and "is full: free some space" in said, said
    assert (tmp_path / "chat.rc").read_text().strip() == "1"


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (sqlite3.OperationalError("database or disk is full"), "is full"),
        (sqlite3.OperationalError("database is locked"), "locked by another process"),
        (sqlite3.DatabaseError("file is not a database"), "is damaged"),
        (OSError(errno.ENOSPC, "No space left on device"), "is full"),
        (OSError(errno.EROFS, "Read-only file system"), "is read-only"),
    ],
)
def test_each_cause_has_its_own_line(tmp_path: Path, exc: Exception, expected: str) -> None:
    if "full" in str(exc) and isinstance(exc, sqlite3.Error):
        exc.sqlite_errorcode = 13
    said = explain(exc, tmp_path / "clawback.db")
    assert expected in said and "\n" not in said
