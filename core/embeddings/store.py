"""The vector store: one SQLite file beside the index, holding one vector per embedded chunk.

SQLite BLOBs and not a memmapped array: each batch is one transaction, so a ``kill -9`` during
embedding loses at most the batch in flight and the next run resumes where it stopped (a memmap
would need its own journal), and loading them all is fast enough (docs/embeddings.md). Vectors
are stored as float16 (half the disk) and searched as float32 in memory: numpy has no fast
float16 product.

Keys: a chunk is an ``entries`` row (its id), a reply's window view (its id plus
``chunks.WINDOW``) or a knowledge fact (minus its id). Each vector carries a 63-bit hash of the
text it was made from, so a row id the index has reused for other
text is never trusted. The file records the model name and dimension; opening it for writing
with another model empties it (a change of model re-embeds). Deleting the file loses nothing
the index cannot rebuild.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

import numpy as np
from clawback.core.db import BUSY_TIMEOUT_MS, read_only_connection
from clawback.core.db_guard import IndexFile
from clawback.core.embeddings.embedder import EmbeddingsUnavailable
from clawback.core.embeddings.follow import BUMP_GENERATION
from clawback.core.faults import cannot_write_in, find_damage, is_damaged, set_aside
from clawback.core.paths import ensure_private_file

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
    seq INTEGER PRIMARY KEY,          -- insertion order: readers load only what is new
    chunk INTEGER NOT NULL UNIQUE,    -- entries.id (+ chunks.WINDOW: a window view), or -facts.id
    hash INTEGER NOT NULL,            -- text_hash() of the text embedded
    vec BLOB NOT NULL                 -- float16 x dim
);
CREATE INDEX IF NOT EXISTS vectors_hash ON vectors (hash);
"""


class StoreMismatch(EmbeddingsUnavailable):
    """The store holds vectors of another model than the one asked for."""


class StoreDamaged(EmbeddingsUnavailable):
    """The store file is damaged and has been set aside; the message says where to."""


_Args = ParamSpec("_Args")
_Result = TypeVar("_Result")


def _sets_aside_when_damaged(
    method: Callable[Concatenate[VectorStore, _Args], _Result],
) -> Callable[Concatenate[VectorStore, _Args], _Result]:
    """Damage found while reading or writing sets the file aside and raises
    :class:`StoreDamaged`, which search turns into a keyword fallback with its one line."""

    @functools.wraps(method)
    def guarded(store: VectorStore, *args: _Args.args, **kwargs: _Args.kwargs) -> _Result:
        try:
            return method(store, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):
                raise
            raise store.set_aside(exc) from None

    return guarded


@dataclass
class VectorStore:
    """The store file, open for reading or writing; one process writes (see the worker lock)."""

    path: Path
    conn: sqlite3.Connection = field(repr=False)
    inode: int = 0  # the file this connection opened: another process may have replaced it
    replaced: str | None = None  # the notice when a damaged file was set aside at opening

    @classmethod
    def open(cls, path: Path, *, replace_damaged: bool = False) -> VectorStore:
        """Open (creating) the store at ``path``.

        Damage found on opening sets the file aside: a writer (``replace_damaged``: embed,
        the background embedder) checks the whole file first and goes on with a fresh store,
        saying so in :attr:`replaced`; a reader gets :class:`StoreDamaged`.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return cls._open(path, check=replace_damaged)
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):
                if path.is_file() and cannot_write_in(path.parent):  # a read-only home: search
                    return cls(path, read_only_connection(path), inode=os.stat(path).st_ino)
                raise
            notice = str(_set_aside_notice(path, exc))
        if not replace_damaged:
            raise StoreDamaged(notice)
        store = cls._open(path, check=False)
        store.replaced = f"{notice}; embedding into a fresh store"
        return store

    @classmethod
    def _open(cls, path: Path, *, check: bool) -> VectorStore:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        try:
            conn.isolation_level = None
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(_SCHEMA)
            damage = find_damage(conn) if check else None
            if damage:
                raise sqlite3.DatabaseError(damage)
        except BaseException:
            conn.close()
            raise
        for suffix in ("", "-wal", "-shm"):
            ensure_private_file(Path(str(path) + suffix))
        IndexFile(path)  # a cut -shm is mended where the process guards against SIGBUS
        return cls(path, conn, inode=os.stat(path).st_ino)

    def set_aside(self, exc: sqlite3.DatabaseError) -> StoreDamaged:
        """Close, and set the file aside unless another process already replaced it."""
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        try:
            same = os.stat(self.path).st_ino == self.inode
        except FileNotFoundError:
            same = False
        if not same:
            return StoreDamaged(f"the vector store was damaged ({exc}) and has been replaced")
        return _set_aside_notice(self.path, exc)

    def close(self) -> None:
        """Close, folding the write-ahead log back into the file when no reader holds it."""
        with contextlib.suppress(sqlite3.Error):
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.close()

    # -- what the vectors are ------------------------------------------------------------------

    @_sets_aside_when_damaged
    def meta(self) -> tuple[str | None, int | None]:
        """The model name and dimension the stored vectors were made with (``None``: empty)."""
        rows = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        dim = rows.get("dim")
        return rows.get("model"), int(dim) if dim else None

    @_sets_aside_when_damaged
    def generation(self) -> int:
        """Bumped whenever vectors are removed, so readers know to reload instead of extend."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    @_sets_aside_when_damaged
    def claim(self, model: str, dim: int) -> bool:
        """Make the store hold ``model``'s vectors; ``True`` when it was emptied to do so."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            current = self.meta()
            wiped = current not in ((model, dim), (None, None))
            if wiped:
                self.conn.execute("DELETE FROM vectors")
                self._bump()
            self.conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (("model", model), ("dim", str(dim))),
            )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return wiped

    @_sets_aside_when_damaged
    def check(self, model: str, dim: int) -> None:
        """Raise :class:`StoreMismatch` unless the vectors are ``model``'s (or there are none)."""
        current = self.meta()
        if current not in ((model, dim), (None, None)):
            raise StoreMismatch(f"vectors were made with {current[0]}, not {model}")

    # -- writing -------------------------------------------------------------------------------

    @_sets_aside_when_damaged
    def add(self, chunks: Sequence[int], hashes: Sequence[int], vectors: np.ndarray) -> None:
        """Store one batch in one transaction: all of it survives a kill, or none of it."""
        half = np.asarray(vectors, dtype=np.float16)
        rows = [
            (int(chunk), int(digest), half[i].tobytes())
            for i, (chunk, digest) in enumerate(zip(chunks, hashes, strict=True))
        ]
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.executemany("DELETE FROM vectors WHERE chunk = ?", ((r[0],) for r in rows))
            self.conn.executemany("INSERT INTO vectors (chunk, hash, vec) VALUES (?, ?, ?)", rows)
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @_sets_aside_when_damaged
    def clear(self) -> None:
        """Forget every vector (``clawback embed --rebuild``); the model is claimed anew."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute("DELETE FROM vectors")
            self.conn.execute("DELETE FROM meta WHERE key IN ('model', 'dim')")
            self._bump()
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @_sets_aside_when_damaged
    def remove(self, chunks: Iterable[int]) -> int:
        """Forget vectors (chunks that are gone or changed); returns how many went."""
        doomed = [(int(c),) for c in chunks]
        if not doomed:
            return 0
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            before = self.conn.total_changes
            self.conn.executemany("DELETE FROM vectors WHERE chunk = ?", doomed)
            removed = self.conn.total_changes - before
            if removed:
                self._bump()
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return removed

    def _bump(self) -> None:
        self.conn.execute(BUMP_GENERATION)

    # -- reading -------------------------------------------------------------------------------

    @_sets_aside_when_damaged
    def known(self, hashes: Sequence[int]) -> dict[int, np.ndarray]:
        """Stored vectors for any of ``hashes`` (text embedded before, under any chunk id)."""
        if not hashes:
            return {}
        _, dim = self.meta()
        rows = self.conn.execute(
            f"SELECT hash, vec FROM vectors WHERE hash IN ({', '.join('?' * len(hashes))})",
            [int(h) for h in hashes],
        ).fetchall()
        return {
            digest: np.frombuffer(vec, np.float16).astype(np.float32)
            for digest, vec in rows
            if dim and len(vec) == 2 * dim
        }

    @_sets_aside_when_damaged
    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM vectors").fetchone()[0])

    @_sets_aside_when_damaged
    def hashes(self) -> dict[int, int]:
        """Every stored chunk and the hash of its text (to find what is missing or stale)."""
        return dict(self.conn.execute("SELECT chunk, hash FROM vectors").fetchall())

    @_sets_aside_when_damaged
    def rows_after(self, seq: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Chunks, hashes and float32 vectors stored after ``seq``, and the last seq read."""
        rows = self.conn.execute(
            "SELECT seq, chunk, hash, vec FROM vectors WHERE seq > ? ORDER BY seq", (seq,)
        ).fetchall()
        _, dim = self.meta()
        if not rows or not dim:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, dim or 0)), seq
        chunks = np.fromiter((r[1] for r in rows), np.int64, len(rows))
        hashes = np.fromiter((r[2] for r in rows), np.int64, len(rows))
        vectors = np.frombuffer(b"".join(r[3] for r in rows), np.float16).reshape(-1, dim)
        return chunks, hashes, vectors.astype(np.float32), int(rows[-1][0])


def _set_aside_notice(path: Path, exc: sqlite3.DatabaseError) -> StoreDamaged:
    moved = set_aside(path)
    return StoreDamaged(
        f"the vector store was damaged ({exc}) and was set aside as {moved.name}"
        " (`clawback embed` makes a fresh one)"
    )


class VectorIndex:
    """The store's vectors in memory for exact cosine search, kept fresh cheaply.

    :meth:`refresh` reads only rows written since the last call (the background embedder adds
    as search runs) and reloads everything only after removals. Exact search is enough to a
    million vectors or so; beyond, the plan is a binary-code prefilter with float rescoring of
    its top few hundred (docs/embeddings.md).
    """

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self._seq = 0
        self._generation = -1
        self._chunks = np.zeros(0, np.int64)
        self._hashes = np.zeros(0, np.int64)
        # Stored transposed, one column per chunk (dim x capacity, C order): OpenBLAS multiplies
        # a vector by it in half the time of the row-major product, same scores
        # (docs/embeddings.md). The first len(self) columns are in use; the spare ones take the
        # next rows, so a few new vectors (a turn just indexed) cost no copy of the whole.
        self._columns = np.zeros((0, 0), np.float32)

    def __len__(self) -> int:
        return len(self._chunks)

    def refresh(self) -> None:
        generation = self.store.generation()
        if generation != self._generation:
            self._seq, self._generation = 0, generation
            self._chunks, self._hashes = np.zeros(0, np.int64), np.zeros(0, np.int64)
            self._columns = np.zeros((0, 0), np.float32)
        chunks, hashes, vectors, seq = self.store.rows_after(self._seq)
        if not len(chunks):
            return
        if len(self._chunks):
            # A chunk re-embedded since the last read: keep only its newest row.
            stale = np.isin(self._chunks, chunks)
            if stale.any():
                keep = ~stale
                self._chunks, self._hashes = self._chunks[keep], self._hashes[keep]
                self._columns = self._columns[:, : len(keep)][:, keep]
            self._columns = _columns(vectors, before=self._columns, used=len(self._chunks))
            self._chunks = np.concatenate([self._chunks, chunks])
            self._hashes = np.concatenate([self._hashes, hashes])
        else:
            self._chunks, self._hashes = chunks, hashes
            self._columns = _columns(vectors)
        self._seq = seq

    def search(self, query: np.ndarray, limit: int) -> list[tuple[int, int, float]]:
        """The ``limit`` nearest chunks to a unit-length ``query``: ``(chunk, hash, cosine)``,
        best first."""
        if not len(self._chunks) or limit <= 0:
            return []
        scores = np.asarray(query, dtype=np.float32) @ self._columns[:, : len(self._chunks)]
        if limit < len(scores):
            top = np.argpartition(-scores, limit - 1)[:limit]
        else:
            top = np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._chunks[i]), int(self._hashes[i]), float(scores[i])) for i in top]


def _columns(rows: np.ndarray, before: np.ndarray | None = None, used: int = 0) -> np.ndarray:
    """``before`` (dim x capacity, its first ``used`` columns in use) with ``rows`` (m x dim)
    written as the next columns, in C order: in place when the spare columns hold them, else
    into a copy with room for an eighth more (so a growing index copies itself rarely).

    Transposed a block of rows at a time: numpy's whole-matrix transposing copy walks memory
    across the grain and took 0.2-0.5 s for 87,000 x 384, blocks take about 0.1 s.
    """
    needed = used + len(rows)
    if before is None or not before.size or needed > before.shape[1]:
        room = needed + needed // 8
        out = np.empty((rows.shape[1], room), np.float32)
        if used and before is not None:
            out[:, :used] = before[:, :used]
    else:
        out = before
    for start in range(0, len(rows), 4096):
        block = rows[start : start + 4096]
        out[:, used + start : used + start + len(block)] = block.T
    return out
