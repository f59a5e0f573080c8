"""Derived per-session figures and titles in the ``sessions`` table, recomputed from the entries.

Recomputing from the entries (rather than keeping running totals) keeps the numbers right after
a re-import, a crash recovery or a deleted source file, at the cost of a few indexed queries per
changed session.

A title is one clean line (lists show one row per session), chosen in this order: a name the
person gave (``custom-title``, ``/rename``), the source's own title (an AI title, a pi or
OpenClaw session name), the Claude Code summary of the session, else its first real prompt.
Claude Code writes a summary into a *later* file of the project and names the session it
describes by the uuid of its last message, so :func:`resolve_leaf_titles` matches summaries to
sessions by uuid whenever files arrive, in any order.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clawback.core.formats.rendering import IMAGE_MARKER, strip_markup

TITLE_WIDTH = 200

# The entries a later file of a session repeats from an earlier one (the session as
# ``:session``): the same transcripts kept under two folders, or a resumed session's file, would
# otherwise show and count twice. A copy is the same line, thread and text (a uuid alone is not
# enough: short ones get reused), the earliest file keeping it; a line without a uuid (pi's older
# sessions) is known by its timestamp, role and kind. With uuids, one pass over the session's
# small columns finds those in several files and only their texts are compared; CROSS JOIN keeps
# the session's entries the outer loop (driven by the twins, SQLite read the session per twin).
_REPEATED = """
SELECT c.id FROM entries c
CROSS JOIN (SELECT uuid, block, piece, sidechain, min(file_id) AS first FROM entries
      WHERE session_id = :session AND uuid IS NOT NULL
      GROUP BY uuid, block, piece, sidechain HAVING count(DISTINCT file_id) > 1) t
  ON c.uuid = t.uuid AND c.block = t.block AND c.piece = t.piece
  AND c.sidechain = t.sidechain AND c.file_id > t.first
JOIN entries o
  ON o.file_id = t.first AND o.uuid = t.uuid AND o.block = t.block AND o.piece = t.piece
  AND o.sidechain = t.sidechain
WHERE c.session_id = :session AND c.text = o.text
UNION ALL
SELECT c.id FROM entries c
WHERE c.session_id = :session AND c.uuid IS NULL AND c.ts IS NOT NULL AND EXISTS (
    SELECT 1 FROM entries o
    WHERE o.session_id = :session AND o.ts = c.ts AND o.file_id < c.file_id
      AND o.uuid IS NULL AND o.role = c.role AND o.kind = c.kind AND o.block = c.block
      AND o.piece = c.piece AND o.sidechain = c.sidechain AND o.text = c.text)"""
# Entry ``e`` is not such a repeat. Copies come as whole transcripts, so a session whose main
# thread is in one file (nearly all: sub-agents have files of their own) skips the lookup, which
# costs several times the rest of a recount (ingest of bench/archive.py's corpus, whose every
# session has sub-agent files, ran 5-8% slower when every session paid it).
NOT_REPEATED = f"""(
    (SELECT count(DISTINCT file_id) FROM entries WHERE session_id = :session AND sidechain = 0)
        <= 1
    OR e.id NOT IN ({_REPEATED}))"""

_REFRESH = f"""
UPDATE sessions SET
    message_count = (
        -- Main-thread messages; a session known only from sub-agent files (its own file is
        -- empty or gone) counts those instead of showing 0.
        SELECT CASE WHEN sum(sidechain = 0) > 0 THEN sum(sidechain = 0) ELSE count(*) END
        FROM (
            SELECT DISTINCT file_id, line, sidechain FROM entries e
            WHERE session_id = :session AND conversational = 1
              AND role IN ('user', 'assistant') AND {NOT_REPEATED})),
    entry_count = (SELECT count(*) FROM entries WHERE session_id = :session),
    started_at = coalesce(
        (SELECT min(ts) FROM entries WHERE session_id = :session), started_at),
    updated_at = coalesce(
        (SELECT max(ts) FROM entries WHERE session_id = :session), updated_at),
    -- A file can hold several sessions (a resumed or forked one, a fixture) while naming only
    -- its first: any present file with an entry of the session counts.
    source_missing = NOT EXISTS (
        SELECT 1 FROM files WHERE session_id = :session AND missing = 0)
      AND NOT EXISTS (
        SELECT 1 FROM entries e JOIN files f ON f.id = e.file_id
        WHERE e.session_id = :session AND f.missing = 0)
WHERE id = :session
"""

_PROMPTS = """
SELECT text, display FROM entries
WHERE session_id = ? AND role = 'user' AND kind = 'text' AND conversational = 1 AND piece = 0
ORDER BY sidechain, ts, id LIMIT 50
"""

_ANY_TEXT = """
SELECT coalesce(display, substr(text, 1, 4000)) FROM entries
WHERE session_id = ? AND kind != 'summary' AND piece = 0
ORDER BY conversational DESC, sidechain, ts, id LIMIT 1
"""

# Context blocks the CLI adds to a prompt: their content is not what the person asked.
_CONTEXT_BLOCK = re.compile(
    r"<(system-reminder|ide_selection|ide_opened_file|user-memory-input)>.*?(?:</\1>|$)", re.S
)
_COMMAND = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.S)


def clean_title(text: str | None) -> str | None:
    """One line fit to title a session: ``/cmd args`` for slash-command markup, context blocks
    and tags dropped, whitespace collapsed, cut to ``TITLE_WIDTH``; ``None`` if nothing is left.
    """
    if not text:
        return None
    head = text[: TITLE_WIDTH * 20]
    command = _COMMAND.search(head)
    if command:
        args = _COMMAND_ARGS.search(head)
        name = command.group(1)
        head = f"{name} {args.group(1)}" if args and args.group(1) else name
    head = strip_markup(_CONTEXT_BLOCK.sub(" ", head))
    if len(head) > TITLE_WIDTH:
        head = head[: TITLE_WIDTH - 1].rstrip() + "…"
    return head or None


def first_prompt(conn: Any, session_id: str) -> str | None:
    """The session's first real prompt as a title; a bare slash command only if nothing else.

    Main-thread prompts come first; a session known only from sub-agent files falls back to
    theirs.
    """
    command = image = None
    for text, display in conn.execute(_PROMPTS, (session_id,)):
        if display and display.startswith("/"):
            command = command or clean_title(display)
            continue
        cleaned = clean_title(text)
        if cleaned == IMAGE_MARKER:
            image = image or cleaned
        elif cleaned:
            return cleaned
    return command or image


def refresh_session(conn: Any, session_id: str) -> None:
    conn.execute(_REFRESH, {"session": session_id})
    row = conn.execute(
        "SELECT custom_title, source_title, summary_title FROM sessions WHERE id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return
    title = next((cleaned for cleaned in map(clean_title, row) if cleaned), None)
    prompt = first_prompt(conn, session_id)
    if title is None and prompt is None:
        # No prompt at all (a warm-up agent's lone reply, a file of notices): its first words.
        first = conn.execute(_ANY_TEXT, (session_id,)).fetchone()
        title = clean_title(first[0]) if first else None
    conn.execute(
        "UPDATE sessions SET title = ?, first_prompt = ? WHERE id = ?",
        (title, prompt, session_id),
    )


# The session holding a leaf uuid. Message uuids are indexed per file (``entries_file_uuid``),
# so the lookup walks the Claude Code files (CROSS JOIN keeps them outside) and probes each.
_LEAF_SESSION = """
SELECT e.session_id FROM files f CROSS JOIN entries e
WHERE f.source = 'claude-code' {only} AND e.file_id = f.id AND e.uuid = ?
  AND e.session_id IS NOT NULL AND e.kind != 'summary' LIMIT 1
"""
_IN_FILES = "AND f.id IN (SELECT value FROM json_each(?))"


def resolve_leaf_titles(conn: Any) -> set[str]:
    """Match waiting summaries to the sessions holding their leaf uuid; returns those retitled.

    The summary's own entry moves to the session it describes, so a search hit on it shows
    the right session. Of several summaries of one session, the one ending latest wins (of
    those, the one in the file whose key sorts last: never the order files were read in).
    A summary read before has been looked for everywhere already, so it is looked for only
    in the files that took entries since (``files.new_entries``); a new one, everywhere.
    """
    changed = {row[0] for row in conn.execute("SELECT id FROM files WHERE new_entries = 1")}
    if not changed:
        return set()
    conn.execute("UPDATE files SET new_entries = 0 WHERE new_entries = 1")
    waiting = conn.execute(
        "SELECT leaf_uuid, file_id, line FROM leaf_titles WHERE session_id IS NULL"
    ).fetchall()
    every = _LEAF_SESSION.format(only="")
    among = _LEAF_SESSION.format(only=_IN_FILES)
    files = json.dumps(sorted(changed))
    found = []
    for leaf, file_id, line in waiting:
        query, args = (every, (leaf,)) if file_id in changed else (among, (files, leaf))
        row = conn.execute(query, args).fetchone()
        found.append((leaf, file_id, line, row[0] if row else None))
    touched: set[str] = set()
    for leaf, file_id, line, session_id in found:
        if session_id is None:
            continue
        conn.execute(
            "UPDATE leaf_titles SET session_id = ? WHERE leaf_uuid = ?", (session_id, leaf)
        )
        conn.execute(
            "UPDATE entries SET session_id = ? WHERE file_id = ? AND line = ? AND kind = 'summary'",
            (session_id, file_id, line),
        )
        touched.add(session_id)
    for session_id in touched:
        best = conn.execute(
            # Ties (one leaf summarised in several files, a leaf copied into several) go by
            # where the summary is, never by which file happened to be read first.
            """SELECT lt.title FROM leaf_titles lt
               JOIN entries e ON e.uuid = lt.leaf_uuid AND e.session_id = lt.session_id
               JOIN files f ON f.id = lt.file_id
               WHERE lt.session_id = ?
               ORDER BY coalesce(e.ts, '') DESC, f.file_key DESC, lt.line DESC LIMIT 1""",
            (session_id,),
        ).fetchone()
        if best:
            conn.execute(
                "UPDATE sessions SET summary_title = ? WHERE id = ?", (best[0], session_id)
            )
            refresh_session(conn, session_id)
    return touched
