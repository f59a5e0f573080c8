"""The hooks log: one JSON line per hook run, so a failure inside Claude Code is never silent.

A hook must print nothing but its answer (Claude Code reads stdout), so what went wrong goes
here: ``<home>/hooks/log.jsonl``, private to the user, kept to its newest
:data:`KEEP_LINES` runs. ``clawback hooks status`` and ``clawback health`` read it back.
Writing the log must never fail a hook either: an unwritable log is given up on quietly.

The log holds no more than the index would: the session id, the working folder and the detail
go through the index's own masking (:func:`~clawback.core.text.masking.seal`) as they are
written, and no handler puts a prompt's words in a detail.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from clawback.core.config import atomic_write_bytes
from clawback.core.paths import PRIVATE_FILE, ensure_private_dir

LOG_NAME = "log.jsonl"
LOCK_NAME = "log.lock"
MAX_BYTES = 512 * 1024
KEEP_LINES = 1_000
#: what a run ended as; "error" and "timeout" are the ones a person should look at
OUTCOMES = ("ok", "empty", "skipped", "detached", "error", "timeout")
#: the warm process's runs (``clawback hook serve``: recall, search, chat turns)
WARM_EVENT = "warm"
#: names older logs hold, read as today's so one event keeps one name in status and health
RENAMED_EVENTS = {"recall-server": WARM_EVENT}


@dataclass(frozen=True)
class HookRun:
    event: str  # the clawback name (session-start, user-prompt, ...)
    outcome: str
    ms: float
    at: str = ""  # UTC, ISO 8601
    chars: int = 0  # context given to Claude
    session_id: str = ""
    cwd: str = ""
    detail: str = ""  # why (an error, a skip), or what was done

    @property
    def failed(self) -> bool:
        return self.outcome in ("error", "timeout")


def log_path(hooks_dir: Path) -> Path:
    return hooks_dir / LOG_NAME


def masked(run: HookRun) -> HookRun:
    """``run`` with what an event or an error brought in (the session id, the working folder,
    the detail) masked as the index masks the same fields."""
    from clawback.core.text import seal  # only a run that has such text pays for it

    return replace(
        run,
        session_id=seal(run.session_id) if run.session_id else "",
        cwd=seal(run.cwd) if run.cwd else "",
        detail=seal(run.detail) if run.detail else "",
    )


def record(hooks_dir: Path, run: HookRun) -> None:
    """Append ``run`` (stamped now, masked) to the log; never raises.

    Appending and trimming hold the log's ``flock`` (a file beside it): a trim replaces the
    file, and a line appended between its read and its replace would go to the file replaced.
    """
    run = masked(run)
    stamped = dict(asdict(run), at=run.at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    line = (json.dumps(stamped, ensure_ascii=False) + "\n").encode("utf-8")
    path = log_path(hooks_dir)
    with contextlib.suppress(OSError):
        ensure_private_dir(hooks_dir)
        lock = os.open(hooks_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # held for microseconds: one write, or one trim
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
            try:
                os.write(fd, line)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            if size > MAX_BYTES:
                _trim(path)
        finally:
            os.close(lock)  # closing releases the flock


def _trim(path: Path) -> None:
    """Keep the newest :data:`KEEP_LINES` lines (the caller holds the log's lock)."""
    lines = path.read_bytes().splitlines(keepends=True)[-KEEP_LINES:]
    atomic_write_bytes(path, b"".join(lines))


def read_runs(hooks_dir: Path, limit: int = KEEP_LINES) -> list[HookRun]:
    """The newest ``limit`` runs, oldest first; lines that are not runs are skipped."""
    try:
        raw = log_path(hooks_dir).read_bytes()
    except OSError:
        return []
    runs = []
    for line in raw.splitlines()[-limit:]:
        try:
            data: dict[str, Any] = json.loads(line)
            run = HookRun(**{k: data[k] for k in HookRun.__dataclass_fields__ if k in data})
            if run.event in RENAMED_EVENTS:
                run = replace(run, event=RENAMED_EVENTS[run.event])
            runs.append(run)
        except (ValueError, TypeError, KeyError):
            continue
    return runs


def last_runs(hooks_dir: Path) -> dict[str, HookRun]:
    """Each event's latest run."""
    return {run.event: run for run in read_runs(hooks_dir)}


def recent_failures(hooks_dir: Path, limit: int = 5) -> list[HookRun]:
    """The latest failed runs, newest last (for ``health``)."""
    return [run for run in read_runs(hooks_dir) if run.failed][-limit:]
