"""Local embeddings for semantic and hybrid search: embedder, vector store, worker, fusion.

``chunks`` and ``fusion`` are pure Python and are what keyword search imports; the rest needs
numpy (and the embedder onnxruntime), installed by ``pip install 'clawback[embeddings]'``, and
is imported only when a home has vectors or a person asks to embed. See docs/embeddings.md.
"""
