"""What format a file is in, from the shapes of its first lines: detection without reading it all.

A file under a configured source root is that source's; anything else (``clawback ingest PATH``)
is recognised here or skipped with the reason, never guessed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawback.core.formats import detect_lines
from clawback.core.formats.lines import LineReader, decode_line, first_value
from clawback.core.records import Source

DETECT_LINES = 16  # how many lines format detection looks at before giving up on a file
WORKFLOW_JOURNAL = "not a transcript (Claude Code workflow journal)"


def detect_file(path: Path, max_line: int) -> tuple[Source | None, str]:
    """A file's format from the shapes of its first lines, or ``None`` and why not.

    The first line that tells decides (oh-my-pi files open with a ``title`` line, some
    files with a stray non-object); lines may be as long as any line (``max_line_mb``) and
    may follow blank lines and a byte-order mark. A file none of whose first
    ``DETECT_LINES`` lines has a known shape (Cursor, Codex, Gemini CLI, usage logs) is
    not read, and is named.
    """
    if path.suffix == ".md":
        return Source.MEMORY, ""
    try:
        found, first = first_value(path, max_line)
        values = _head_values(path, max_line) if found else []
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or type(exc).__name__}"
    if not found:
        return None, first
    source = detect_lines(values)
    if source is None and is_workflow_journal(path.as_posix()):
        return None, WORKFLOW_JOURNAL
    return source, "" if source else "not a transcript format clawback reads"


def is_workflow_journal(key: str) -> bool:
    """``<session>/subagents/workflows/<run>/journal.jsonl``: a run's log, not a conversation."""
    return key.endswith("/journal.jsonl") and "/workflows/" in key


def _head_values(path: Path, max_line: int) -> list[Any]:
    """The JSON values of a file's first ``DETECT_LINES`` non-blank lines."""
    values: list[Any] = []
    seen = 0
    for raw, _end, _count in LineReader(path, 0, max_line):
        if raw is None or not raw.strip():
            continue
        values.extend(decode_line(raw)[0])
        seen += 1
        if seen >= DETECT_LINES:
            break
    return values
