"""The knowledge facts table: reading, adding, editing and superseding facts.

Facts come from the librarian (one extraction per conversation), from knowledge extraction after
a compaction, and from people (``clawback facts edit|supersede``). They feed the ``<knowledge>``
part of the recalled context through :mod:`.recall`. What a new fact does is decided by
:mod:`.decide` with the rules of :mod:`.rules` (``docs/facts.md``).

This module must never delete a fact, never store text that has not been through
:func:`.records.as_stored` (secrets masked), and never let ``facts_fts`` (an external-content
FTS5 table) drift from ``facts``: every write removes the old row's tokens with FTS5's
``'delete'`` command before the new ones go in.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from clawback.core.db import Queryable, write_transaction
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.memory.facts.decide import decide
from clawback.core.memory.facts.records import (
    COLUMNS,
    Decision,
    Fact,
    FactChange,
    NewFact,
    as_stored,
    check_type,
    fact_from_row,
)
from clawback.core.memory.facts.rules import Action
from clawback.core.search import build_match
from clawback.core.timeutil import now_ts

if TYPE_CHECKING:  # annotations only: recall in a Claude Code hook must not pay ~90 ms for it
    import sqlite_utils


# --------------------------------------------------------------------------------------- store


class FactStore:
    """Reads and writes ``facts`` and keeps ``facts_fts`` in step.

    Writes join the caller's transaction when one is open (the librarian stores a
    conversation's facts and marks it archived in one), else run in their own.
    """

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        conn = self.db.conn
        if conn.in_transaction:
            yield conn
            return
        with write_transaction(self.db) as opened:
            yield opened

    # -- reads ------------------------------------------------------------------------------

    def get(self, fact_id: int) -> Fact:
        row = self.db.execute(f"SELECT {COLUMNS} FROM facts WHERE id = ?", (fact_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no fact {fact_id} (see `clawback facts --all`)")
        return fact_from_row(row)

    def list(
        self,
        *,
        type: str | None = None,
        include_superseded: bool = False,
        session_id: str | None = None,
        conversation_id: int | None = None,
        limit: int | None = None,
    ) -> builtins.list[Fact]:
        """Facts newest first; superseded ones only with ``include_superseded``."""
        clauses: list[str] = []
        params: list[Any] = []
        if type:
            clauses.append("type = ?")
            params.append(check_type(type))
        if not include_superseded:
            clauses.append("superseded_by IS NULL")
        if session_id is not None:
            clauses.append("session_id = ?")
            params.append(session_id)
        if conversation_id is not None:
            clauses.append("conversation_id = ?")
            params.append(conversation_id)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM facts {where} ORDER BY updated_at DESC, id DESC LIMIT ?",
            [*params, -1 if limit is None else limit],
        ).fetchall()
        return [fact_from_row(row) for row in rows]

    def count(self, *, include_superseded: bool = False) -> int:
        where = "" if include_superseded else " WHERE superseded_by IS NULL"
        return int(self.db.execute(f"SELECT count(*) FROM facts{where}").fetchone()[0])

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        type: str | None = None,
        include_superseded: bool = False,
    ) -> builtins.list[Fact]:
        """Facts matching a query typed by a person (the archive search's syntax), best first."""
        match = build_match(query, cjk_column=None)
        if match is None:
            return []
        ranked = ranked_facts(
            self.db, match, limit=limit, type=type, include_superseded=include_superseded
        )
        return [fact for fact, _rank in ranked]

    # -- the update rules -------------------------------------------------------------------

    def decide(self, new: NewFact) -> Decision:
        """Which rule applies to ``new`` (nothing is written); see :mod:`.decide`."""
        return decide(self.db, new)

    def add(self, new: NewFact) -> FactChange:
        """Store ``new`` by the update rules: ADD, UPDATE, SUPERSEDE or NONE."""
        check_type(new.type)
        if not as_stored(new.content):
            raise UsageError("a fact needs some content")
        with self._writing() as conn:
            decision = self.decide(new)
            reason = decision.reason
            match = decision.match
            if decision.action is Action.NONE and match is not None:
                return FactChange(Action.NONE, match.id, None, reason)
            if decision.action is Action.UPDATE and match is not None:
                self._rewrite(conn, match, new, edited=False)
                return FactChange(Action.UPDATE, match.id, None, reason)
            if decision.action is Action.SUPERSEDE and match is not None:
                fact_id = self._insert(conn, new, edited=False)
                self._mark_superseded(conn, match.id, fact_id)
                return FactChange(Action.SUPERSEDE, fact_id, match.id, reason)
            return FactChange(Action.ADD, self._insert(conn, new, edited=False), None, reason)

    def apply(self, facts: Iterable[NewFact]) -> builtins.list[FactChange]:
        """:meth:`add` each fact in turn, in one transaction; later ones see earlier ones."""
        with self._writing():
            return [self.add(fact) for fact in facts]

    # -- by hand ----------------------------------------------------------------------------

    def edit(self, fact_id: int, content: str, *, context: str | None = None) -> Fact:
        """A person's correction, in place: ``edited`` is set and no rule second-guesses it.

        A superseded fact is history (what was true before): correcting it would change the
        record, not the knowledge, so it is refused; edit the fact that replaced it.
        """
        with self._writing() as conn:
            fact = self._replaceable(fact_id, content, "edit")
            replacement = NewFact(
                fact.type,
                content,
                (fact.context or "") if context is None else context,
                fact.session_id,
                fact.message_id,
                fact.conversation_id,
                fact.source_ts,
            )
            self._rewrite(conn, fact, replacement, edited=True)
        return self.get(fact_id)

    def _replaceable(self, fact_id: int, content: str, verb: str) -> Fact:
        """The fact ``content`` may replace: active, since a superseded fact is history (what was
        true before) and changing it would change the record, not the knowledge."""
        if not as_stored(content):
            raise UsageError("a fact needs some content")
        fact = self.get(fact_id)
        if fact.superseded_by is not None:
            raise UsageError(
                f"fact {fact_id} is already superseded by fact {fact.superseded_by}; "
                f"{verb} that one instead"
            )
        return fact

    def supersede(
        self,
        fact_id: int,
        content: str,
        *,
        context: str | None = None,
        edited: bool = True,
        session_id: str | None = None,
        message_id: str | None = None,
    ) -> Fact:
        """Replace an active fact with a new one; the old one stays, marked ``superseded_by``.

        Returns the new fact. By default it counts as written by a person (``edited``).
        """
        with self._writing() as conn:
            old = self._replaceable(fact_id, content, "supersede")
            new = NewFact(
                old.type,
                content,
                (old.context or "") if context is None else context,
                session_id if session_id is not None else old.session_id,
                message_id if message_id is not None else old.message_id,
                old.conversation_id,
                old.source_ts if session_id is None else None,
            )
            new_id = self._insert(conn, new, edited=edited)
            self._mark_superseded(conn, fact_id, new_id)
        return self.get(new_id)

    def rebuild_index(self) -> None:
        """Re-derive ``facts_fts`` from ``facts`` (a repair; writes keep it in step anyway)."""
        with self._writing() as conn:
            conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')")

    # -- rows and their index ---------------------------------------------------------------

    def _insert(self, conn: sqlite3.Connection, new: NewFact, *, edited: bool) -> int:
        now = now_ts()
        content, context = as_stored(new.content), as_stored(new.context) or None
        cursor = conn.execute(
            """INSERT INTO facts (type, content, context, session_id, message_id,
                   conversation_id, created_at, updated_at, edited, source_ts)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                check_type(new.type),
                content,
                context,
                new.session_id,
                new.message_id,
                new.conversation_id,
                now,
                now,
                int(edited),
                new.source_ts,
            ),
        )
        fact_id = int(cursor.lastrowid or 0)
        conn.execute(
            "INSERT INTO facts_fts (rowid, content, context) VALUES (?, ?, ?)",
            (fact_id, content, context),
        )
        return fact_id

    def _rewrite(self, conn: sqlite3.Connection, old: Fact, new: NewFact, *, edited: bool) -> None:
        """Replace a fact's text in place (UPDATE rule or a hand edit); provenance follows it."""
        content = as_stored(new.content)
        context = as_stored(new.context) or old.context
        conn.execute(
            "INSERT INTO facts_fts (facts_fts, rowid, content, context) VALUES ('delete', ?, ?, ?)",
            (old.id, old.content, old.context),
        )
        conn.execute(
            """UPDATE facts SET content = ?, context = ?, session_id = ?, message_id = ?,
                   conversation_id = ?, source_ts = ?, updated_at = ?, edited = ?
               WHERE id = ?""",
            (
                content,
                context,
                new.session_id or old.session_id,
                new.message_id or old.message_id,
                new.conversation_id or old.conversation_id,
                new.source_ts or old.source_ts,
                now_ts(),
                int(edited or old.edited),
                old.id,
            ),
        )
        conn.execute(
            "INSERT INTO facts_fts (rowid, content, context) VALUES (?, ?, ?)",
            (old.id, content, context),
        )

    @staticmethod
    def _mark_superseded(conn: sqlite3.Connection, old_id: int, new_id: int) -> None:
        # Only the pointer and the time change: the text (and so the index row) stays.
        conn.execute(
            "UPDATE facts SET superseded_by = ?, updated_at = ? WHERE id = ?",
            (new_id, now_ts(), old_id),
        )


def ranked_facts(
    db: Queryable, match: str, *, limit: int, type: str | None, include_superseded: bool
) -> list[tuple[Fact, float]]:
    """Facts matching the FTS5 expression ``match``, best first, with their bm25 rank.

    It only reads, so a plain read connection will do (recall inside a Claude Code hook).
    """
    clauses = ["facts_fts MATCH ?"]
    params: list[Any] = [match]
    if type:
        clauses.append("f.type = ?")
        params.append(check_type(type))
    if not include_superseded:
        clauses.append("f.superseded_by IS NULL")
    columns = ", ".join(f"f.{c.strip()}" for c in COLUMNS.split(","))
    try:
        rows = db.execute(
            f"""SELECT {columns}, bm25(facts_fts, 1.0, 0.4) AS rank
                FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
                WHERE {" AND ".join(clauses)}
                ORDER BY rank, f.updated_at DESC LIMIT ?""",
            [*params, limit],
        ).fetchall()
    except sqlite3.OperationalError:
        return []  # an expression this table cannot run (a CJK column filter) finds nothing
    return [(fact_from_row(row[:-1]), float(row[-1])) for row in rows]
