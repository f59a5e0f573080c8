"""Derived per-session figures in the ``sessions`` table, recomputed from the entries.

Recomputing from the entries (rather than keeping running totals) keeps the numbers right after
a re-import, a crash recovery or a deleted source file, at the cost of one indexed query per
changed session.
"""

from __future__ import annotations

from typing import Any

_REFRESH = """
UPDATE sessions SET
    message_count = (
        SELECT count(*) FROM (
            SELECT DISTINCT file_id, line FROM entries
            WHERE session_id = :id AND conversational = 1 AND sidechain = 0
              AND role IN ('user', 'assistant'))),
    entry_count = (SELECT count(*) FROM entries WHERE session_id = :id),
    started_at = coalesce(
        (SELECT min(ts) FROM entries WHERE session_id = :id), started_at),
    updated_at = coalesce(
        (SELECT max(ts) FROM entries WHERE session_id = :id), updated_at),
    first_prompt = (
        SELECT substr(text, 1, 300) FROM entries
        WHERE session_id = :id AND role = 'user' AND kind = 'text' AND conversational = 1
          AND sidechain = 0 AND piece = 0
        ORDER BY ts, id LIMIT 1),
    source_missing = NOT EXISTS (
        SELECT 1 FROM files WHERE session_id = :id AND missing = 0)
WHERE id = :id
"""


def refresh_session(conn: Any, session_id: str) -> None:
    conn.execute(_REFRESH, {"id": session_id})
