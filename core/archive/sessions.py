"""Read side of the archive: session lists, one session's messages, conversations.

These are the queries the CLI and the app share. Everything here only reads; writes belong to
the ingestor and the chat engine.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import asdict, dataclass
from typing import Any

from clawback.core.archive.catalog import NOT_REPEATED
from clawback.core.archive.origins import SOURCES, session_channel
from clawback.core.db import Queryable
from clawback.core.errors import NotFoundError, UsageError


@dataclass
class SessionSummary:
    id: str
    source: str
    title: str
    key: str | None
    label: str | None
    cwd: str | None
    started_at: str | None
    updated_at: str | None
    message_count: int
    source_missing: bool
    parent_id: str | None = None

    @property
    def project(self) -> str | None:
        """The project's name (its folder's own name): what ``--project`` matches part of."""
        return project_name(self.cwd) if self.cwd else None

    @property
    def channel(self) -> str | None:
        """``telegram`` for a chat that came through it (see :func:`session_channel`)."""
        return session_channel(self.source, self.key)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "project": self.project, "channel": self.channel}


_SESSION_COLUMNS = """id, source, coalesce(label, title, first_prompt, '(untitled)'), key, label,
    cwd, started_at, updated_at, message_count, source_missing, parent_id"""


def _summary(row: tuple[Any, ...]) -> SessionSummary:
    s = SessionSummary(*row)
    s.title = " ".join(s.title.split())[:200]
    s.source_missing = bool(s.source_missing)
    return s


_PROJECT_TERM = re.compile(r"(?:^|\s)project:(\S*)", re.I)


def parse_session_filter(text: str) -> tuple[str, list[str]]:
    """Split filter-box text into its words and its ``project:NAME`` terms.

    The filter box is the one place to type while browsing, so a project can be narrowed to
    there too, without reaching for the project picker. An empty ``project:`` (half typed) is
    dropped rather than matching everything.
    """
    names = [name for name in _PROJECT_TERM.findall(text) if name]
    return " ".join(_PROJECT_TERM.sub(" ", text).split()), names


def _like(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere, its ``%`` and ``_`` taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _session_where(
    source: str | None,
    project: str | None,
    project_contains: str | None,
    text: str | None,
    deleted: bool = False,
) -> tuple[str, list[Any]]:
    clauses: list[str] = ["entry_count > 0 OR label IS NOT NULL"]
    params: list[Any] = []
    if deleted:
        clauses.append("source_missing = 1")
    if source:
        clauses.append("source = ?")
        params.append(source)
    if project:
        clauses.append("cwd = ?")
        params.append(project)
    words, typed_projects = parse_session_filter(text or "")
    for name in [*typed_projects, *([project_contains] if project_contains else [])]:
        clauses.append("cwd LIKE ? ESCAPE '\\'")
        params.append(_like(name))
    for word in words.split()[:FILTER_WORDS]:
        clause, word_params = _word_clause(word)
        clauses.append(clause)
        params.extend(word_params)
    return f"({') AND ('.join(clauses)})", params


FILTER_WORDS = 8  # words of the filter box looked up; more narrow no further in practice
SAID_CAP = 5_000  # the newest messages holding a word its lookup reads: bounds a common word
_SOURCE_WORDS = " ".join(f"WHEN '{key}' THEN '{label}'" for key, label in SOURCES.items())
# What a session is known by: its label, title, first prompt, key, working folder, id, source
# (as stored and as shown: "Claude Code") and channel.
_KNOWN_BY = (
    "(coalesce(label, '') || ' ' || coalesce(title, '') || ' ' || coalesce(first_prompt, '')"
    " || ' ' || coalesce(key, '') || ' ' || coalesce(cwd, '') || ' ' || id || ' ' || source"
    f" || ' ' || (CASE source {_SOURCE_WORDS} ELSE '' END) || ' ' || coalesce(channel, ''))"
)
# The sessions where someone said it: a user's or Claude's text, not tool output (every file
# a session read would match), newest first and bounded.
_SAID = (
    "id IN (SELECT e.session_id FROM entries e WHERE e.id IN (SELECT rowid FROM entries_fts"
    " WHERE entries_fts MATCH ? ORDER BY rowid DESC LIMIT ?) AND e.kind = 'text'"
    " AND e.role IN ('user', 'assistant'))"
)


def _word_clause(word: str) -> tuple[str, list[Any]]:
    """One filter word: part of what the session is known by, or a word said in it (a prefix
    from three letters on, as one types). A word with no letter or digit (``--``) is looked up
    in what the session is known by only."""
    known = f"{_KNOWN_BY} LIKE ? ESCAPE '\\'"
    if not any(char.isalnum() for char in word):
        return known, [_like(word)]
    phrase = '"' + word.replace('"', '""') + '"' + ("*" if len(word) >= 3 else "")
    return f"{known} OR {_SAID}", [_like(word), phrase, SAID_CAP]


def list_sessions(
    db: Queryable,
    *,
    source: str | None = None,
    project: str | None = None,
    project_contains: str | None = None,
    text: str | None = None,
    limit: int | None = 50,
    offset: int = 0,
    deleted: bool = False,
) -> list[SessionSummary]:
    """Sessions newest first.

    ``project`` is a working directory exactly as :func:`projects` lists it (the app's picker);
    ``project_contains`` matches part of it, as ``search --project`` does. ``text`` is the filter
    box: each of its words is in the title, label, first prompt, key, working folder, id, source
    or channel, or was said in the session; its ``project:NAME`` terms narrow by working folder.
    ``deleted`` keeps only the sessions whose source files are all gone.
    """
    where, params = _session_where(source, project, project_contains, text, deleted)
    sql = (
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE {where}"
        " ORDER BY updated_at DESC NULLS LAST, id LIMIT ? OFFSET ?"
    )
    params.extend([-1 if limit is None else limit, offset])
    return [_summary(row) for row in db.execute(sql, params).fetchall()]


def count_sessions(db: Queryable, source: str | None = None, project: str | None = None) -> int:
    """How many sessions a source and project list (the app's status line).

    Unnarrowed it is a bare ``count(*)``, which the index answers at once because the app asks
    it at every start; that also counts the rare session with nothing to list yet.
    """
    if not source and not project:
        return int(db.execute("SELECT count(*) FROM sessions").fetchone()[0])
    where, params = _session_where(source, project, None, None)
    return int(db.execute(f"SELECT count(*) FROM sessions WHERE {where}", params).fetchone()[0])


@dataclass
class Project:
    """A working directory sessions ran in (a Claude Code project folder, an agent's cwd)."""

    path: str
    sessions: int
    updated_at: str | None

    @property
    def name(self) -> str:
        return project_name(self.path)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "name": self.name}


def project_name(cwd: str) -> str:
    """The folder's own name: what people call a project (``~/code/clawback`` -> clawback)."""
    parts = [part for part in re.split(r"[\\/]+", cwd) if part]
    return parts[-1] if parts else cwd


def projects(db: Queryable) -> list[Project]:
    """Every project with its session count, the most recently active first.

    Counts only sessions the list shows, so a project's count matches its list. Sessions with
    no working directory (clawback's own chats, some agents) belong to no project. One scan of
    the sessions table: about 10 ms for 10,000 sessions, so callers run it in a worker.
    """
    rows = db.execute(
        "SELECT cwd, count(*), max(updated_at) FROM sessions"
        " WHERE cwd IS NOT NULL AND cwd != '' AND (entry_count > 0 OR label IS NOT NULL)"
        " GROUP BY cwd ORDER BY max(updated_at) DESC NULLS LAST, cwd"
    ).fetchall()
    return [Project(path, count, updated) for path, count, updated in rows]


MIN_PREFIX = 4  # shorter prefixes only list what they match: too easy to open the wrong one


def resolve_session(db: Queryable, ref: str) -> SessionSummary:
    """A session by id, unique id prefix, or session key; an ambiguous prefix lists the
    sessions it could mean."""
    ref = ref.strip()
    rows = db.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ? OR key = ?"
        " ORDER BY updated_at DESC NULLS LAST LIMIT 1",
        (ref, ref),
    ).fetchall()
    if not rows and ref:
        # substr, not LIKE: ids such as ses_stag... hold LIKE's wildcard "_"
        rows = db.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE substr(id, 1, ?) = ?"
            " ORDER BY updated_at DESC NULLS LAST LIMIT 11",
            (len(ref), ref),
        ).fetchall()
        short = len(ref) < MIN_PREFIX
        if len(rows) > 1 or (rows and short):
            found = [_summary(row) for row in rows]
            # One line (errors are printed as one): "id (title), id (title), …"
            listed = ", ".join(f"{s.id} ({' '.join(s.title.split())[:40]})" for s in found[:10])
            more = ", …" if len(found) > 10 else ""
            why = f"too short (give {MIN_PREFIX} characters or more)" if short else "ambiguous"
            raise UsageError(f"session id prefix {ref!r} is {why}: {listed}{more}")
    if not rows:
        raise NotFoundError(f"no session {ref!r} (see `clawback sessions`)")
    return _summary(rows[0])


def unique_prefixes(db: Queryable, ids: list[str], shortest: int = 8) -> list[str]:
    """For each of ``ids``, its shortest prefix (at least ``shortest`` characters) that no other
    session's id starts with, so a listed prefix always works as an argument.

    Ids are not all random: ``openclaw-…`` and ``ses_stag…`` share long beginnings.
    """
    every = sorted(row[0] for row in db.execute("SELECT id FROM sessions"))
    prefixes = []
    for session_id in ids:
        at = bisect_left(every, session_id)
        neighbours = every[max(0, at - 1) : at] + every[at + 1 : at + 2]
        common = max((_common_length(session_id, other) for other in neighbours), default=0)
        prefixes.append(session_id[: max(shortest, common + 1)])
    return prefixes


def _common_length(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


@dataclass
class Message:
    """One message or block as the transcript view shows it (long blocks re-joined)."""

    entry_id: int
    line: int
    block: int
    role: str
    kind: str
    timestamp: str | None
    text: str
    display: str | None
    sidechain: bool
    conversational: bool
    partial: bool
    model: str | None
    file: str
    error: bool = False  # a tool's output that reports a failure

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def session_messages(
    db: Queryable,
    session_id: str,
    *,
    conversational_only: bool = False,
    sidechains: bool = True,
    after_entry: int = 0,
    limit: int | None = None,
) -> list[Message]:
    """A session's entries in transcript order, pieces of long blocks joined back together;
    a line a second file of the session repeats, once (:data:`~.catalog.NOT_REPEATED`)."""
    clauses = ["e.session_id = :session", "e.id > :after", NOT_REPEATED]
    if conversational_only:
        clauses.append("e.conversational = 1")
    if not sidechains:
        clauses.append("e.sidechain = 0")
    rows = db.execute(
        f"""SELECT min(e.id), e.line, e.block, e.role, e.kind, e.ts, group_concat(e.text, ''),
                   max(e.display), e.sidechain, e.conversational, e.partial, e.model, f.file_key,
                   max(e.error)
            FROM (SELECT * FROM entries e WHERE {" AND ".join(clauses)} ORDER BY piece) e
            JOIN files f ON f.id = e.file_id
            GROUP BY e.file_id, e.line, e.block
            ORDER BY coalesce(e.ts, ''), e.file_id, e.line, e.block
            LIMIT :limit""",
        {"session": session_id, "after": after_entry, "limit": -1 if limit is None else limit},
    ).fetchall()
    return [
        Message(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            bool(r[8]),
            bool(r[9]),
            bool(r[10]),
            r[11],
            r[12],
            bool(r[13]),
        )
        for r in rows
    ]


_EXPORTED_ASIDES = frozenset({"tool_result", "command_output", "interruption"})


def export_markdown(db: Queryable, ref: str) -> str:
    """The whole session as markdown: every message, tool calls and compactions included."""
    session = resolve_session(db, ref)
    out = [f"# {session.title}", ""]
    facts = [
        ("Session", session.id),
        ("Source", session.source),
        ("Key", session.key),
        ("Project", session.cwd),
        ("Started", session.started_at),
        ("Updated", session.updated_at),
        ("Messages", str(session.message_count)),
    ]
    out += [f"- **{name}:** {value}" for name, value in facts if value]
    if session.source_missing:
        out.append("- **Note:** the source transcript no longer exists; this is the archived copy.")
    out.append("")
    for message in session_messages(db, session.id):
        # Output the person saw in Claude Code (tool and command output, interruptions) is
        # exported; hook output and notices stay out, as they stay folded in the app.
        if not message.conversational and message.kind not in _EXPORTED_ASIDES:
            continue
        who = {"user": "User", "assistant": "Assistant", "tool": "Tool result"}.get(
            message.role, message.role.title()
        )
        when = f" · {message.timestamp}" if message.timestamp else ""
        side = " (sub-agent)" if message.sidechain else ""
        if message.kind == "compaction":
            out += ["---", f"*Compaction{when}*", "", message.text, "---", ""]
        elif message.kind == "tool_use":
            out += [f"### {who}{side}{when}", "", f"`{message.display or message.text}`", ""]
        elif message.kind == "interruption":
            out += [f"*{message.display or message.text}*", ""]
        elif message.kind in ("tool_result", "command_output"):
            who = "Command output" if message.kind == "command_output" else who
            body = message.text if len(message.text) < 2000 else message.text[:2000] + "\n…"
            out += [
                f"<details><summary>{who}{side}</summary>",
                "",
                "```",
                body,
                "```",
                "",
                "</details>",
                "",
            ]
        else:
            partial = " *(partial)*" if message.partial else ""
            out += [f"### {who}{side}{when}{partial}", "", message.text, ""]
    return "\n".join(out).rstrip() + "\n"


def list_conversations(
    db: Queryable, *, status: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    clauses, params = [], []
    if status:
        clauses.append("c.status = ?")
        params.append(status)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = db.execute(
        f"""SELECT c.id, c.session_id, c.source, c.status, c.started_at, c.ended_at,
                   c.message_count, c.first_line, c.last_line, f.file_key, c.summary
            FROM conversations c JOIN files f ON f.id = c.file_id {where}
            ORDER BY c.ended_at DESC NULLS LAST, c.id DESC LIMIT ?""",
        [*params, limit],
    ).fetchall()
    keys = [
        "id",
        "session_id",
        "source",
        "status",
        "started_at",
        "ended_at",
        "message_count",
        "first_line",
        "last_line",
        "file",
        "summary",
    ]
    return [dict(zip(keys, row, strict=True)) for row in rows]
