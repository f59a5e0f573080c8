"""Which file a hook event's ``transcript_path`` may make clawback index.

The path comes from stdin, and whatever clawback indexes it keeps (rows, a kept copy) and may
recall into a prompt. So ``stop``, ``pre-compact`` and the jobs they start index a path only if
it is a Claude Code transcript of this person's: under a configured Claude Code root (links
resolved, so a link in there cannot lead out), a regular file owned by this user, whose first
line is a JSON object with a ``type``, as every line Claude Code writes is. ``/etc/shadow``, an
SSH key, ``.env``, another user's world-readable file or a FIFO are refused with the reason.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from clawback.core.config import Config
from clawback.core.ingest.sources import claude_code_projects, parse_extra
from clawback.core.records import Source
from clawback.core.safejson import loads

HEAD_BYTES = 64 * 1024  # how much of the first line is read to tell what the file is
MISSING = "no transcript to index"


class NotATranscript(Exception):
    """The path names nothing clawback may index; the message says why (no path in it)."""


def claude_code_roots(config: Config) -> list[Path]:
    """The folders Claude Code transcripts are indexed from: ``sources.claude_code_path`` and
    any ``sources.extra`` root read as Claude Code."""
    roots = [claude_code_projects(config)]
    for spec in config.sources.extra:
        extra = parse_extra(spec)
        if extra.source is Source.CLAUDE_CODE:
            roots.append(extra.root)
    return roots


def _under(real: str, roots: list[Path]) -> bool:
    for root in roots:
        top = os.path.realpath(root)
        if real.startswith(top.rstrip(os.sep) + os.sep):
            return True
    return False


def _looks_like_a_transcript(fd: int) -> bool:
    head = os.read(fd, HEAD_BYTES)
    line, newline, _ = head.lstrip().partition(b"\n")
    if not line.startswith(b"{"):
        return False
    if not newline and len(head) == HEAD_BYTES:  # a first line longer than the head
        return b'"type"' in line
    try:
        first = loads(line.decode("utf-8", "replace"))
    except ValueError:
        return False
    return isinstance(first, dict) and isinstance(first.get("type"), str)


def checked_transcript(path_text: str, config: Config) -> Path:
    """The transcript ``path_text`` names, once it is one clawback may index; raises
    :class:`NotATranscript` otherwise (``MISSING`` when there is no such file)."""
    if not path_text or not os.path.isabs(path_text) or not os.path.lexists(path_text):
        raise NotATranscript(MISSING)
    real = os.path.realpath(path_text)
    if not real.endswith(".jsonl"):
        raise NotATranscript("transcript_path is not a .jsonl file")
    if not _under(real, claude_code_roots(config)):
        raise NotATranscript("transcript_path is not under a configured Claude Code folder")
    try:
        st = os.lstat(real)
        if not stat.S_ISREG(st.st_mode):
            raise NotATranscript("transcript_path is not a regular file")
        if st.st_uid != os.getuid():
            raise NotATranscript("transcript_path belongs to another user")
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise NotATranscript(f"transcript_path cannot be read ({exc.strerror})") from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):  # replaced since the lstat
            raise NotATranscript("transcript_path is not a regular file")
        if now.st_size and not _looks_like_a_transcript(fd):
            raise NotATranscript("transcript_path does not look like a Claude Code transcript")
    finally:
        os.close(fd)
    return Path(real)
