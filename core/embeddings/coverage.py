"""Which chunks should have a vector, and how many do: for the worker, ``health`` and the app.

Pure SQL and the standard library (no numpy), so ``health`` can report coverage on a machine
without the embeddings extra.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clawback.core.embeddings.chunks import CHUNK_COLUMNS, entry_of, fact_text, text_hash, views

CONVERSATION_KINDS = ("text", "compaction")
EXTRA_KINDS = ("thinking", "tool_use", "tool_result")


def embeddable_sql(columns: str, *, tools_and_thinking: bool = False) -> str:
    """``SELECT columns`` over the embeddable entries (``e``, ``f``), in embedding order:
    memory files first, then turns from the newest back.

    Embeddable: memory file chunks, compaction summaries, and user and assistant text turns
    (``conversational``: what a transcript shows); with ``tools_and_thinking`` also thinking,
    tool calls and tool output.
    """
    kinds = CONVERSATION_KINDS + (EXTRA_KINDS if tools_and_thinking else ())
    marks = ", ".join(f"'{kind}'" for kind in kinds)
    return f"""
        SELECT {columns} FROM entries e JOIN files f ON f.id = e.file_id
        WHERE f.source = 'memory'
           OR e.kind = 'compaction'
           OR (e.kind IN ({marks}) AND e.role IN ('user', 'assistant')
               AND (e.conversational = 1 OR e.kind != 'text'))
        ORDER BY f.source = 'memory' DESC, e.ts IS NULL, e.ts DESC, e.id DESC
    """


CURRENT_FACTS = "SELECT {columns} FROM facts WHERE superseded_by IS NULL"


def chunk_texts(
    db: Any, chunks: Sequence[int], clauses: Sequence[str] = (), params: Sequence[Any] = ()
) -> dict[int, str]:
    """The text the model reads for each of ``chunks`` (an entry's id, or a window view's, see
    ``chunks.views``) whose entry is still in the index, has that view, and passes ``clauses``
    (SQL over ``e`` entries, ``f`` files, ``s`` sessions, with ``params``)."""
    wanted = set(chunks)
    ids = list(dict.fromkeys(entry_of(chunk) for chunk in chunks))
    found: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        sql = (
            f"SELECT {CHUNK_COLUMNS} FROM entries e JOIN files f ON f.id = e.file_id"
            " LEFT JOIN sessions s ON s.id = e.session_id"
            f" WHERE e.id IN ({', '.join('?' * len(part))})"
            + "".join(f" AND {clause}" for clause in clauses)
        )
        for row in db.execute(sql, [*part, *params]):
            found.update((chunk, text) for chunk, text in views(row) if chunk in wanted)
    return found


@dataclass
class Coverage:
    """How much of what should have a vector has one, and with which model."""

    model: str | None
    vectors: int
    total: int

    @property
    def ratio(self) -> float:
        return min(1.0, self.vectors / self.total) if self.total else 1.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": round(self.ratio, 4)}


def current_hashes(db: Any, *, tools_and_thinking: bool = False) -> dict[int, int]:
    """Every chunk that should have a vector, with the hash of the text the model would read:
    entries in embedding order (memory files, then turns from the newest back), then facts,
    newest first."""
    found: dict[int, int] = {}
    for row in db.execute(embeddable_sql(CHUNK_COLUMNS, tools_and_thinking=tools_and_thinking)):
        found.update((chunk, text_hash(text)) for chunk, text in views(row))
    for fact_id, kind, content, context in db.execute(
        CURRENT_FACTS.format(columns="id, type, content, context")
        + " ORDER BY coalesce(source_ts, created_at) DESC"
    ):
        found[-fact_id] = text_hash(fact_text(kind, content, context))
    return found


def vector_coverage(db: Any, store_path: Path, *, tools_and_thinking: bool = False) -> Coverage:
    """Embeddable chunks in the index against the vectors that really serve them (read
    without numpy).

    A vector counts only under a chunk that holds the text it was made from: after a reindex
    gave the entries new ids, or a reused id other text, the store's row count would claim a
    coverage that search cannot use.
    """
    current = current_hashes(db, tools_and_thinking=tools_and_thinking)
    model, vectors = None, 0
    if store_path.exists():
        reader = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
        # A store being created right now may have no tables yet: nothing embedded.
        with contextlib.closing(reader) as conn, contextlib.suppress(sqlite3.Error):
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            model = meta.get("model")
            vectors = sum(
                current.get(chunk) == digest
                for chunk, digest in conn.execute("SELECT chunk, hash FROM vectors")
            )
    return Coverage(model=model, vectors=vectors, total=len(current))
