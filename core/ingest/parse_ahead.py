"""Reading files in a second process while this one writes: a bulk ingest on two cores.

Most of an ingest's time is per-line Python (decoding, parsing, masking, shaping rows) that
needs only the file (:mod:`clawback.core.ingest.file_reader`); the rest is SQLite writing into the
index. On a machine with a second core, a big ingest starts one worker process
(``python -m clawback.core.ingest.parse_ahead``) that reads the planned files in order and
sends back their parts, plain values that are cheap to pass.

The two processes share the reading without a schedule: this one tells the worker which file
it is on (8 bytes on the worker's stdin); the worker skips files at or behind it and stays at
most ``AHEAD_BYTES`` ahead of it. When a file's turn comes, the ingestor takes the worker's
parts if they have arrived, waits for them if the worker has said it is reading that very file
(reading it here too would only do the work twice, on two busy cores), and reads the file
itself otherwise (the worker is starting up, or behind). So the worker is waited for only
while it reads the file the writer needs.

The worker never touches the index. The writing process keeps the lock, every transaction and
every decision: it uses a worker's parts only when the file's start (offset, line, session) is
still the one the worker read from and the file still holds the bytes the worker read, and reads
the file itself when not, when the worker failed on that file, or when the worker is gone. The
rows written are the same either way.

A plain subprocess rather than :mod:`multiprocessing`: no resource-tracker process, no re-import
of the caller's ``__main__``, nothing that needs the caller's ``sys.stderr`` to be a real file
(in the app it is not), and the worker's end of life is simple: its stdin closes when the
writer stops or dies, and it exits.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from clawback.core.ingest.file_reader import FilePart, FileReader, Start, window_hash
from clawback.core.ingest.sources import WorkItem

MIN_BYTES = 16 * 1024 * 1024  # less to read than this: the worker's start-up (~0.1 s) wins
MAX_FILE_BYTES = 16 * 1024 * 1024  # a bigger file is read here, a part at a time (memory)
# A smaller file is read here too: what it costs is its bookkeeping (its row, its session, a
# savepoint), not its lines, and handing it over (a pickle, a message, a second open to check
# its bytes) cost more than reading it (50,000 one-line files: 2.2x slower with the worker).
MIN_FILE_BYTES = 64 * 1024
WAIT_SECONDS = 60.0  # at most this long for a file the worker reads (then read it here)
AHEAD_BYTES = 16 * 1024 * 1024  # how far ahead of the writer the worker may read

Plan = list[tuple[WorkItem, Start]]  # each file with the start it is expected to have
_POSITION = struct.Struct(">q")  # writer -> worker: the index of the file the writer is on
_HEADER = struct.Struct(">qQ")  # worker -> writer: a file's index, then its pickled parts


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What :class:`FileReader` needs besides the file; plain values and module functions."""

    max_line: int
    mask: Callable[[str], str] | None
    seal: Callable[[str], str]
    keep: bool = False  # keep a copy of each Claude Code line (``archive.keep_lines``)


def worth_handing_over(remaining: int) -> bool:
    """Whether a file with ``remaining`` bytes to read is one for the worker (see above)."""
    return MIN_FILE_BYTES <= remaining <= MAX_FILE_BYTES


def worth_it(remaining: Sequence[int]) -> bool:
    """Whether files with these many bytes left to read are worth a worker process."""
    return (os.cpu_count() or 1) > 1 and len(remaining) > 1 and sum(remaining) >= MIN_BYTES


def _unchanged(item: WorkItem, last: FilePart) -> bool:
    """Whether the file still holds the bytes the worker read (it may have been rewritten in
    the seconds since; then the writer reads it again, as it is now)."""
    try:
        return window_hash(item.path, last.end_offset) == last.prefix_hash
    except OSError:
        return False


class ParseAhead:
    """Files read ahead by a worker process. Ask with :meth:`take` in plan order (skipping
    some is fine); :meth:`close` (or leave the ``with`` block) when done."""

    def __init__(self, plan: Plan, options: ReadOptions) -> None:
        self._plan = plan
        self._index = {(item.source, item.key): at for at, (item, _) in enumerate(plan)}
        # Pickled parts by file, filled by the receiving thread; unpickled when taken, by
        # the writing thread, so the receiver never holds the interpreter while it writes.
        self._ready: dict[int, bytes] = {}
        self._passed = 0  # files before this one in the plan were taken or passed by
        self._reading = -1  # the file the worker said it is reading now
        self._done = False  # the worker sends nothing more
        self._arrived = threading.Condition()
        # The plan goes in a private file, not down the pipe, so starting never waits for
        # the worker to be up and reading.
        with tempfile.NamedTemporaryFile(prefix="clawback-plan-", delete=False) as handle:
            pickle.dump((plan, options), handle, protocol=pickle.HIGHEST_PROTOCOL)
        self._plan_file = Path(handle.name)
        self._worker: subprocess.Popen[bytes] | None = None
        try:
            if not sys.executable:  # an embedded interpreter: nothing to start a worker with
                raise OSError("no Python executable for a parse worker")
            self._worker = subprocess.Popen(
                # -P: never import from the current folder, which may be anyone's.
                [sys.executable, "-P", "-m", __name__, str(self._plan_file)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # a worker's failure shows as files read here
            )
            assert self._worker.stdin and self._worker.stdout
            os.set_blocking(self._worker.stdin.fileno(), False)
            # A thread empties the pipe as results come, so the worker never waits on a full
            # pipe while this process is busy writing.
            self._receiver = threading.Thread(
                target=self._receive, args=(self._worker.stdout,), name="clawback-parse-ahead"
            )
            self._receiver.daemon = True
            self._receiver.start()
        except BaseException:
            if self._worker is not None:
                self._worker.kill()
                self._worker.wait()
            self._plan_file.unlink(missing_ok=True)
            raise

    @property
    def pid(self) -> int | None:
        return self._worker.pid if self._worker else None

    def take(self, item: WorkItem, start: Start) -> list[FilePart] | None:
        """``item``'s parts read from ``start``, or ``None``: then read it in this process."""
        at = self._index.get((item.source, item.key))
        if at is None or self._worker is None:
            return None
        self._tell(at)
        with self._arrived:
            deadline = time.monotonic() + WAIT_SECONDS
            while (
                at not in self._ready
                and self._reading == at
                and not self._done
                and time.monotonic() < deadline
            ):
                self._arrived.wait(0.5)
            frame = self._ready.pop(at, None)
            # Files are taken in plan order: drop what the worker sent for those passed by,
            # each once (scanning every ready file at each take made many files quadratic).
            for passed in range(self._passed, at):
                self._ready.pop(passed, None)
            self._passed = max(self._passed, at + 1)
        if frame is None or self._plan[at][1] != start:
            return None
        parts: list[FilePart] | None = pickle.loads(frame)
        if not parts or not _unchanged(item, parts[-1]):
            return None
        return parts

    def _tell(self, at: int) -> None:
        assert self._worker and self._worker.stdin
        # A worker busy with a big file may leave the pipe full: it gets the next position.
        with contextlib.suppress(BlockingIOError, BrokenPipeError):
            os.write(self._worker.stdin.fileno(), _POSITION.pack(at))

    def _receive(self, results: IO[bytes]) -> None:
        """The receiving thread: every result the worker sends, until it stops."""
        # Whatever goes wrong here (a worker killed mid-message, say) only means the files it
        # would have sent are read by the writer itself; nothing may print from this thread.
        try:
            with contextlib.suppress(Exception):
                while len(header := results.read(_HEADER.size)) == _HEADER.size:
                    at, size = _HEADER.unpack(header)
                    if size == 0:  # the worker starts reading file ``at``
                        with self._arrived:
                            self._reading = at
                        continue
                    frame = results.read(size)
                    if len(frame) < size:
                        return
                    with self._arrived:
                        self._ready[at] = frame
                        self._arrived.notify_all()
        finally:
            with self._arrived:  # nothing more comes: nobody waits for it
                self._done = True
                self._arrived.notify_all()

    def __enter__(self) -> ParseAhead:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker: what it has not read yet is not needed."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        assert worker.stdin and worker.stdout
        with contextlib.suppress(OSError):
            worker.stdin.close()  # the worker's signal to stop
        # It may be mid-file, or blocked handing over results nobody will read; it only
        # reads files, so stopping it outright is safe.
        try:
            worker.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        self._receiver.join()  # the pipe is at its end now the worker is gone
        worker.stdout.close()
        self._ready.clear()
        self._plan_file.unlink(missing_ok=True)


# --- the worker --------------------------------------------------------------------------------


def _serve(plan_file: str) -> None:
    """Read each planned file the writer has not reached, a bounded way ahead of it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the writer's; it stops us
    with open(plan_file, "rb") as handle:
        plan, options = pickle.load(handle)
    os.unlink(plan_file)  # read once (the writer removes it too if we never get here)
    ends = [0, *itertools.accumulate(item.size - start.offset for item, start in plan)]
    writer = -1  # the file the writer is on
    pending = b""

    def hear(timeout: float | None) -> bool:
        """Take the writer's latest position; ``False`` once it has stopped or gone."""
        nonlocal writer, pending
        if not select.select([0], [], [], timeout)[0]:
            return True
        data = os.read(0, 1 << 16)
        if not data:
            return False
        pending += data
        whole = len(pending) - len(pending) % _POSITION.size
        if whole:
            (writer,) = _POSITION.unpack_from(pending, whole - _POSITION.size)
            pending = pending[whole:]
        return True

    for at, (item, start) in enumerate(plan):
        if not hear(0):
            return
        while ends[at + 1] - ends[max(writer, 0)] > AHEAD_BYTES:
            if not hear(None):
                return
        if at <= writer:
            continue  # the writer got here first and reads it itself
        try:
            os.write(1, _HEADER.pack(at, 0))  # "reading it": the writer may wait for it
        except BrokenPipeError:
            return
        reader = FileReader(
            item,
            start,
            max_line=options.max_line,
            mask=options.mask,
            seal=options.seal,
            keep=options.keep,
        )
        try:
            parts: list[FilePart] | None = list(reader.parts())
        except Exception:  # the writer's own read of the file names the failure
            parts = None
        frame = pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            os.write(1, _HEADER.pack(at, len(frame)))
            with memoryview(frame) as view:
                while view:
                    view = view[os.write(1, view) :]
        except BrokenPipeError:  # the writer is gone
            return


if __name__ == "__main__":
    _serve(sys.argv[1])
