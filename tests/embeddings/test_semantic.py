"""The nearest chunks to a question: asked again for fewer, the last answer's first ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")

from clawback.core.embeddings.embedder import HashEmbedder  # noqa: E402
from clawback.core.embeddings.semantic import SemanticIndex  # noqa: E402
from clawback.core.embeddings.store import VectorStore  # noqa: E402

TEXTS = [f"the {word} of the cache layer" for word in ("size", "shape", "cost", "keys", "age")]


def _index(tmp_path: Path) -> tuple[SemanticIndex, HashEmbedder]:
    embedder = HashEmbedder(32)
    store = VectorStore.open(tmp_path / "v.db")
    store.claim(embedder.name, embedder.dim)
    store.add(list(range(len(TEXTS))), [0] * len(TEXTS), embedder.embed(TEXTS))
    return SemanticIndex(embedder, store), embedder


def test_the_same_question_for_fewer_reuses_the_last_product(tmp_path: Path) -> None:
    """Recall asks for the facts among what the search just found, with the same words: the
    product over every vector (12 ms of 34 per prompt at 128,000 vectors) ran twice."""
    index, _ = _index(tmp_path)
    products: list[int] = []
    search = index.index.search

    def counted(query: Any, limit: int) -> list[tuple[int, int, float]]:
        products.append(limit)
        return search(query, limit)

    index.index.search = counted  # type: ignore[method-assign]
    first = index.nearest("cache layer size", 4)
    again = index.nearest("cache layer size", 2)
    assert again == first[:2] and len(products) == 1
    assert index.nearest("cache layer size", 5) and len(products) == 2  # more than it had
    assert index.nearest("cache layer cost", 2) and len(products) == 3  # another question


def test_new_vectors_are_not_hidden_by_the_last_answer(tmp_path: Path) -> None:
    index, embedder = _index(tmp_path)
    before = index.nearest("cache layer size", 3)
    index.store.add([99], [0], embedder.embed(["cache layer size"]))
    index._refreshed = 0.0  # the refresh interval has passed
    after = index.nearest("cache layer size", 3)
    assert after[0].chunk == 99 and after != before
