"""Local embeddings for semantic and hybrid search: the embedder, the vector store, what is
embedded and the background worker. Fusing the vector side with the keyword side is search's
(``search/fusion.py``, ``search/hybrid.py``).

``chunks`` and ``coverage`` are pure Python and are what search imports; the rest needs numpy
(and the embedder onnxruntime), installed by ``pip install 'clawback[embeddings]'``, and is
imported only when a home has vectors or a person asks to embed. See docs/embeddings.md.

BLAS runs one thread in every clawback process: set by :func:`clawback.core.startup.prepare_process`
at the entry points, before numpy can be imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy comes with these; only homes with vectors import them
    from clawback.core.config import EmbeddingsConfig
    from clawback.core.embeddings.semantic import DeferredIndex


def deferred_nearest(vectors: Path, settings: EmbeddingsConfig) -> DeferredIndex | None:
    """The vector side of search and recall for a long-lived process (the app, the chat engine,
    the MCP server), or ``None``: embeddings off, the extra not installed, or nothing embedded
    yet. The model loads on the first query, so the process starts as fast as without it."""
    if not settings.enabled or not vectors.exists():
        return None
    try:
        from clawback.core.embeddings.semantic import DeferredIndex
    except ImportError:  # the embeddings extra is optional: search stays keyword-only
        return None
    return DeferredIndex(settings, vectors)
