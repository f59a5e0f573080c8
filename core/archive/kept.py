"""Kept copies of Claude Code transcripts: every line as read, secrets masked, compressed.

Claude Code deletes a transcript after ``cleanupPeriodDays`` (30 by default). The index keeps
the session browsable and searchable, but it holds parsed text, not the lines ``claude --resume``
needs, so while ingesting clawback also keeps each Claude Code line in a side file per transcript
(``<home>/kept/claude-code/<hash of the file key>.kept``) from which the transcript can be
written back (:mod:`clawback.core.archive.restore`).

A side file is a header naming the transcript, then one frame per commit of the ingest: the
frame's first and last line numbers, the byte range of the source it came from, and the lines
zlib-compressed. Lines go in one per source line (a blank or over-long line as an empty one), so
line numbers in the copy are the index's. The ``files`` row records how many bytes of the side
file are committed (``kept_bytes``), in the same transaction as the entries and offset of the
frame's lines: whatever a killed ingest appended past that length is cut off before the next
append, so the copy always holds exactly the lines the index holds. Side files live outside the
index so that losing or rebuilding ``clawback.db`` never loses a deleted session.

Masking is the index's own :func:`~clawback.core.text.masking.mask_secrets`, applied to every
string and every key of the line as the index sees them
(:func:`~clawback.core.text.json_masking.mask_json`: a value under a key that names a secret is
judged with its key, a private key block split over a list of lines is masked whole); only a
thinking block's signature, which Claude Code needs intact to resume and the index never holds,
is kept as it was. A line with nothing to mask is kept byte for byte; one with a secret is
written back as compact JSON, the way Claude Code writes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawback.core.paths import PRIVATE_FILE, ensure_private_dir
from clawback.core.safefiles import FileRefused, read_regular
from clawback.core.text import mask_json

MAGIC = b"clawback-kept 1\n"
_FRAME = struct.Struct(">4sQQQQI")  # tag, first line, last line, start, end offset, data size
_TAG = b"KEPT"
# zlib level: 4 stores 0.175x of the bench corpus (0.30x of the shared real transcripts) at
# twice the speed of 6 (0.167x); 1 is faster again but stores 0.19x.
LEVEL = 2
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


_HEADER_BYTES = 65536
_ANY_SIZE = 1 << 50  # a side file no index row speaks for is read whole (a regular file only)


class KeptCopyError(Exception):
    """A side file that is not what its ``files`` row says (damaged, or changed under us)."""


@dataclass(frozen=True, slots=True)
class KeptHeader:
    source: str
    key: str  # the transcript's path relative to its source root, as the index stores it


@dataclass(frozen=True, slots=True)
class Frame:
    first_line: int
    last_line: int
    start_offset: int
    end_offset: int
    lines: list[bytes]  # one per line from first_line to last_line, without newlines


def masked_line(raw: bytes, values: list[Any], mask: Callable[[str], str] | None) -> bytes:
    """One source line as it is kept: byte for byte unless masking changed something."""
    raw = raw.rstrip(b"\r\n")
    if mask is None:
        return raw
    if not values:  # not JSON: no structure to keep, mask it as text
        text = raw.decode("utf-8", "replace")
        masked = mask(text)
        return raw if masked == text else masked.encode()
    out, changed = [], False
    for value in values:
        new, differs = mask_json(value, mask)
        out.append(new)
        changed = changed or differs
    if not changed:
        return raw
    return "".join(_dumps(value) for value in out).encode("utf-8", "replace")


class LineKeeper:
    """The lines of one commit being read, to be made into a frame (see :class:`FileReader`).

    Lines gather in one buffer, newline-terminated, so a run of a million blank lines costs a
    million bytes, not a million list items.
    """

    __slots__ = ("buffer", "count", "first_line", "mask", "start_offset")

    def __init__(self, first_line: int, start_offset: int, mask: Callable[[str], str] | None):
        self.buffer = bytearray()
        self.count = 0
        self.first_line = first_line
        self.start_offset = start_offset
        self.mask = mask

    def add(self, raw: bytes, values: list[Any]) -> None:
        self.buffer += masked_line(raw, values, self.mask)
        self.buffer += b"\n"
        self.count += 1

    def blank(self, count: int = 1) -> None:
        self.buffer += b"\n" * count
        self.count += count

    def frame(self, end_offset: int) -> bytes | None:
        """The lines so far as one frame (``None`` if there are none), and start afresh."""
        if not self.count:
            return None
        data = compress(self.buffer)
        last_line = self.first_line + self.count - 1
        head = _FRAME.pack(
            _TAG, self.first_line, last_line, self.start_offset, end_offset, len(data)
        )
        self.buffer = bytearray()
        self.count = 0
        self.first_line, self.start_offset = last_line + 1, end_offset
        return head + data


def compress(data: bytes | bytearray) -> bytes:
    """zlib at :data:`LEVEL`, with a window no bigger than the data: a small file's frame then
    costs microseconds, where the default 32 KB window's state (a quarter megabyte, allocated
    and faulted in for each call) cost more than the rest of ingesting the file."""
    wbits = min(15, max(9, (len(data) - 1).bit_length()))
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, wbits, min(8, wbits - 7))
    return packer.compress(data) + packer.flush()


def kept_name(source: str, key: str) -> str:
    """A side file's name: a hash, since a key is a path that may be long or odd."""
    return hashlib.blake2b(f"{source}\0{key}".encode(), digest_size=16).hexdigest() + ".kept"


class KeptCopies:
    """The side files in one folder: appended by the ingest, read by restore and reindex."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._made: set[Path] = set()  # folders known to exist

    def path(self, source: str, key: str) -> Path:
        return self.folder / source / kept_name(source, key)

    def append(self, source: str, key: str, committed: int, frames: list[bytes]) -> int:
        """Add ``frames`` after the ``committed`` bytes (cutting off what a killed run left
        past them); returns the new length, to be committed with the frames' lines."""
        path = self.path(source, key)
        if path.parent not in self._made:
            ensure_private_dir(self.folder)
            ensure_private_dir(path.parent)
            self._made.add(path.parent)
        data = b"".join(frames)
        if committed == 0:
            data = MAGIC + _dumps({"source": source, "key": key}).encode() + b"\n" + data
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        else:
            fd = os.open(path, os.O_WRONLY)
        try:
            at = committed
            with memoryview(data) as view:
                while view:
                    written = os.pwrite(fd, view, at)
                    view, at = view[written:], at + written
            if committed:
                os.ftruncate(fd, at)  # what a killed run wrote past ``committed`` is cut off
            return at
        finally:
            os.close(fd)

    def discard(self, source: str, key: str) -> None:
        self.path(source, key).unlink(missing_ok=True)

    def read(self, source: str, key: str, committed: int | None) -> Iterator[Frame]:
        """The frames of a side file, up to ``committed`` bytes (``None``: every whole frame,
        for a side file no index row speaks for); none when nothing is committed."""
        if committed != 0:
            yield from read_frames(self.path(source, key), committed)

    def headers(self) -> Iterator[tuple[Path, KeptHeader]]:
        """Every side file with its header (unreadable ones left out)."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*/*.kept")):
            try:
                header, _ = read_header(read_regular(path, _HEADER_BYTES, head=True))
            except (OSError, KeptCopyError, FileRefused):
                continue
            yield path, header


def read_header(data: bytes) -> tuple[KeptHeader, int]:
    if not data.startswith(MAGIC):
        raise KeptCopyError("not a kept copy")
    end = data.find(b"\n", len(MAGIC))
    if end < 0:
        raise KeptCopyError("kept copy header cut short")
    try:
        meta = json.loads(data[len(MAGIC) : end])
        return KeptHeader(str(meta["source"]), str(meta["key"])), end + 1
    except (ValueError, KeyError, TypeError):
        raise KeptCopyError("kept copy header unreadable") from None


def read_frames(path: Path, committed: int | None) -> Iterator[Frame]:
    """The frames of the side file at ``path``: its first ``committed`` bytes (whatever a
    killed run wrote past them is not read), and only from a regular file."""
    try:
        data = read_regular(path, _ANY_SIZE if committed is None else committed, head=True)
    except FileNotFoundError:
        raise KeptCopyError(f"{path}: the kept copy is missing") from None
    except FileRefused as exc:
        raise KeptCopyError(str(exc)) from None
    if committed is not None and len(data) < committed:
        raise KeptCopyError(f"{path}: the kept copy is shorter than the index says")
    _, at = read_header(data)
    while at < len(data):
        if len(data) - at < _FRAME.size:
            if committed is None:
                return  # a frame cut short by a kill, never committed
            raise KeptCopyError(f"{path}: a frame is cut short")
        tag, first, last, start, end, size = _FRAME.unpack_from(data, at)
        at += _FRAME.size
        if tag != _TAG or len(data) - at < size:
            if committed is None:
                return
            raise KeptCopyError(f"{path}: a frame is damaged")
        try:
            body = zlib.decompress(data[at : at + size])
        except zlib.error:
            raise KeptCopyError(f"{path}: a frame does not decompress") from None
        at += size
        lines = body.split(b"\n")[:-1]
        if len(lines) != last - first + 1:
            raise KeptCopyError(f"{path}: a frame holds {len(lines)} lines, not {last - first + 1}")
        yield Frame(first, last, start, end, lines)
