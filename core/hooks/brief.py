"""``session-start``: a short brief of what clawback remembers for the project in ``cwd``.

In order, each part within its share of ``hooks.brief_tokens``: after a compaction, the notes
the pre-compact flush just saved from this very session; the head of ``MEMORY.md``; the newest
notes in ``memory/`` (sections about this project first); the knowledge facts from this
project's sessions; and the few most recent sessions in this project, each with the ref
``memory_get`` accepts (its id). The whole is always under Claude Code's 10,000-character cut.

It reads memory files straight from the workspace (refusing any that link out of it, as the
workspace does) and the index through a plain read connection; it writes nothing.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from clawback.core.archive import project_name
from clawback.core.db import connect_reader
from clawback.core.hooks.framing import as_reference
from clawback.core.hooks.locks import flush_running
from clawback.core.hooks.run import MAX_CONTEXT_CHARS, Answer, HookContext
from clawback.core.recall import CLOSE_TAG
from clawback.core.text import neutralise_wrappers, prompt_field
from clawback.core.tokens import CHARS_PER_TOKEN

OPEN_TAG = '<recalled-context source="memory" kind="brief">'
NOTE_FILES = 3  # newest daily files read
FACTS = 12
SESSIONS = 5
SCANNED_PER_SESSION = 8  # latest sessions read per line shown: repeats and empty ones are skipped
TITLE_CHARS = 120  # each field of a transcript is one line and at most this long in the brief
FACT_CHARS = 400
KIND_CHARS = 24
REF_CHARS = 80
HEADING_CHARS = 160
SECTION_CHARS = 700  # one note section at most, so one long day cannot fill the brief
#: share of the budget per part
SHARES = {"flushed": 0.30, "memory": 0.25, "notes": 0.25, "facts": 0.20, "sessions": 0.15}
WAIT_FOR_FLUSH_S = 3.0  # after a compaction, how long the brief waits for this session's flush
_DAILY = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")


@dataclass(frozen=True)
class BriefPart:
    title: str
    lines: list[str]


def _inside(path: Path, root: Path) -> bool:
    try:
        return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)
    except OSError:
        return False


def _read(path: Path, workspace: Path) -> str:
    """A memory file's text, or ``""`` (missing, unreadable, or a link out of the workspace)."""
    if not path.is_file() or not _inside(path, workspace):
        return ""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _fit(lines: Iterable[str], chars: int) -> list[str]:
    """As many of ``lines`` as fit in ``chars`` (the last one cut at a word, marked ``…``)."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 <= chars:
            kept.append(line)
            used += len(line) + 1
            continue
        room = chars - used - 2
        if room > 40:
            kept.append(line[:room].rsplit(" ", 1)[0] + "…")
        break
    return kept


def _sections(text: str) -> list[tuple[str, str]]:
    """A daily notes file as ``(heading, body)`` pairs, split at ``## `` headings."""
    found: list[tuple[str, str]] = []
    heading, body = "", list[str]()
    for line in text.splitlines():
        if line.startswith("## "):
            if heading or any(b.strip() for b in body):
                found.append((heading, "\n".join(body).strip()))
            heading, body = line[3:].strip(), []
        elif not line.startswith("# "):
            body.append(line)
    if heading or any(b.strip() for b in body):
        found.append((heading, "\n".join(body).strip()))
    return found


def daily_files(workspace: Path) -> list[Path]:
    """``memory/YYYY-MM-DD.md``, newest first."""
    try:
        names = sorted((p.name for p in (workspace / "memory").iterdir()), reverse=True)
    except OSError:
        return []
    return [workspace / "memory" / name for name in names if _DAILY.match(name)]


def flushed_notes(workspace: Path, session_id: str, chars: int) -> list[str]:
    """The notes a flush of ``session_id`` wrote (its heading names the session's short id)."""
    marker = f"session {prompt_field(session_id[:8], 8)})"  # as the flush wrote it
    for path in daily_files(workspace)[:2]:
        picked = [body for heading, body in _sections(_read(path, workspace)) if marker in heading]
        if picked:
            return _fit(_note_lines(picked[-1]), chars)
    return []


def _note_lines(body: str) -> list[str]:
    return [
        line
        for line in body.splitlines()
        if line.strip() and not line.startswith("Memory flush from")
    ]


def recent_notes(workspace: Path, project: str, skip_session: str, chars: int) -> list[str]:
    """The newest note sections, this project's first (its name in the heading)."""
    ours: list[str] = []
    others: list[str] = []
    for path in daily_files(workspace)[:NOTE_FILES]:
        for heading, body in reversed(_sections(_read(path, workspace))):
            if skip_session and f"session {prompt_field(skip_session[:8], 8)})" in heading:
                continue
            lines = _fit(_note_lines(body), SECTION_CHARS)
            if not lines:
                continue
            entry = [f"### {path.stem} {prompt_field(heading, HEADING_CHARS)}".rstrip(), *lines]
            (ours if project and project in heading else others).append("\n".join(entry))
    return _fit([*ours, *others], chars)


def memory_head(workspace: Path, chars: int) -> list[str]:
    text = _read(workspace / "MEMORY.md", workspace)
    return _fit([line for line in text.splitlines() if line.strip()], chars)


def project_facts(conn: sqlite3.Connection, cwd: str, chars: int) -> list[str]:
    rows = conn.execute(
        """SELECT f.type, f.content FROM facts f JOIN sessions s ON s.id = f.session_id
           WHERE f.superseded_by IS NULL AND s.cwd = ?
           ORDER BY COALESCE(f.source_ts, f.created_at) DESC LIMIT ?""",
        (cwd, FACTS),
    ).fetchall()
    return _fit(
        (
            f"- [{prompt_field(kind, KIND_CHARS)}] {prompt_field(content, FACT_CHARS)}"
            for kind, content in rows
        ),
        chars,
    )


def project_sessions(conn: sqlite3.Connection, cwd: str, session_id: str, chars: int) -> list[str]:
    """This project's latest sessions, each once: a session that is only a prompt (no reply) or
    has nothing to name it by says nothing, and sessions of the same title (a script running
    the same ``claude -p`` again and again) are one line, the newest."""
    rows = conn.execute(
        """SELECT id, COALESCE(label, title, first_prompt, ''), updated_at FROM sessions
           WHERE cwd = ? AND id != ? AND message_count >= 2
           ORDER BY updated_at DESC LIMIT ?""",
        (cwd, session_id, SESSIONS * SCANNED_PER_SESSION),
    ).fetchall()
    lines = []
    seen: set[str] = set()
    for sid, title, updated in rows:
        name = prompt_field(title, TITLE_CHARS)
        if not name or name.casefold() in seen:
            continue
        seen.add(name.casefold())
        when = prompt_field((updated or "")[:16].replace("T", " "), 16)
        lines.append(f"- {when} · {name} · ref: {session_ref(sid)}")
        if len(lines) == SESSIONS:
            break
    return _fit(lines, chars)


def session_ref(session_id: str) -> str:
    """What ``memory_get`` takes for a session: its id, or for an id that is not one word (a
    forged ``sessionId`` holding a line break and more), the id's first word, which memory_get
    reads as a prefix of it."""
    words = prompt_field(session_id, REF_CHARS).split()
    return words[0] if words else ""


def build_brief(
    conn: sqlite3.Connection | None,
    workspace: Path,
    *,
    cwd: str,
    session_id: str,
    after_compact: bool,
    budget_tokens: int,
) -> str:
    """The brief's block (defanged, not yet framed), or ``""`` when there is nothing to say."""
    total = min(budget_tokens * CHARS_PER_TOKEN, MAX_CONTEXT_CHARS - 1_000)
    share = {part: int(total * value) for part, value in SHARES.items()}
    project = project_name(cwd)
    parts = []
    if after_compact:
        parts.append(
            BriefPart(
                "Notes saved from this session before it was compacted",
                flushed_notes(workspace, session_id, share["flushed"]),
            )
        )
    parts.append(BriefPart("MEMORY.md (its beginning)", memory_head(workspace, share["memory"])))
    skip = session_id if after_compact else ""
    parts.append(
        BriefPart("Recent notes (memory/)", recent_notes(workspace, project, skip, share["notes"]))
    )
    if conn is not None:
        name = prompt_field(project, TITLE_CHARS)
        parts.append(BriefPart(f"Known about {name}", project_facts(conn, cwd, share["facts"])))
        parts.append(
            BriefPart(
                f"Recent sessions in {name} (memory_get takes the ref)",
                project_sessions(conn, cwd, session_id, share["sessions"]),
            )
        )
    body = [f"## {part.title}\n" + "\n".join(part.lines) for part in parts if part.lines]
    if not body:
        return ""
    text = "\n\n".join(neutralise_wrappers(section) for section in body)
    about = neutralise_wrappers(
        f"Memory brief for the project {prompt_field(project, TITLE_CHARS)}"
        f" ({prompt_field(cwd, TITLE_CHARS * 2)})."
    )
    return f"{OPEN_TAG}\n{about}\n\n{text}\n{CLOSE_TAG}"


def answer(ctx: HookContext) -> Answer:
    event = ctx.event
    after_compact = event.source == "compact"
    if after_compact:
        # The pre-compact flush runs apart; its notes belong first in this brief if it is close.
        waited_until = time.monotonic() + min(WAIT_FOR_FLUSH_S, ctx.seconds_left() - 1.0)
        while flush_running(ctx.paths, event.session_id) and time.monotonic() < waited_until:
            time.sleep(0.1)
    conn = connect_reader(ctx.paths.database)
    try:
        block = build_brief(
            conn,
            ctx.workspace,
            cwd=event.cwd,
            session_id=event.session_id,
            after_compact=after_compact,
            budget_tokens=ctx.config.hooks.brief_tokens,
        )
    finally:
        if conn is not None:
            conn.close()
    if not block:
        return Answer(detail="nothing remembered for this project yet")
    return Answer(text=as_reference(block), detail=f"source {event.source or '?'}")
