"""Writing a Claude Code session back from its kept copy, where ``claude --resume`` finds it.

Claude Code looks for a session's transcript in ``~/.claude/projects/<project>/<id>.jsonl``
(``<project>`` is the session's working folder with every character other than a letter or digit
made ``-``), its sub-agents' in ``<id>/subagents/``. :func:`restore_session` writes every file of
the session there from the copies :mod:`clawback.core.archive.kept` keeps, and never overwrites
a file: each one is written to a temporary name and linked into place, which fails if the name
is taken, even by a file that appeared a moment ago. ``force`` first moves what is there aside
as a backup, and says where.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import sqlite_utils
from clawback.core.archive.kept import Frame, KeptCopies, KeptCopyError
from clawback.core.archive.sessions import SessionSummary
from clawback.core.errors import ClawbackError, UsageError
from clawback.core.paths import PRIVATE_FILE, ensure_private_dir
from clawback.core.records import Source
from clawback.core.safefiles import set_aside


class RestoreError(ClawbackError):
    """A session that cannot be written back as asked."""


class NotIndexed(RestoreError):
    """The session is written back, but the index could not take it in (a home clawback cannot
    write to): :attr:`written` says what was written, the message why the index was not."""

    exit_code = 0

    def __init__(self, written: list[Restored], reason: str) -> None:
        super().__init__(
            f"the transcript is back, but clawback's index was not updated: {reason}"
            " (`clawback sessions --deleted` lists the session until an ingest can write)"
        )
        self.written = written


@dataclass(frozen=True)
class SessionFile:
    """One transcript of a session as the index knows it."""

    key: str
    path: str  # where it was last seen
    kept_bytes: int
    last_line: int
    missing: bool


@dataclass(frozen=True)
class Restored:
    path: Path
    lines: int
    backup: Path | None = None  # what was there before (``force``), under a name of its own
    also: list[Path] = field(default_factory=list)  # the same file, still where it was read


#: Claude Code keeps a project folder's name to this many characters, then adds a hash.
_FOLDER_NAME_MAX = 200


def project_folder(cwd: str) -> str:
    """The folder Claude Code keeps a working folder's sessions in (``/a/b`` -> ``-a-b``).

    As Claude Code does it (2.1.328): every UTF-16 code unit other than an ASCII letter or
    digit becomes ``-`` (so a character beyond U+FFFF, an emoji, becomes two); a name longer
    than 200 is cut there and ends with ``-`` and the base-36 of the absolute value of the
    path's 32-bit string hash (Java's ``s[0]*31^(n-1) + ...``, as JavaScript computes it), so
    a working folder deeper than a file name may be still has one.
    """
    units = [unit for (unit,) in struct.iter_unpack("<H", cwd.encode("utf-16-le", "surrogatepass"))]
    name = "".join(chr(unit) if unit < 128 and chr(unit).isalnum() else "-" for unit in units)
    if len(name) <= _FOLDER_NAME_MAX:
        return name
    return f"{name[:_FOLDER_NAME_MAX]}-{_base36(abs(_string_hash(units)))}"


def _string_hash(units: list[int]) -> int:
    """JavaScript's ``h = (h << 5) - h + charCodeAt(i) | 0`` over the UTF-16 code units."""
    value = 0
    for unit in units:
        value = (value * 31 + unit) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, digit = divmod(number, 36)
        out = digits[digit] + out
        if not number:
            return out


def session_files(db: sqlite_utils.Database, session_id: str) -> list[SessionFile]:
    """The session's Claude Code files: its own transcript first, then its sub-agents'.

    A session with no file of its own (its lines sit in another session's file, as when a file
    mixes sessions) has the files that hold its entries.
    """
    rows = db.execute(
        """SELECT file_key, path, kept_bytes, last_line, missing FROM files
           WHERE source = ? AND (session_id = ? OR (
               NOT EXISTS (SELECT 1 FROM files WHERE session_id = ?)
               AND id IN (SELECT file_id FROM entries WHERE session_id = ?)))
           ORDER BY file_key""",
        (Source.CLAUDE_CODE.value, session_id, session_id, session_id),
    ).fetchall()
    files = [
        SessionFile(key, path, kept, last, bool(missing)) for key, path, kept, last, missing in rows
    ]
    files.sort(key=lambda f: (is_subagent(f.key), f.key))
    return files


def is_subagent(key: str) -> bool:
    parts = PurePosixPath(key).parts
    return "subagents" in parts[:-1] or parts[-1].startswith("agent-")


def transcript_gone(files: list[SessionFile]) -> bool:
    """Whether the session's own transcript is no longer where Claude Code wrote it."""
    main = [f for f in files if not is_subagent(f.key)]
    return not main or not any(Path(f.path).exists() for f in main)


def destination(root: Path, session: SessionSummary, file: SessionFile) -> Path:
    """Where ``file`` goes under the projects folder ``root``: its own place when it was read
    from a Claude Code projects folder (``-home-me-proj/<id>.jsonl``), else the project folder
    of the session's working folder (a file ingested from a backup or any other folder)."""
    parts = PurePosixPath(file.key).parts
    if len(parts) >= 2 and parts[0].startswith("-"):
        return root.joinpath(*parts)
    if not session.cwd:
        raise RestoreError(
            f"session {session.id} does not say which folder it ran in, so where Claude Code"
            f" would look for it under {root} is unknown"
        )
    tail = parts[-1:]
    if "subagents" in parts[:-1]:  # a sub-agent stays beside its session: <id>/subagents/...
        at = len(parts) - 2 - parts[-2::-1].index("subagents")
        tail = parts[max(at - 1, 0) :]
    return root.joinpath(project_folder(session.cwd), *tail)


def _lines(copies: KeptCopies, file: SessionFile) -> list[bytes]:
    """The file's lines from its copy, checked to run from line 1 without a gap."""
    if not file.kept_bytes:
        raise RestoreError(
            f"no copy of {file.key} was kept (it was indexed while archive.keep_lines was off,"
            " or before clawback kept copies), so it cannot be written back"
        )
    lines: list[bytes] = []
    frames: list[Frame]
    try:
        frames = list(copies.read(Source.CLAUDE_CODE.value, file.key, file.kept_bytes))
    except KeptCopyError as exc:
        raise RestoreError(f"the kept copy of {file.key} cannot be read: {exc}") from None
    for frame in frames:
        if frame.first_line != len(lines) + 1:
            raise RestoreError(
                f"the kept copy of {file.key} misses lines before {frame.first_line}"
            )
        lines.extend(frame.lines)
    return lines


def restore_session(
    db: sqlite_utils.Database,
    copies: KeptCopies,
    session: SessionSummary,
    root: Path,
    *,
    force: bool = False,
    copy: bool = False,
) -> list[Restored]:
    """Write ``session``'s transcript (and its sub-agents') under the projects folder ``root``.

    Every file is checked before any is written: an existing one stops it all (unless
    ``force``, which moves it aside first, under a backup name no other file holds), as does a
    copy that is missing or incomplete, and a transcript that still exists where it was read,
    unless ``force`` or ``copy`` (a folder the person named) ask for a copy all the same; what
    is written names the original (:attr:`Restored.also`). A session read
    from two files that land in one place (restored, resumed, deleted again) is written from
    the one that holds the other's lines and more; two that disagree stop it.
    """
    if session.source != Source.CLAUDE_CODE.value:
        raise UsageError(
            f"session {session.id} is a {session.source} session: only Claude Code sessions"
            " can be restored"
        )
    files = session_files(db, session.id)
    if not files:
        raise RestoreError(f"session {session.id} has no transcript file in the index")
    plan = _one_per_place(
        session, [(destination(root, session, f), f, _lines(copies, f)) for f in files]
    )
    alive = {
        path: [Path(f.path) for f in read if _still_elsewhere(f, path)] for path, read, _ in plan
    }
    if not (force or copy) and any(alive.values()):
        first = next(path for path, found in alive.items() if found)
        raise RestoreError(
            f"the transcript of session {session.id} still exists at {alive[first][0]}, so it is"
            f" not deleted; nothing was written (--force writes a copy to {first} as well)"
        )
    taken = [path for path, _, _ in plan if path.exists() or path.is_symlink()]
    if taken and not force:
        listed = ", ".join(str(p) for p in taken)
        raise RestoreError(
            f"{listed} already exists; nothing was written (--force moves it aside as a backup"
            " first)"
        )
    done = []
    for path, _, lines in plan:
        backup = None
        if path.exists() or path.is_symlink():
            backup = set_aside(path)
        _write_new(path, lines)
        done.append(Restored(path, len(lines), backup, alive[path]))
    return done


def _still_elsewhere(file: SessionFile, place: Path) -> bool:
    where = Path(file.path)
    return not file.missing and where != place and where.is_file()


def _one_per_place(
    session: SessionSummary, plan: list[tuple[Path, SessionFile, list[bytes]]]
) -> list[tuple[Path, list[SessionFile], list[bytes]]]:
    """One file per place: where several would land in one, the one whose lines begin with
    every other's (a restored copy that was resumed holds its original and more)."""
    places: dict[Path, list[tuple[SessionFile, list[bytes]]]] = {}
    for path, file, lines in plan:
        places.setdefault(path, []).append((file, lines))
    merged = []
    for path, found in places.items():
        found.sort(key=lambda pair: len(pair[1]), reverse=True)
        longest = found[0][1]
        if any(longest[: len(lines)] != lines for _, lines in found[1:]):
            keys = ", ".join(file.key for file, _ in found)
            raise RestoreError(
                f"files of session {session.id} read from different folders ({keys}) would"
                f" all be written to {path} but hold different lines; nothing was written"
            )
        merged.append((path, [file for file, _ in found], longest))
    return merged


def _write_new(path: Path, lines: list[bytes]) -> None:
    """Write ``path`` only if nothing is there: a temporary file linked into place."""
    if not path.parent.is_dir():
        ensure_private_dir(path.parent)
    temp = path.with_name(f".{path.name}.clawback-{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as handle:
            for line in lines:
                handle.write(line)
                handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, path)
        except FileExistsError:
            raise RestoreError(
                f"{path} appeared while restoring; nothing was overwritten"
            ) from None
    finally:
        temp.unlink(missing_ok=True)
