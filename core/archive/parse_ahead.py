"""Reading files in a second process while this one writes: a bulk ingest on two cores.

Most of an ingest's time is per-line Python (decoding, parsing, masking, shaping rows) that
needs only the file (:mod:`clawback.core.archive.reading`); the rest is SQLite writing into the
index. On a machine with a second core, a big ingest starts one worker process that reads the
planned files in order and sends back their chunks, plain values that are cheap to pass.

The two processes share the reading without a schedule: this one publishes which file it is
on; the worker skips files at or behind it and stays at most ``AHEAD_BYTES`` ahead of it. When
a file's turn comes, the ingestor takes the worker's chunks if they have arrived and reads the
file itself if not (the worker is starting up, or behind). So the worker is never waited for.

The worker never touches the index. The writing process keeps the lock, every transaction and
every decision: it uses a worker's chunks only when the file's start (offset, line, session) is
still the one the worker read from, and reads the file itself when it is not, when the worker
failed on that file, or when the worker is gone. The rows written are the same either way.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import queue
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from clawback.core.archive.reading import Chunk, FileReader, Start, WorkItem

MIN_BYTES = 16 * 1024 * 1024  # less to read than this: the worker's start-up (~0.2 s) wins
MAX_FILE_BYTES = 16 * 1024 * 1024  # a bigger file is read here, a chunk at a time (memory)
AHEAD_BYTES = 16 * 1024 * 1024  # how far ahead of the writer the worker may read
_POLL_SECONDS = 0.002  # the worker's wait while it is far enough ahead

Plan = list[tuple[WorkItem, Start]]  # each file with the start it is expected to have


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What :class:`FileReader` needs besides the file; plain values and module functions."""

    max_line: int
    mask: Callable[[str], str] | None
    seal: Callable[[str], str]


def worth_it(remaining: Sequence[int]) -> bool:
    """Whether files with these many bytes left to read are worth a worker process."""
    return (os.cpu_count() or 1) > 1 and len(remaining) > 1 and sum(remaining) >= MIN_BYTES


def _work(plan: Plan, options: ReadOptions, position: Any, results: Any, parent: int) -> None:
    """The worker: read each planned file the writer has not reached, a bounded way ahead.

    ``position`` is the index of the file the writer is on (``len(plan)``: stop); ``parent`` is
    the writer's pid, passed in because it may be gone before this process starts. A file that
    fails is sent as ``None``: the writer reads it itself and reports the failure as usual.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the writer's; it stops us
    results.cancel_join_thread()  # never hang at exit over results nobody will read

    def writer_gone() -> bool:
        return position.value >= len(plan) or os.getppid() != parent

    ends = list(itertools.accumulate(item.size - start.offset for item, start in plan))
    for at, (item, start) in enumerate(plan):
        while True:
            writer = position.value
            if writer_gone():
                return
            if ends[at] - (ends[writer] if writer >= 0 else 0) <= AHEAD_BYTES:
                break
            time.sleep(_POLL_SECONDS)
        if at <= writer:
            continue  # the writer got here first and reads it itself
        reader = FileReader(
            item, start, max_line=options.max_line, mask=options.mask, seal=options.seal
        )
        try:
            chunks: list[Chunk] | None = list(reader.chunks())
        except Exception:  # the writer's own read of the file names the failure
            chunks = None
        results.put((at, chunks))
    while not writer_gone():  # until the writer has what is in the pipe, or stops us
        time.sleep(_POLL_SECONDS * 10)


class ParseAhead:
    """Files read ahead by a worker process. Ask with :meth:`take` in plan order (skipping
    some is fine); :meth:`close` (or leave the ``with`` block) when done."""

    def __init__(self, plan: Plan, options: ReadOptions) -> None:
        # spawn, not fork: the app ingests from a thread, and a forked child of a threaded
        # process inherits locks other threads held.
        context = multiprocessing.get_context("spawn")
        self._plan = plan
        self._index = {(item.source, item.key): at for at, (item, _) in enumerate(plan)}
        self._position = context.Value("q", -1, lock=False)
        self._results = context.Queue()
        self._ready: dict[int, list[Chunk] | None] = {}
        self._worker: Any = context.Process(
            target=_work,
            args=(plan, options, self._position, self._results, os.getpid()),
            name="clawback-parse-ahead",
            daemon=True,  # never outlives this process
        )
        self._worker.start()

    def take(self, item: WorkItem, start: Start) -> list[Chunk] | None:
        """``item``'s chunks read from ``start``, or ``None``: then read it in this process."""
        at = self._index.get((item.source, item.key))
        if at is None or self._worker is None:
            return None
        self._position.value = at
        self._collect()
        chunks = self._ready.pop(at, None)
        for passed in [k for k in self._ready if k < at]:
            del self._ready[passed]
        if chunks is None or self._plan[at][1] != start:
            return None
        return chunks

    def _collect(self) -> None:
        """Everything the worker has sent so far, without waiting."""
        while True:
            try:
                at, chunks = self._results.get_nowait()
            except queue.Empty:
                return
            except (OSError, EOFError, ValueError):  # a worker gone mid-message
                self.close()
                return
            self._ready[at] = chunks

    def __enter__(self) -> ParseAhead:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker: what it has not read yet is not needed."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        self._position.value = len(self._plan)
        self._ready.clear()
        # It may be mid-file, or waiting for its last results to leave the pipe; it only
        # reads files, so stopping it outright is safe.
        worker.join(timeout=0.05)
        if worker.is_alive():
            worker.terminate()
            worker.join()
        with contextlib.suppress(Exception):
            self._results.close()
            self._results.cancel_join_thread()
