"""What ``memory_get`` returns for a ref: a whole message with its neighbours, a memory chunk with
its line numbers, a fact, or a session's outline.

Everything comes from the index (masked as it was ingested); nothing here opens a file, so a ref
can never reach outside the archive and the workspace. Neighbours come from the same file and the
same session only: an answer never mixes in another session's text.
"""

from __future__ import annotations

from typing import Any

from clawback.core.archive import SessionSummary, entry_ref, key_digest, resolve_session
from clawback.core.db import Queryable
from clawback.core.errors import ClawbackError
from clawback.core.mcp import answers
from clawback.core.mcp.refs import (
    EntryRef,
    FactRef,
    RefError,
    SessionRef,
    parse_ref,
    shortened,
)
from clawback.core.records import Source

OUTLINE_TURNS = 40
OUTLINE_TURN_CHARS = 160
FIRST_PROMPT_CHARS = 600
_NOT_FOUND = "Nothing in the index has the ref {ref!r}: use a ref from memory_search results."


class Reader:
    """Resolves refs through one open index."""

    def __init__(self, db: Queryable) -> None:
        self.db = db

    def session_id(self, text: str) -> str:
        """The id of the session ``text`` names (id, unique prefix or key)."""
        try:
            return resolve_session(self.db, text).id
        except ClawbackError:
            raise RefError(
                f"No session {text.strip()!r} in the index: pass a session_id from memory_search."
            ) from None

    def get(self, text: str, *, context: int) -> dict[str, Any]:
        ref = parse_ref(text)
        if isinstance(ref, FactRef):
            return self._fact(ref)
        if isinstance(ref, SessionRef):
            return self._outline(ref)
        return self._entry(ref, context)

    # -- a message or a memory chunk ----------------------------------------------------------

    def _file(self, ref: EntryRef) -> tuple[int, str] | None:
        """``(file id, file key)`` of the file ``ref`` names, its key whole or shortened."""
        row = self.db.execute(
            "SELECT id, file_key FROM files WHERE source = ? AND file_key = ?",
            (ref.source, ref.file_key),
        ).fetchone()
        if row is not None or (short := shortened(ref.file_key)) is None:
            return (row[0], row[1]) if row else None
        head, digest = short
        for file_id, key in self.db.execute(
            "SELECT id, file_key FROM files WHERE source = ? AND substr(file_key, 1, ?) = ?",
            (ref.source, len(head), head),
        ):
            if key_digest(key) == digest:
                return file_id, key
        return None

    def _entry(self, ref: EntryRef, context: int) -> dict[str, Any]:
        found = self._file(ref)
        if found is not None:
            ref = EntryRef(ref.source, found[1], ref.line, ref.offset)
        target = self._message(found[0], ref.source, ref.file_key, ref.line) if found else None
        if found is None or target is None:
            raise RefError(_NOT_FOUND.format(ref=str(ref)))
        file_id = found[0]
        session_id = target.pop("_session")
        memory = ref.source == Source.MEMORY
        before = self._neighbour_lines(file_id, ref.line, session_id, context, memory, "<")
        after = self._neighbour_lines(file_id, ref.line, session_id, context, memory, ">")
        answer: dict[str, Any] = {
            "ref": str(EntryRef(ref.source, ref.file_key, ref.line)),
            "source": ref.source,
            "session_id": session_id,
        }
        if memory:
            answer["file"] = ref.file_key
        else:
            answer["session_title"] = self._title(session_id)
        text = target.pop("text")
        budget = answers.READ_BUDGET - answers.size(answer) - answers.size(target) - 400
        if ref.offset or len(text) > budget:
            end = ref.offset + max(1000, budget)
            target["text"] = text[ref.offset : end]
            target["part"] = {"from_char": ref.offset, "to_char": min(end, len(text)),
                              "of_chars": len(text)}  # fmt: skip
            if end < len(text):
                target["next_ref"] = str(ref.at(end))
            answer["messages"] = [target]
            answer["note"] = (
                "This message is longer than one answer: call memory_get with next_ref for the "
                "rest."
                if end < len(text)
                else "This is the end of the message."
            )
            return answer
        target["text"] = text
        neighbours = [
            message
            for line in [*before, *after]
            if (message := self._message(file_id, ref.source, ref.file_key, line)) is not None
        ]
        for message in neighbours:
            message.pop("_session")
        room = budget - len(text)
        each = room // len(neighbours) if neighbours else 0
        for message in neighbours:
            if len(message["text"]) > each:
                message["text"] = answers.head(message["text"], max(200, each))
                message["cut"] = True
        ordered = [m for m in neighbours if m["line"] < ref.line]
        ordered += [target] + [m for m in neighbours if m["line"] > ref.line]
        target["target"] = True
        answer["messages"] = ordered
        if any(m.get("cut") for m in neighbours):
            answer["note"] = (
                "Neighbours marked cut are shortened: memory_get(their ref) reads one whole."
            )
        return answer

    def _message(
        self, file_id: int, source: str, file_key: str, line: int
    ) -> dict[str, Any] | None:
        """All blocks of one line (pieces of long blocks joined), as one message."""
        rows = self.db.execute(
            """SELECT block, role, kind, ts, text, session_id, end_line, partial, sidechain
               FROM entries WHERE file_id = ? AND line = ? ORDER BY block, piece""",
            (file_id, line),
        ).fetchall()
        if not rows:
            return None
        blocks: dict[int, list[str]] = {}
        kinds: list[str] = []
        for block, _role, kind, _ts, text, *_rest in rows:
            blocks.setdefault(block, []).append(text)
            if kind not in kinds:
                kinds.append(kind)
        first = rows[0]
        message: dict[str, Any] = {
            "ref": entry_ref(source, file_key, line),
            "line": line,
            "role": first[1],
            "kind": kinds[0] if len(kinds) == 1 else "+".join(kinds),
            "timestamp": first[3],
        }
        text = "\n\n".join("".join(parts) for parts in blocks.values())
        if source == Source.MEMORY:
            end = first[6] or line
            message["end_line"] = end
            text = "\n".join(
                f"{number:>5}| {content}"
                for number, content in enumerate(text.rstrip("\n").split("\n"), start=line)
            )
        if first[7]:
            message["partial"] = True
        if first[8]:
            message["sidechain"] = True
        message["text"] = text
        message["_session"] = first[5]
        return message

    def _neighbour_lines(
        self, file_id: int, line: int, session_id: str | None, count: int, memory: bool, op: str
    ) -> list[int]:
        if count <= 0:
            return []
        clauses = ["file_id = ?", f"line {op} ?", "session_id IS ?"]
        if not memory:
            clauses.append("conversational = 1")
        order = "DESC" if op == "<" else "ASC"
        rows = self.db.execute(
            f"SELECT DISTINCT line FROM entries WHERE {' AND '.join(clauses)}"
            f" ORDER BY line {order} LIMIT ?",
            (file_id, line, session_id, count),
        ).fetchall()
        return sorted(row[0] for row in rows)

    def _title(self, session_id: str | None) -> str | None:
        if not session_id:
            return None
        row = self.db.execute(
            "SELECT coalesce(label, title, first_prompt) FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return answers.one_line(row[0]) if row else None

    # -- a fact ---------------------------------------------------------------------------------

    def _fact(self, ref: FactRef) -> dict[str, Any]:
        row = self.db.execute(
            """SELECT id, type, content, context, session_id, message_id, created_at, updated_at,
                      superseded_by, edited, source_ts FROM facts WHERE id = ?""",
            (ref.id,),
        ).fetchone()
        if row is None:
            raise RefError(_NOT_FOUND.format(ref=str(ref)))
        (_id, kind, content, context, session_id, message_id, created, updated, newer,
         edited, said) = row  # fmt: skip
        answer: dict[str, Any] = {
            "ref": str(ref),
            "source": "fact",
            "kind": kind,
            "content": content,
            "context": context,
            "session_id": session_id,
            "session_title": self._title(session_id),
            "said_at": said,
            "created_at": created,
            "updated_at": updated,
            "edited_by_hand": bool(edited),
        }
        if newer is not None:
            answer["superseded_by"] = str(FactRef(newer))
        if message_id:
            found = self.db.execute(
                # uuids are indexed per file (entries_file_uuid): probe file by file
                """SELECT f.source, f.file_key, e.line FROM files f CROSS JOIN entries e
                   WHERE e.file_id = f.id AND e.uuid = ? LIMIT 1""",
                (message_id,),
            ).fetchone()
            if found:
                answer["message_ref"] = entry_ref(*found)
        return answer

    # -- a session's outline --------------------------------------------------------------------

    def _outline(self, ref: SessionRef) -> dict[str, Any]:
        session = resolve_session_or_none(self.db, ref.session)
        if session is None:
            raise RefError(
                f"{ref.session!r} is neither a ref nor a session in the index: use a ref or "
                "session_id from memory_search results."
            )
        first_prompt = self.db.execute(
            "SELECT first_prompt FROM sessions WHERE id = ?", (session.id,)
        ).fetchone()[0]
        rows = self.db.execute(
            """SELECT f.source, f.file_key, e.line, e.ts, group_concat(e.text, '')
               FROM (SELECT * FROM entries WHERE session_id = ? AND role = 'user' AND kind = 'text'
                     AND conversational = 1 AND sidechain = 0 ORDER BY piece) e
               JOIN files f ON f.id = e.file_id
               GROUP BY e.file_id, e.line ORDER BY coalesce(e.ts, ''), e.file_id, e.line
               LIMIT ?""",
            (session.id, OUTLINE_TURNS + 1),
        ).fetchall()
        turns = [
            {"ref": entry_ref(source, key, line), "timestamp": ts,
             "text": answers.one_line(text, OUTLINE_TURN_CHARS)}
            for source, key, line, ts, text in rows[:OUTLINE_TURNS]
        ]  # fmt: skip
        answer: dict[str, Any] = {
            "session_id": session.id,
            "session_title": answers.one_line(session.title),
            "source": session.source,
            "key": session.key,
            "project": session.cwd,
            "started_at": session.started_at,
            "updated_at": session.updated_at,
            "message_count": session.message_count,
            "first_prompt": answers.head(
                " ".join((first_prompt or "").split()), FIRST_PROMPT_CHARS
            ),
            "user_turns": turns,
        }
        if len(rows) > OUTLINE_TURNS:
            answer["note"] = f"Only the first {OUTLINE_TURNS} user turns are listed."
        return answer


def resolve_session_or_none(db: Queryable, text: str) -> SessionSummary | None:
    try:
        return resolve_session(db, text)
    except ClawbackError:
        return None
