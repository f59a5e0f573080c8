"""Reading JSONL transcripts line by line, whatever the bytes: the one place lines enter.

Huge lines, blank runs, unfinished last lines, byte-order marks, invalid UTF-8 and deep nesting
are dealt with here, once (``docs/formats.md``), so memory stays bounded by ``max_line``.

It never raises on content: a line gives values and a reason to report, or only the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawback.core import safejson

_loads = json.loads
_raw_decode = json.JSONDecoder().raw_decode
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # \uD800-\uDFFF

BOM = b"\xef\xbb\xbf"
_READ_BUFFER = 1 << 20
_STREAM_PIECE = 1 << 20  # how much of an over-long line is held at a time
_NEWLINES = re.compile(rb"\n+")
MB = 1024 * 1024


def decode_line(raw: bytes) -> tuple[list[Any], str | None]:
    """JSON values on one line, and why the line is reported (``None`` if it is clean).

    Invalid UTF-8 is decoded with replacement characters rather than dropped, and two objects
    run together on one line (seen in real Claude Code logs) are both kept.
    """
    if raw[:3] == BOM:
        raw = raw[3:]
    problem = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        problem = "invalid UTF-8 (replaced)"
    else:
        # safejson.loads inlined: this runs once per line. The surrogate test looks at the bytes
        # first (an escape is ASCII, so it is in both or in neither) with a regex: ``in`` is
        # slow for a needle ending in a letter as common as "u" or "d".
        # ``raw_decode`` skips ``json.loads``'s whitespace regexes; leading blanks (rare) get
        # ``json.loads``, trailing blanks are checked here, and anything else after the value
        # goes to the slow path below, as an error from ``json.loads`` would.
        try:
            try:
                value, end = _raw_decode(text)
            except ValueError:
                value, end = _loads(text), len(text)
        except RecursionError:
            return [], str(safejson.NestedTooDeep())
        except ValueError:
            pass
        else:
            if end == len(text) or text[end:].isspace():
                if _SURROGATE_ESCAPE.search(raw) and safejson.may_hold_lone_surrogate(text):
                    value = safejson.clean(value)
                return [value], None
    values: list[Any] = []
    pos, end = 0, len(text.rstrip())
    try:
        while pos < end:
            value, pos = safejson.raw_decode(text, pos)
            values.append(value)
            while pos < end and text[pos].isspace():
                pos += 1
    except safejson.NestedTooDeep as exc:
        return [], str(exc)
    except ValueError:
        return [], "malformed JSON"
    if len(values) > 1:
        problem = f"{len(values)} JSON values on one line (all kept)"
    return values, problem


class LineReader:
    """Complete lines of a file from ``offset``: iterate for ``(line, end, count)``.

    ``line`` is the line's bytes with ``count == 1``; ``b""`` for a run of ``count`` blank
    lines; ``None`` for a line over ``max_line`` bytes that was skipped, ``count`` being its
    size. ``end`` is the offset after it. After iterating, :attr:`torn` is the size of an
    unfinished last line (0 if the file ends with a newline, or ``finished`` and it is whole).
    """

    def __init__(self, path: Path, offset: int, max_line: int, *, finished: bool = False) -> None:
        self.path = path
        self.offset = offset
        self.max_line = max_line
        self.finished = finished
        self.torn = 0

    def __iter__(self) -> Iterator[tuple[bytes | None, int, int]]:
        limit = self.max_line + 1  # the newline may come on top of max_line bytes
        offset = self.offset
        with self.path.open("rb", buffering=_READ_BUFFER) as handle:
            handle.seek(offset)
            readline, read = handle.readline, handle.read
            peek = handle.peek  # type: ignore[attr-defined]  # a BufferedReader: it has one
            while raw := readline(limit):
                if raw[-1:] != b"\n":
                    if len(raw) < limit:
                        if self.finished and _whole_json(raw):
                            yield raw, offset + len(raw), 1
                            return
                        self.torn = len(raw)  # being written: the next pass takes it whole
                        return
                    size = self._skip_rest(readline, len(raw))
                    if size < 0:
                        self.torn = -size
                        return
                    offset += size
                    yield None, offset, size
                    continue
                offset += len(raw)
                if raw != b"\n":
                    yield raw, offset, 1
                    continue
                count = 1
                while (run := _NEWLINES.match(peek(_READ_BUFFER))) is not None:
                    read(run.end())
                    count += run.end()
                    offset += run.end()
                yield b"", offset, count

    @staticmethod
    def _skip_rest(readline: Any, size: int) -> int:
        """Read past the rest of an over-long line; its size, or minus it if it never ends."""
        while piece := readline(_STREAM_PIECE):
            size += len(piece)
            if piece[-1:] == b"\n":
                return size
        return -size


def _whole_json(raw: bytes) -> bool:
    values, problem = decode_line(raw)
    return bool(values) and problem is None


def first_value(path: Path, max_line: int) -> tuple[bool, Any]:
    """``(True, value)``: the first JSON value of a file, after blank lines and a byte-order
    mark; ``(False, why)`` when there is none."""
    for raw, _end, _count in LineReader(path, 0, max_line):
        if raw is None:
            return False, "first line over max_line_mb"
        if raw.strip():
            values, _ = decode_line(raw)
            return (True, values[0]) if values else (False, "first line is not JSON")
    return False, "empty file"
