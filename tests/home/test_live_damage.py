"""The index damaged under processes that hold it open for hours (issue 19 items 5 and 7):
``clawback watch`` and ``clawback mcp`` as real processes, their files cut or deleted under them.

A cut ``clawback.db-shm`` used to kill both with SIGBUS and no message; a deleted index left
watch writing into the deleted file and the server answering from it.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.core.home import Home
from clawback.core.spawning import clawback_command

from tests.cli_runner import CLAWBACK, run_cli
from tests.helpers import cc_user, corrupt_pages, write_lines
from tests.mcp.test_protocol import StdioClient, _initialize

TIMEOUT = 30.0


class Watch:
    """``clawback watch`` on ``home``, its stderr lines read as they come."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "CLAWBACK_HOME": str(home)}
        self.proc = subprocess.Popen(
            [CLAWBACK, "watch"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        self.said: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)
        self.lines.put("")

    def wait_for(self, text: str) -> str:
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            self.said.append(line)
            assert line, f"watch ended ({self.proc.wait()}): {''.join(self.said)}"
            if text in line:
                return line

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(TIMEOUT)


@pytest.fixture
def sources(tmp_path: Path) -> tuple[Path, Path]:
    home, projects = tmp_path / "home", tmp_path / "projects"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{projects}"\nopenclaw = false\n'
    )
    write_lines(projects / "p" / "s1.jsonl", [cc_user("s1", "u1", "the first xylophone")])
    return home, projects


def say(projects: Path, uuid: str, text: str) -> None:
    with (projects / "p" / "s1.jsonl").open("a") as handle:
        handle.write(json.dumps(cc_user("s1", uuid, text)) + "\n")


def ingest(home: Path) -> None:
    """An ingest by another clawback, closed at once (an open connection in the test process
    would map the shared memory too, and be cut with it)."""
    opened = Home.open(home)
    try:
        opened.ingest_all()
    finally:
        opened.close()


def texts(home: Path) -> list[str]:
    opened = Home.open(home)
    try:
        return [row[0] for row in opened.db.execute("SELECT text FROM entries ORDER BY id")]
    finally:
        opened.close()


def test_watch_survives_its_shared_memory_file_cut_to_nothing(
    sources: tuple[Path, Path],
) -> None:
    home, projects = sources
    watch = Watch(home)
    try:
        watch.wait_for("Watching")
        watch.wait_for("+1 entries")  # the catch-up: the index is in use
        (home / "clawback.db-shm").write_bytes(b"")  # cut under the running watch
        say(projects, "u2", "then a zeppelin")
        watch.wait_for("+1 entries")
        say(projects, "u3", "and a quokka")
        watch.wait_for("+1 entries")
        assert watch.proc.poll() is None
    finally:
        code = watch.stop()
    assert code == 0, "".join(watch.said)
    assert texts(home) == ["the first xylophone", "then a zeppelin", "and a quokka"]


def test_watch_reopens_an_index_deleted_under_it(sources: tuple[Path, Path]) -> None:
    home, projects = sources
    watch = Watch(home)
    try:
        watch.wait_for("Watching")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{home / 'clawback.db'}{suffix}").unlink(missing_ok=True)
        say(projects, "u2", "then a zeppelin")
        line = watch.wait_for("the index was removed")
        assert "reopened" in line
        watch.wait_for("entries")
    finally:
        assert watch.stop() == 0, "".join(watch.said)
    # the new index holds everything, read again from the source, not only the new line
    assert texts(home) == ["the first xylophone", "then a zeppelin"]


def test_an_index_cut_to_nothing_under_watch_is_named_and_rebuilt(
    sources: tuple[Path, Path],
) -> None:
    """It used to wait out the 15 s busy timeout and say "database is locked"."""
    home, projects = sources
    watch = Watch(home)
    try:
        watch.wait_for("Watching")
        watch.wait_for("+1 entries")
        (home / "clawback.db").write_bytes(b"")
        started = time.monotonic()
        failed = run_cli("search", "xylophone", home=home)
        assert time.monotonic() - started < 5
        assert failed.returncode == 1 and "is damaged" in failed.stderr, failed.stderr
        assert "cut to 0 bytes" in failed.stderr and "clawback reindex" in failed.stderr
        say(projects, "u2", "then a zeppelin")
        assert "reopened" in watch.wait_for("the index was cut to 0 bytes")
        watch.wait_for("entries")
    finally:
        assert watch.stop() == 0, "".join(watch.said)
    assert texts(home) == ["the first xylophone", "then a zeppelin"]
    assert list(home.glob("clawback.db.damaged-*"))


@pytest.fixture
def client(sources: tuple[Path, Path]) -> Iterator[StdioClient]:
    home, _ = sources
    ingest(home)
    server = StdioClient([*clawback_command(), "mcp"], {**os.environ, "CLAWBACK_HOME": str(home)})
    _initialize(server)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        server.proc.wait(TIMEOUT)


def _found(client: StdioClient, word: str) -> list[str]:
    answer = client.call("memory_search", query=word)
    assert not answer["isError"], answer
    return [hit["snippet"] for hit in answer["structuredContent"]["results"]]


def test_the_mcp_server_survives_its_shared_memory_file_cut(
    sources: tuple[Path, Path], client: StdioClient
) -> None:
    home, _ = sources
    assert _found(client, "xylophone")
    (home / "clawback.db-shm").write_bytes(b"")
    for _ in range(3):
        assert _found(client, "xylophone")
    assert client.proc.poll() is None


def test_the_mcp_server_answers_from_the_index_that_replaced_its_own(
    sources: tuple[Path, Path], client: StdioClient
) -> None:
    home, projects = sources
    assert _found(client, "xylophone")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home / 'clawback.db'}{suffix}").unlink(missing_ok=True)
    gone = client.call("memory_search", query="xylophone")
    assert gone["isError"] and "was removed" in gone["content"][0]["text"]
    say(projects, "u2", "then a zeppelin")
    ingest(home)  # a new index, made by another process
    assert _found(client, "zeppelin")


GUARDED = """
import sqlite3, sys
from pathlib import Path
from clawback.core.db_guard import IndexFile, guard_bus_errors
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT count(*) FROM entries").fetchall()
if sys.argv[2] == "guarded":
    IndexFile(Path(sys.argv[1]))
    guard_bus_errors()
print("ready", flush=True)
sys.stdin.readline()
for i in range(5):
    conn.execute("UPDATE sessions SET label = ?", (str(i),))
    conn.execute("SELECT count(*) FROM entries").fetchall()
conn.close()
print("done", flush=True)
"""


@pytest.mark.parametrize("guarded", [True, False])
def test_a_bus_error_mid_read_is_mended_where_the_guard_is_on(
    sources: tuple[Path, Path], guarded: bool
) -> None:
    """The cut lands while the process is inside SQLite (no check before it): the SIGBUS
    handler grows the file back and the read goes on. Unguarded, the process dies of it."""
    home, _ = sources
    ingest(home)
    database = home / "clawback.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", GUARDED, str(database), "guarded" if guarded else "bare"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    Path(f"{database}-shm").write_bytes(b"")
    out, err = proc.communicate("go\n", timeout=TIMEOUT)
    if guarded:
        assert (proc.returncode, out, err) == (0, "done\n", "")
    else:
        assert proc.returncode == -signal.SIGBUS


def test_the_mcp_server_names_a_damaged_index_and_keeps_serving(
    sources: tuple[Path, Path], client: StdioClient
) -> None:
    home, _ = sources
    assert _found(client, "xylophone")
    with sqlite3.connect(home / "clawback.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    corrupt_pages(home / "clawback.db", first_page=2)
    answer = client.call("memory_search", query="xylophone")
    said = answer["content"][0]["text"]
    assert answer["isError"] and "is damaged" in said and "clawback reindex" in said, said
    assert "\n" not in said
    assert client.call("memory_get", ref="fact:1")["isError"]  # still answering


STORE_READER = """
import sys
from pathlib import Path
from clawback.core.db_guard import guard_bus_errors
from clawback.core.embeddings.store import VectorStore
store = VectorStore.open(Path(sys.argv[1]))
store.count()
if sys.argv[2] == "guarded":
    guard_bus_errors()
print("ready", flush=True)
sys.stdin.readline()
print(store.count(), flush=True)
store.close()
"""


@pytest.mark.parametrize("guarded", [True, False])
def test_the_vector_store_shared_memory_is_mended_too(tmp_path: Path, guarded: bool) -> None:
    np = pytest.importorskip("numpy", reason="embeddings are an extra")
    from clawback.core.embeddings.store import VectorStore

    store = VectorStore.open(tmp_path / "embeddings.db")
    store.add([1, 2], [11, 12], np.ones((2, 4)))
    store.close()
    proc = subprocess.Popen(
        [sys.executable, "-c", STORE_READER, str(tmp_path / "embeddings.db"),
         "guarded" if guarded else "bare"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    (tmp_path / "embeddings.db-shm").write_bytes(b"")
    out, _ = proc.communicate("go\n", timeout=TIMEOUT)
    if guarded:
        assert (proc.returncode, out) == (0, "2\n")
    else:
        assert proc.returncode == -signal.SIGBUS
