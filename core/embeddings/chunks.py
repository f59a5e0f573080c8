"""What the model reads for each chunk, and the fingerprint that says a vector is still valid.

A short turn is read with the turn it answers: alone, "yes do it" or "See ya!" means nothing,
and "Redis." has lost its question. Only an earlier turn of the same file is used, never a
later one: what a turn is read with is fixed once it is written, so a session that grows never
changes (and never re-embeds) the vectors it already has.

This is the one definition of a chunk's text: the worker embeds it, ``clawback embed`` and the
background embedder through the worker, coverage and follow hash it, and search checks a
neighbour's vector against it. Everyone selects :data:`CHUNK_COLUMNS` and calls
:func:`chunk_text` on the row. Kept apart from the store and the embedder (which need numpy) so
search can check a vector's chunk without importing them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

MAX_CHARS = 2_000  # a chunk is at most this long already; the model reads ~256 tokens of it
SHORT_TURN = 40  # a turn shorter than this ("yes do it", "Redis.") is read with what it answers
CONTEXT_CHARS = 200  # of the turn it answers, at most
REPLY_CHARS = 200  # a person's reply shorter than this also has a window view ...
REPLY_CONTEXT = 100  # ... reading it with this much of the assistant turn it replies to
WINDOW = 1 << 40  # a window view is stored under its entry's id plus this
_FIELD = "\x1f"  # between the earlier turn's role and its text in one SQL value

# For a short text turn (and a person's reply, for its window view), the nearest earlier
# conversational text turn by the other speaker in the same file (and on the same side of a
# sidechain): for an answer, its question; for a reply, what it replies to. One value, role
# and text, and only what ``embed_text`` and ``views`` can use.
# Entries of one line are stored in block order, so ``p.id < e.id`` orders blocks of a line;
# ``p.line <= e.line`` lets SQLite walk the (file_id, line) index backwards from the turn.
_CONTEXT = f"""CASE WHEN e.kind = 'text' AND f.source != 'memory'
                    AND length(e.text) < {max(SHORT_TURN, REPLY_CHARS) * 4} THEN (
    SELECT p.role || char(31) || substr(p.text, 1, {CONTEXT_CHARS * 2}) FROM entries p
    WHERE p.file_id = e.file_id AND p.kind = 'text' AND p.conversational = 1
      AND p.role IN ('user', 'assistant') AND p.role != e.role AND p.sidechain = e.sidechain
      AND p.line <= e.line AND (p.line < e.line OR p.id < e.id)
    ORDER BY p.line DESC, p.id DESC LIMIT 1
) END"""

# What every reader of chunk texts selects (entries ``e`` joined to files ``f``), in this order.
CHUNK_COLUMNS = f"e.id, e.role, e.kind, f.source, e.text, {_CONTEXT}"


def chunk_text(row: Sequence[Any]) -> str:
    """The text the model reads for a row of :data:`CHUNK_COLUMNS` (its id first)."""
    _, role, kind, source, text, context = row[:6]
    return embed_text(role, kind, source, text, _earlier(context))


def views(row: Sequence[Any]) -> list[tuple[int, str]]:
    """Every ``(chunk, text)`` the model reads for a row of :data:`CHUNK_COLUMNS`: the turn
    (:func:`chunk_text`, under the entry's id) and, for a person's reply of
    :data:`SHORT_TURN` to :data:`REPLY_CHARS` characters, its *window view* under the id plus
    :data:`WINDOW`: the reply followed by :data:`REPLY_CONTEXT` characters of the assistant turn
    it replies to.

    Why a second vector rather than one read with its context: "no, we want to put it in
    pendingMessageContainer" names what it answers only through the turn before it, so it is
    found by that exchange; but read only that way it loses what it says itself, and the
    paraphrases and the first places of the question set suffered (docs/embeddings.md). Search
    keeps the nearer of the two views, one hit per message.
    """
    entry_id, role, kind, source, text, context = row[:6]
    found = [(entry_id, chunk_text(row))]
    earlier = _earlier(context)
    if role != "user" or kind != "text" or source == "memory" or earlier is None:
        return found
    own = embed_text(role, kind, source, text)
    if not SHORT_TURN + len("user: ") <= len(own) < REPLY_CHARS + len("user: "):
        return found
    said = " ".join(earlier[1][: REPLY_CONTEXT * 2].split())[:REPLY_CONTEXT]
    if said:
        found.append((entry_id + WINDOW, f"{own}\n{earlier[0]}: {said}"))
    return found


def entry_of(chunk: int) -> int:
    """The entry a chunk belongs to: its own view or its window view (facts stay negative)."""
    return chunk - WINDOW if chunk >= WINDOW else chunk


def _earlier(context: str | None) -> tuple[str, str] | None:
    if not context or _FIELD not in context:
        return None
    role, text = context.split(_FIELD, 1)
    return role, text


def embed_text(
    role: str, kind: str, source: str, text: str, earlier: tuple[str, str] | None = None
) -> str:
    """A chunk as the model reads it: its text, labelled with who said it, and for a short turn
    the turn it answers (``earlier``: ``(role, text)``, see :data:`CHUNK_COLUMNS`), after it
    and at most :data:`CONTEXT_CHARS` of it.

    Only short turns: read with their neighbours, longer turns put near-copies of one exchange
    side by side at the top and were never better than each turn alone (docs/embeddings.md). A
    turn of :data:`SHORT_TURN` characters or more reads alone, so it keeps its vector.
    """
    body = " ".join(text[:MAX_CHARS].split())
    if source == "memory":
        return body
    if kind == "compaction":
        return f"summary: {body}"
    own = f"{role}: {body}"
    if earlier is None or len(body) >= SHORT_TURN:
        return own
    said = " ".join(earlier[1][: CONTEXT_CHARS * 2].split())[:CONTEXT_CHARS]
    return f"{own}\n{earlier[0]}: {said}" if said else own


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
