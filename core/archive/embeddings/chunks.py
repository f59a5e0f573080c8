"""What the model reads for each chunk, and the fingerprint that says a vector is still valid.

Kept apart from the store and the embedder (which need numpy) so search can check a vector's
chunk without importing them.
"""

from __future__ import annotations

import zlib

MAX_CHARS = 2_000  # a chunk is at most this long already; the model reads ~256 tokens of it


def embed_text(role: str, kind: str, source: str, text: str) -> str:
    """A chunk as the model reads it: its text, labelled with who said it."""
    body = " ".join(text[:MAX_CHARS].split())
    if source == "memory":
        return body
    if kind == "compaction":
        return f"summary: {body}"
    return f"{role}: {body}"


def fact_text(kind: str, content: str, context: str | None) -> str:
    """A knowledge fact as the model reads it."""
    return " ".join(f"{kind}: {content} {context or ''}".split())


def text_hash(text: str) -> int:
    """A 32-bit fingerprint of what was embedded: a row id reused for other text is caught."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))
