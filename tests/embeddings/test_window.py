"""What a turn is read with: a short answer with its question, a bare reply with what it
answers, every other turn alone; windows that never change as a session grows, and one
definition of the text that the worker, coverage and search agree on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home

pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")

from clawback.core.embeddings.chunks import WINDOW, embed_text, entry_of, text_hash
from clawback.core.embeddings.coverage import chunk_texts, current_hashes, vector_coverage
from clawback.core.embeddings.embedder import HashEmbedder
from clawback.core.embeddings.store import VectorStore
from clawback.core.embeddings.worker import EmbeddingWorker
from clawback.core.search.hybrid import admit

from tests.helpers import cc_assistant, cc_user, write_lines

QUESTION = "which cache should the session index use for the hot path?"
LONG = "word " * 300


def said(uuid: str, text: str) -> dict[str, Any]:
    return cc_assistant("s", uuid, [{"type": "text", "text": text}])


ANSWER = "Redis, because the session index is read on every keystroke."
FIRST = [
    cc_user("s", "u1", QUESTION),
    said("a1", "Redis."),
    cc_user("s", "u2", "yes do it"),
    said("a2", ANSWER),
    said("a3", LONG),
    cc_user("s", "u3", "now something else entirely: how do the release notes get written?"),
]
MORE = [said("a3", "From the changelog."), cc_user("s", "u4", "thanks")]


def ingest(home: Home, tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    write_lines(tmp_path / "src" / "proj" / "s.jsonl", lines)
    home.ingest_paths([tmp_path / "src"])


def texts(home: Home) -> dict[str, str]:
    """Each turn's own text -> what the model reads for it."""
    rows = home.db.execute("SELECT id, text FROM entries WHERE kind = 'text'").fetchall()
    read = chunk_texts(home.db, [entry_id for entry_id, _ in rows])
    return {text: read[entry_id] for entry_id, text in rows}


def worker(home: Home) -> EmbeddingWorker:
    return EmbeddingWorker(home.db, VectorStore.open(home.paths.vectors), HashEmbedder(16))


def test_a_short_answer_is_read_with_its_question_and_a_bare_reply_with_what_it_answers(
    home: Home, tmp_path: Path
) -> None:
    ingest(home, tmp_path, FIRST)
    read = texts(home)
    assert read["Redis."] == f"assistant: Redis.\nuser: {QUESTION}"
    assert read["yes do it"] == "user: yes do it\nassistant: Redis."
    short = embed_text("assistant", "text", "claude-code", "ok", ("user", "x" * 900))
    assert short == "assistant: ok\nuser: " + "x" * 200  # at most 200 characters of it


def test_every_other_turn_is_read_alone_and_keeps_the_vector_it_had(
    home: Home, tmp_path: Path
) -> None:
    """A turn that says something is read as before windows existed: its text (and hash) did
    not change, so an upgrade keeps its vector. Measured: reading those with their neighbours
    too put near-copies of one exchange side by side and found no more answers."""
    ingest(home, tmp_path, FIRST)
    read = texts(home)
    prompt = FIRST[5]["message"]["content"]
    for role, text in (("user", QUESTION), ("assistant", ANSWER), ("assistant", LONG),
                       ("user", prompt)):  # fmt: skip
        assert read[text] == embed_text(role, "text", "claude-code", text)


def test_a_growing_session_never_invalidates_the_vectors_it_has(home: Home, tmp_path: Path) -> None:
    ingest(home, tmp_path, FIRST)
    first = worker(home)
    assert first.run().embedded == 7  # six turns and the last prompt's window view
    before = first.store.hashes()
    ingest(home, tmp_path, FIRST + MORE)
    again = worker(home)
    todo, doomed = again.pending(verify=True)
    assert len(todo) == 2 and doomed == []  # only the two new turns
    stats = again.run(verify=True)
    assert stats.embedded == 2 and stats.removed == 0
    after = again.store.hashes()
    assert {chunk: after[chunk] for chunk in before} == before
    assert texts(home)["thanks"] == "user: thanks\nassistant: From the changelog."


def test_coverage_and_search_agree_with_what_was_embedded(home: Home, tmp_path: Path) -> None:
    ingest(home, tmp_path, FIRST + MORE)
    embedding = worker(home)
    embedding.run()
    stored = embedding.store.hashes()
    assert current_hashes(home.db) == stored
    assert vector_coverage(home.db, home.paths.vectors).ratio == 1.0
    found = [(chunk, digest, 0.9) for chunk, digest in stored.items()]
    assert {chunk for chunk, _ in admit(home.db, found, [], [])} == {entry_of(c) for c in stored}
    # A vector of the turn read alone (as before windows) is stale for an answer: redone.
    answer = next(c for c, t in chunk_texts(home.db, list(stored)).items() if "Redis." in t)
    alone = text_hash("assistant: Redis.")
    assert admit(home.db, [(answer, alone, 0.9)], [], []) == []


def test_a_reply_is_also_found_by_the_exchange_it_belongs_to(home: Home, tmp_path: Path) -> None:
    """A person's reply of 40-200 characters has a second vector, a window view reading it with
    the assistant turn it answers; search counts the message once, as near as its nearer view."""
    ingest(home, tmp_path, FIRST)
    prompt = FIRST[5]["message"]["content"]
    entry = home.db.execute("SELECT id FROM entries WHERE text = ?", (prompt,)).fetchone()[0]
    window = chunk_texts(home.db, [entry + WINDOW])[entry + WINDOW]
    assert window == f"user: {prompt}\nassistant: " + ("word " * 40)[:100]
    assert entry + WINDOW in current_hashes(home.db)
    own = text_hash(f"user: {prompt}")
    found = [(entry + WINDOW, text_hash(window), 0.8), (entry, own, 0.5)]
    assert admit(home.db, found, [], []) == [(entry, 0.8)]
    # No window view for a turn with nothing before it, a long one, or an assistant turn.
    assert not {c for c in current_hashes(home.db) if c >= WINDOW} - {entry + WINDOW}


def test_a_sidechain_turn_is_not_read_with_the_main_conversation(
    home: Home, tmp_path: Path
) -> None:
    side = said("a9", "Subagent: done.")
    side["isSidechain"] = True
    ingest(home, tmp_path, [cc_user("s", "u1", QUESTION), side])
    assert texts(home)["Subagent: done."] == "assistant: Subagent: done."


def test_the_worker_reads_the_index_again_only_when_it_changed(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background embedder asks for what is pending and for coverage after every slice;
    reading every chunk of a large archive each time cost more than the slice's embedding."""
    import clawback.core.embeddings.worker as worker_module

    reads: list[int] = []
    real = worker_module.current_hashes

    def counted(*args: Any, **kwargs: Any) -> dict[int, int]:
        reads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(worker_module, "current_hashes", counted)
    ingest(home, tmp_path, FIRST)
    embedding = worker(home)
    embedding.run()
    embedding.coverage()
    assert embedding.run().embedded == 0
    assert len(reads) == 1
    # Another connection commits (an ingest by the app or `watch`): read again.
    other = Home.open(home.paths.home)
    write_lines(tmp_path / "src" / "proj" / "s.jsonl", FIRST + MORE)
    other.ingest_paths([tmp_path / "src"])
    assert embedding.run().embedded == 2 and len(reads) == 2
    assert embedding.coverage().ratio == 1.0 and len(reads) == 2
