"""The background embedder: opt-in, catches up when nudged, steps aside for another embedder,
stops after the slice in flight."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from clawback.core.home import Home

pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")

from clawback.core.embeddings.coverage import Coverage, vector_coverage
from clawback.core.embeddings.store import VectorStore
from clawback.core.embeddings.worker import embed_lock

from tests.helpers import cc_user, write_lines


def opted_in(home: Home, tmp_path: Path, messages: int) -> None:
    home.config.embeddings.model = "hash"
    src = tmp_path / "src" / "proj"
    write_lines(
        src / "s.jsonl", [cc_user("s", f"u{i}", f"note number {i}") for i in range(messages)]
    )
    home.ingest_paths([tmp_path / "src"])
    VectorStore.open(home.paths.vectors).close()  # what `clawback embed` leaves behind


def test_nobody_gets_a_background_embedder_without_asking(demo_home: Home) -> None:
    assert not demo_home.paths.vectors.exists()
    assert demo_home.background_embedder() is None
    demo_home.config.embeddings.model = "none"
    VectorStore.open(demo_home.paths.vectors).close()
    assert demo_home.background_embedder() is None


def test_it_catches_up_in_slices_and_stops(home: Home, tmp_path: Path) -> None:
    opted_in(home, tmp_path, 150)
    done = threading.Event()
    seen: list[Coverage] = []

    def progress(covered: Coverage) -> None:
        seen.append(covered)
        if covered.ratio == 1.0:
            done.set()

    embedder = home.background_embedder(on_progress=progress)
    assert embedder is not None
    embedder.start()
    try:
        assert done.wait(60), seen
    finally:
        embedder.stop()
    assert [c.vectors for c in seen] == [64, 128, 150]  # committed slice by slice
    assert vector_coverage(home.db, home.paths.vectors).ratio == 1.0


def test_it_steps_aside_while_another_process_embeds(home: Home, tmp_path: Path) -> None:
    opted_in(home, tmp_path, 5)
    problems: list[str] = []
    embedder = home.background_embedder(on_problem=problems.append)
    assert embedder is not None
    with embed_lock(home.paths.embed_lock):
        embedder.start()
        embedder.stop()  # it found the lock taken and waited for the next nudge
    assert problems == [] and vector_coverage(home.db, home.paths.vectors).vectors == 0
