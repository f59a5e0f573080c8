"""Native transcripts on disk: crash-safe appends and reading a session back into messages.

How an append stays whole (one locked ``O_APPEND`` write, torn-line repair, fsync) is in
``docs/chat.md``; the format in ``docs/native-format.md``.

This module must never rewrite or reorder existing lines, never write a partial line on purpose,
and never create a transcript readable by other users (files are 0600).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawback.core import safejson
from clawback.core.paths import PRIVATE_FILE
from clawback.core.timeutil import normalize_ts

__all__ = [
    "Compaction",
    "Transcript",
    "TranscriptMessage",
    "TranscriptView",
    "encode_line",
]

_TAIL_CHUNK = 64 * 1024


def encode_line(line: Mapping[str, Any]) -> bytes:
    """One transcript line, exactly as docs/native-format.md says writers serialise it."""
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


@dataclass(frozen=True)
class TranscriptMessage:
    """A ``message`` line read back. ``partial`` marks a reply that was cut short."""

    id: str
    role: str
    content: str
    timestamp: str | None = None
    model: str | None = None
    partial: bool = False
    usage: Mapping[str, Any] | None = None  # a reply's tokens, as claude reported them


@dataclass(frozen=True)
class Compaction:
    """A ``compaction`` line: ``summary`` stands for every message before ``first_kept_id``."""

    id: str
    summary: str
    first_kept_id: str | None
    timestamp: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None


@dataclass
class TranscriptView:
    """Everything a transcript says, in file order.

    ``messages`` holds every message ever written (compaction never removes lines);
    :attr:`live_messages` is what the model still sees after the latest compaction.
    """

    header: dict[str, Any] | None = None
    messages: list[TranscriptMessage] = field(default_factory=list)
    compaction: Compaction | None = None
    label: str | None = None
    torn_tail: bool = False
    bad_lines: int = 0
    # index into ``messages`` of the first message written after the latest compaction line
    _after_compaction: int = 0

    @property
    def live_messages(self) -> list[TranscriptMessage]:
        """Messages since the latest compaction: from its ``first_kept_id`` (if that message
        came before it) through the end; every message when there was no compaction."""
        if self.compaction is None:
            return list(self.messages)
        start = self._after_compaction
        kept = self.compaction.first_kept_id
        if kept is not None:
            for index, message in enumerate(self.messages[: self._after_compaction]):
                if message.id == kept:
                    start = index
                    break
        return self.messages[start:]

    @property
    def session_id(self) -> str | None:
        value = (self.header or {}).get("id")
        return value if isinstance(value, str) else None

    @property
    def parent_id(self) -> str | None:
        value = (self.header or {}).get("parent")
        return value if isinstance(value, str) else None

    @property
    def created(self) -> str | None:
        value = (self.header or {}).get("created")
        return value if isinstance(value, str) else None


class Transcript:
    """One native transcript file. Cheap to build; every call opens the file anew."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @property
    def torn_path(self) -> Path:
        """Where fragments cut off a torn last line are kept (never ingested: not ``.jsonl``)."""
        return self.path.with_name(self.path.name + ".torn")

    def exists(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except FileNotFoundError:
            return False

    # -- writing --------------------------------------------------------------------------------

    def create(self, header: Mapping[str, Any]) -> bool:
        """Write the header line if the file is missing or empty; True if it was written.

        The header and the folder entry are fsynced, so a new session survives a crash.
        """
        created = not self.path.exists()
        with self._locked() as fd:
            if os.fstat(fd).st_size > 0:
                return False
            _write_all(fd, encode_line(header))
            os.fsync(fd)
        if created:
            _fsync_dir(self.path.parent)
        return True

    def append(self, lines: Iterable[Mapping[str, Any]], *, sync: bool = False) -> None:
        """Append whole lines in one write, under the file lock; ``sync`` fsyncs after."""
        data = b"".join(encode_line(line) for line in lines)
        if not data:
            return
        with self._locked() as fd:
            _write_all(fd, data)
            if sync:
                os.fsync(fd)

    def sync(self) -> None:
        """fsync what was appended (the end of a turn)."""
        with contextlib.suppress(FileNotFoundError):
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    @contextlib.contextmanager
    def _locked(self) -> Any:
        """The file open for appending, exclusively locked, private, and ending in a newline."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_mode & 0o777 != PRIVATE_FILE:
                os.fchmod(fd, PRIVATE_FILE)
            self._repair_tail(fd)
            yield fd
        finally:
            os.close(fd)  # closing releases the lock

    def _repair_tail(self, fd: int) -> None:
        """Cut a torn last line (a crash mid-write) back to the last newline; keep the bytes."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return
        cut = _last_newline_end(fd, size)
        fragment = os.pread(fd, size - cut, cut)
        torn = os.open(
            self.torn_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE
        )
        try:
            _write_all(torn, fragment + b"\n")
            os.fsync(torn)
        finally:
            os.close(torn)
        os.ftruncate(fd, cut)
        os.fsync(fd)

    # -- reading --------------------------------------------------------------------------------

    def lines(self) -> tuple[list[dict[str, Any]], bool, int]:
        """Decoded JSON objects, whether the last line was torn, and how many lines were bad."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return [], False, 0
        torn = bool(data) and not data.endswith(b"\n")
        if torn:
            data = data[: data.rfind(b"\n") + 1]
        objects: list[dict[str, Any]] = []
        bad = 0
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            try:
                value = safejson.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                bad += 1
                continue
            if isinstance(value, dict):
                objects.append(value)
            else:
                bad += 1
        return objects, torn, bad

    def read(self, *, until: str | None = None) -> TranscriptView:
        """The transcript as messages, its latest compaction and label.

        ``until`` (an ISO timestamp) stops at the first message or compaction stamped later:
        a fork sees its parent as it was when the fork was made.
        """
        objects, torn, bad = self.lines()
        view = TranscriptView(torn_tail=torn, bad_lines=bad)
        cutoff = normalize_ts(until) if until else None
        for obj in objects:
            kind = obj.get("type")
            if kind == "session" and view.header is None:
                view.header = obj
                label = obj.get("label")
                view.label = label if isinstance(label, str) and label else None
                continue
            stamp = obj.get("timestamp")
            if cutoff and isinstance(stamp, str) and (normalize_ts(stamp) or "") > cutoff:
                break
            if kind == "message":
                message = _message(obj)
                if message is not None:
                    view.messages.append(message)
            elif kind == "compaction" and isinstance(obj.get("summary"), str):
                view.compaction = Compaction(
                    id=str(obj.get("id") or ""),
                    summary=obj["summary"],
                    first_kept_id=_opt_str(obj.get("first_kept_id")),
                    timestamp=_opt_str(stamp),
                    tokens_before=_opt_int(obj.get("tokens_before")),
                    tokens_after=_opt_int(obj.get("tokens_after")),
                )
                view._after_compaction = len(view.messages)
            elif kind == "label":
                label = obj.get("label")
                view.label = label if isinstance(label, str) and label else None
        return view


def _message(obj: Mapping[str, Any]) -> TranscriptMessage | None:
    role, content = obj.get("role"), obj.get("content")
    if role not in ("user", "assistant", "system") or not isinstance(content, str):
        return None
    return TranscriptMessage(
        id=str(obj.get("id") or ""),
        role=str(role),
        content=content,
        timestamp=_opt_str(obj.get("timestamp")),
        model=_opt_str(obj.get("model")),
        partial=obj.get("partial") is True,
        usage=usage if isinstance(usage := obj.get("usage"), dict) else None,
    )


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _opt_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _last_newline_end(fd: int, size: int) -> int:
    """The offset just past the last ``\\n`` before ``size`` (0 if there is none)."""
    end = size
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        chunk = os.pread(fd, end - start, start)
        found = chunk.rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
