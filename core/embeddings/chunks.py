"""What the model reads for each chunk, and the fingerprint that says a vector is still valid.

Kept apart from the store and the embedder (which need numpy) so search can check a vector's
chunk without importing them.
"""

from __future__ import annotations

import hashlib

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
    """A 63-bit fingerprint of what was embedded (fits SQLite's signed INTEGER).

    It catches a row id reused for other text, and lets a re-read file reuse the vectors of
    text it already had. 32 bits would not do for that: among 100,000 chunks two texts would
    probably share a crc32, and one of them would get the other's vector.
    """
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
