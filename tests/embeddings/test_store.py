"""The vector store and the worker: what is embedded, newest first, kills, model changes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlite_utils

np = pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")

from clawback.core.config import EmbeddingsConfig  # noqa: E402
from clawback.core.db import connect, write_transaction  # noqa: E402
from clawback.core.embeddings.chunks import embed_text, text_hash  # noqa: E402
from clawback.core.embeddings.embedder import HashEmbedder  # noqa: E402
from clawback.core.embeddings.store import VectorIndex, VectorStore  # noqa: E402
from clawback.core.embeddings.worker import (  # noqa: E402
    EmbedderBusy,
    EmbeddingWorker,
    embed_lock,
)


def fill(db: sqlite_utils.Database, turns: int) -> None:
    """A session of ``turns`` text turns plus what must not be embedded, a memory chunk, a fact."""
    with write_transaction(db) as conn:
        conn.execute(
            "INSERT INTO files (id, source, file_key, path) VALUES (1, 'claude-code', 's.jsonl', '/s')"
        )
        conn.execute(
            "INSERT INTO files (id, source, file_key, path) VALUES (2, 'memory', 'MEMORY.md', '/m')"
        )
        rows: list[tuple[object, ...]] = []
        for i in range(turns):
            role = "user" if i % 2 == 0 else "assistant"
            rows.append((1, i + 1, role, "text", f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z",
                         1, f"turn {i} about topic{i}"))  # fmt: skip
        rows.append((1, turns + 1, "assistant", "thinking", None, 0, "private thoughts"))
        rows.append((1, turns + 2, "tool", "tool_result", None, 0, "tool output"))
        rows.append((2, 1, "system", "text", None, 0, "# Memory\nalways use sqlite"))
        conn.executemany(
            "INSERT INTO entries (file_id, line, role, kind, ts, conversational, text)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute(
            "INSERT INTO facts (type, content, created_at, updated_at)"
            " VALUES ('decision', 'drop the cache layer', '2026-01-01', '2026-01-01')"
        )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    db = connect(tmp_path / "clawback.db")
    fill(db, 40)
    db.conn.close()
    return tmp_path


def open_worker(
    home: Path, embedder: HashEmbedder | None = None, batch: int = 4
) -> tuple[sqlite_utils.Database, VectorStore, EmbeddingWorker]:
    db = connect(home / "clawback.db")
    store = VectorStore.open(home / "embeddings.db")
    return db, store, EmbeddingWorker(db, store, embedder or HashEmbedder(16), batch=batch)


def test_embeds_text_turns_memory_and_facts_but_not_tools_or_thinking(home: Path) -> None:
    db, store, worker = open_worker(home)
    stats = worker.run()
    assert stats.embedded == 40 + 1 + 1
    texts = {row[0] for row in db.execute("SELECT text FROM entries")}
    stored = store.hashes()
    entry_ids = {row[0]: row[1] for row in db.execute("SELECT id, text FROM entries")}
    embedded_texts = {entry_ids[c] for c in stored if c > 0}
    assert "private thoughts" not in embedded_texts and "tool output" not in embedded_texts
    assert "# Memory\nalways use sqlite" in embedded_texts
    assert any(c < 0 for c in stored)  # the fact
    assert texts >= embedded_texts
    assert worker.coverage().ratio == 1.0
    assert worker.run().embedded == 0  # nothing left to do


def test_order_is_memory_and_facts_first_then_newest_turns(home: Path) -> None:
    _, _, worker = open_worker(home)
    todo, _ = worker.pending()
    texts = dict(worker.texts(todo))
    ordered = [texts[c] for c in todo]
    assert ordered[0].startswith("decision: drop the cache layer")
    assert ordered[1] == "# Memory always use sqlite"
    assert ordered[2] == "assistant: turn 39 about topic39\nuser: turn 38 about topic38"
    assert ordered[-1] == "user: turn 0 about topic0"


def test_labels_say_who_spoke() -> None:
    assert embed_text("user", "text", "claude-code", "hi\n there") == "user: hi there"
    assert embed_text("system", "compaction", "native", "s") == "summary: s"


def test_model_change_re_embeds_everything(home: Path) -> None:
    _, _, worker = open_worker(home, HashEmbedder(16))
    worker.run()
    _, store2, other = open_worker(home, HashEmbedder(32))
    stats = other.run()
    assert stats.wiped and stats.embedded == 42
    assert store2.meta() == ("hash-32", 32)


def test_changed_and_deleted_chunks_are_redone(home: Path) -> None:
    db, store, worker = open_worker(home)
    worker.run()
    first = db.execute("SELECT min(id) FROM entries").fetchone()[0]
    with write_transaction(db) as conn:
        conn.execute("UPDATE entries SET text = 'rewritten' WHERE id = ?", (first,))
        conn.execute("DELETE FROM entries WHERE id = ?", (first + 1,))
    stats = worker.run(verify=True)
    # The deleted one goes; the changed one is redone, and so is the short reply after the
    # deleted turn, which it was read with.
    assert stats.removed == 1 and stats.embedded == 2
    assert store.hashes()[first] == text_hash("user: rewritten")
    assert store.hashes()[first + 2] == text_hash("user: turn 2 about topic2")
    assert first + 1 not in store.hashes()


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    lock = tmp_path / "embed.lock"
    with embed_lock(lock), pytest.raises(EmbedderBusy), embed_lock(lock):
        pass
    with embed_lock(tmp_path / "embed.lock"):
        pass  # released


def test_index_search_finds_the_nearest_and_follows_the_store(home: Path) -> None:
    _, store, worker = open_worker(home)
    embedder = HashEmbedder(16)
    worker.run()
    index = VectorIndex(store)
    index.refresh()
    assert len(index) == 42
    query = embedder.embed(["decision: drop the cache layer"])[0]
    best = index.search(query, 3)
    assert best[0][0] < 0 and best[0][2] == pytest.approx(1.0, abs=1e-3)
    assert [score for *_, score in best] == sorted((s for *_, s in best), reverse=True)
    store.remove([best[0][0]])
    index.refresh()
    assert len(index) == 41 and index.search(query, 1)[0][0] != best[0][0]


def test_an_index_fed_a_few_rows_at_a_time_finds_what_one_read_once_finds(
    tmp_path: Path,
) -> None:
    """A turn just indexed adds a few vectors; they go into spare columns (the whole matrix
    was copied for each: 0.3 GB at 217,000 chunks, before the next prompt's recall), and a
    chunk embedded again keeps only its newest vector, as a fresh read gives."""
    rng = np.random.default_rng(7)
    store = VectorStore.open(tmp_path / "v.db")
    store.claim("m", 8)
    fed = VectorIndex(store)
    chunk = 0
    for step in range(40):
        count = 300 if step == 0 else int(rng.integers(1, 6))
        ids = list(range(chunk, chunk + count))
        if step % 7 == 3:
            ids[0] = int(rng.integers(0, chunk))  # re-embedded: its old vector goes
        chunk += count
        vectors = rng.normal(size=(count, 8)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.add(ids, [step] * count, vectors)
        fed.refresh()
        read_once = VectorIndex(store)
        read_once.refresh()
        query = vectors[-1]
        assert len(fed) == len(read_once)
        found = fed.search(query, 20)
        assert [c for c, _, _ in found] == [c for c, _, _ in read_once.search(query, 20)]
        assert [s for *_, s in found] == pytest.approx([s for *_, s in read_once.search(query, 20)])
    columns = fed._columns
    fed_more = rng.normal(size=(2, 8)).astype(np.float32)
    store.add([chunk, chunk + 1], [99, 99], fed_more)
    fed.refresh()
    assert fed._columns is columns  # two more rows: written in place, nothing copied


def test_vectors_round_trip_as_float16(tmp_path: Path) -> None:
    store = VectorStore.open(tmp_path / "v.db")
    store.claim("m", 4)
    vec = np.array([[0.5, -0.5, 0.5, -0.5]], np.float32)
    store.add([7], [1], vec)
    chunks, hashes, vectors, seq = store.rows_after(0)
    assert chunks.tolist() == [7] and hashes.tolist() == [1] and seq == 1
    assert np.allclose(vectors, vec)


KILLED_WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from clawback.core.db import connect
    from clawback.core.embeddings.embedder import HashEmbedder
    from clawback.core.embeddings.store import VectorStore
    from clawback.core.embeddings.worker import EmbeddingWorker, embed_lock

    home = Path(sys.argv[1])
    class Announcing(HashEmbedder):
        def embed(self, texts):
            print("batch", flush=True)
            sys.stdin.readline()  # the test says when to go on, or kills us here
            return super().embed(texts)

    db = connect(home / "clawback.db")
    store = VectorStore.open(home / "embeddings.db")
    with embed_lock(home / "embed.lock"):
        EmbeddingWorker(db, store, Announcing(16), batch=4).run()
    """
)


@pytest.mark.slow
def test_a_killed_worker_loses_at_most_one_batch_and_the_next_run_finishes(home: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WORKER, str(home)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin and proc.stdout
    for _ in range(3):  # let three batches through, then kill inside the fourth
        assert proc.stdout.readline() == "batch\n"
        proc.stdin.write("\n")
        proc.stdin.flush()
    assert proc.stdout.readline() == "batch\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _, store, worker = open_worker(home)
    assert store.count() == 12  # three whole batches, nothing torn
    stats = worker.run()
    assert stats.embedded == 42 - 12
    assert store.count() == 42 and worker.coverage().ratio == 1.0


def test_a_deferred_index_opens_on_first_query_or_says_why(home: Path) -> None:
    from clawback.core.embeddings.embedder import EmbeddingsUnavailable
    from clawback.core.embeddings.semantic import DeferredIndex

    deferred = DeferredIndex(EmbeddingsConfig(model="hash-16"), home / "embeddings.db")
    with pytest.raises(EmbeddingsUnavailable, match="nothing is embedded yet"):
        deferred.nearest("anything", 3)
    _, _, worker = open_worker(home)
    worker.run()
    found = DeferredIndex(EmbeddingsConfig(model="hash-16"), home / "embeddings.db").nearest(
        "assistant: turn 7 about topic7\nuser: turn 6 about topic6", 3
    )
    assert len(found) == 3 and found[0].similarity == pytest.approx(1.0, abs=1e-3)
    wrong = DeferredIndex(EmbeddingsConfig(model="hash-32"), home / "embeddings.db")
    with pytest.raises(EmbeddingsUnavailable, match="made with hash-16"):
        wrong.nearest("anything", 3)


def test_a_re_read_archive_keeps_its_vectors_under_new_ids(home: Path) -> None:
    """``reindex`` gives every entry a new id: text seen before is not embedded again."""
    db, store, worker = open_worker(home)
    worker.run()
    with write_transaction(db) as conn:
        conn.execute(
            "INSERT INTO entries (file_id, line, role, kind, ts, conversational, text)"
            " SELECT file_id, line, role, kind, ts, conversational, text FROM entries"
        )
        conn.execute("DELETE FROM entries WHERE id <= (SELECT max(id) / 2 FROM entries)")
    sliced = worker.run(limit=10)
    assert (sliced.embedded, sliced.reused, sliced.removed) == (0, 10, 0)  # old ones kept to reuse
    rest = worker.run()
    assert (rest.embedded, rest.reused, rest.removed) == (0, 31, 41)
    assert store.count() == 42 and worker.coverage().ratio == 1.0
    assert worker.run().embedded == 0
