"""Knowledge facts: short statements worth remembering, kept current by deterministic rules.

Facts come from the librarian (one extraction per conversation), from knowledge extraction after
a compaction, and from people (``clawback facts edit|supersede``). They feed the ``<knowledge>``
part of the recalled context through :func:`facts_for_recall`.

A new fact is compared with the existing ones by text similarity, here in the core and not by
the model, so the outcome is deterministic and testable. Each fact becomes a set of tokens:
lowercased words, trailing punctuation trimmed, English stopwords dropped, a plural ``s`` cut
(``uses`` = ``use``); negation words (``not``, ``never``, ``don't``...) are left out of the set
and recorded as a flag. Between an existing fact ``A`` and a new one ``B`` (same type):

* ``jaccard`` = |A ∩ B| / |A ∪ B|; ``old_cover`` = |A ∩ B| / |A|; ``new_cover`` = |A ∩ B| / |B|.
* **SUPERSEDE** when they contradict: (a) one is negated and the other not, with
  ``jaccard >= CONTRADICTION_OVERLAP`` (0.5); (b) a number changed (``A`` has a number ``B``
  lacks and ``B`` one ``A`` lacks) and the words around the numbers overlap with
  ``jaccard >= 0.5``; or (c) a value was swapped: both sides have 1 to ``SWAP_MAX`` (2) tokens
  the other lacks, with ``jaccard >= 0.5`` ("PostgreSQL" -> "MySQL"). The old fact gets
  ``superseded_by`` and stays listed with ``--all``; the new one is added.
* **UPDATE** when ``B`` is a more detailed version of ``A``: ``old_cover >= COVER`` (0.8),
  ``B`` has more tokens, and ``jaccard >= SIMILAR`` (0.4). ``A`` is replaced in place. A fact a
  person edited is never rewritten by a machine: the new one is added beside it instead.
* A person's edit also outlives re-extraction: a machine fact drawn from the very message an
  edited fact came from (same ``message_id``) that would UPDATE or SUPERSEDE it counts as
  **NONE** (the person already corrected what that message said). Reindexing re-opens every
  conversation, so without this the librarian's second pass would undo the correction.
* **NONE** when ``B`` is already known: ``new_cover >= COVER`` and ``jaccard >= SIMILAR``.
* **ADD** otherwise. A new fact is checked against the active facts of its type, most similar
  first; the first one any rule applies to decides. A fact with exactly the same tokens under
  another type counts as known too (the model does not always type a fact the same way).

This module must never delete a fact, never store text that has not been through
:func:`mask_secrets`, and never let ``facts_fts`` (an external-content FTS5 table) drift from
``facts``: every write removes the old row's tokens with FTS5's ``'delete'`` command before the
new ones go in.
"""

from __future__ import annotations

import builtins
import functools
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any

import sqlite_utils
from clawback.core.archive.masking import mask_secrets
from clawback.core.archive.query import build_match, score_from_rank
from clawback.core.archive.recall import Fact as RecallFact
from clawback.core.archive.recall import FactsProvider
from clawback.core.db import write_transaction
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.timeutil import now_ts

__all__ = [
    "CONTRADICTION_OVERLAP",
    "COVER",
    "FACT_TYPES",
    "SIMILAR",
    "SWAP_MAX",
    "Action",
    "Comparison",
    "Decision",
    "Fact",
    "FactChange",
    "FactStore",
    "NewFact",
    "compare",
    "facts_for_recall",
    "facts_provider",
    "tokenize",
]

FACT_TYPES = ("decision", "implementation", "config", "issue", "task_state", "architecture")

SIMILAR = 0.4  # least jaccard for UPDATE and NONE: the two facts are about the same thing
COVER = 0.8  # share of one fact's tokens found in the other
CONTRADICTION_OVERLAP = 0.5  # least jaccard for a negation flip, a changed number, a swapped value
SWAP_MAX = 2  # most tokens on each side of a swapped value

RECALL_LIMIT = 8
_RECALL_TERMS = 32  # most query words sent to FTS5 for recall

_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just let me more most my myself now of on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves us via per should
    shall may might must instead still already using use used uses
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_NEGATION_TEXT = (
    "not no never none nothing nobody neither nor cannot without dont doesnt didnt isnt arent "
    "wasnt werent wont cant couldnt shouldnt wouldnt hasnt havent hadnt"
)
_NEGATIONS = frozenset(_NEGATION_TEXT.split())
_TOKEN = re.compile(r"\w[\w'’.:/@#+-]*")
_TRIM = ".:/'’-+#@"
_QUERY_WORD = re.compile(r"\w+")


# --------------------------------------------------------------------------------- similarity


@dataclass(frozen=True)
class Tokens:
    """A fact's comparable form: content words, its numbers, and whether it is negated."""

    words: frozenset[str]
    numbers: frozenset[str]
    negated: bool

    @property
    def all(self) -> frozenset[str]:
        return self.words | self.numbers


def tokenize(text: str) -> Tokens:
    """The tokens the update rules compare (see the module docstring)."""
    words: set[str] = set()
    numbers: set[str] = set()
    negated = False
    for raw in _TOKEN.findall(text.lower()):
        word = raw.rstrip(_TRIM).replace("’", "'")
        if not word:
            continue
        bare = word.replace("'", "")
        if bare in _NEGATIONS or word.endswith("n't"):
            negated = True
            continue
        if bare in _STOPWORDS:
            continue
        if word[0].isdigit():
            numbers.add(word)
            continue
        if len(word) > 4 and word.isalpha() and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return Tokens(frozenset(words), frozenset(numbers), negated)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


class Action(StrEnum):
    ADD = "add"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    NONE = "none"


@dataclass(frozen=True)
class Comparison:
    """How a new fact relates to one existing fact; ``action`` is ADD when they are unrelated."""

    action: Action
    jaccard: float
    old_cover: float
    new_cover: float
    reason: str


def compare(old: str, new: str) -> Comparison:
    """Apply the update rules to one pair of fact texts (``old`` existing, ``new`` incoming)."""
    a, b = tokenize(old), tokenize(new)
    return _compare_tokens(a, b)


def _compare_tokens(a: Tokens, b: Tokens) -> Comparison:
    old_all, new_all = a.all, b.all
    shared = old_all & new_all
    jaccard = _jaccard(old_all, new_all)
    old_cover = len(shared) / len(old_all) if old_all else 1.0
    new_cover = len(shared) / len(new_all) if new_all else 1.0

    def result(action: Action, reason: str) -> Comparison:
        return Comparison(action, jaccard, old_cover, new_cover, reason)

    if a.negated != b.negated and jaccard >= CONTRADICTION_OVERLAP:
        return result(Action.SUPERSEDE, "negation differs")
    if (
        a.numbers - b.numbers
        and b.numbers - a.numbers
        and _jaccard(a.words, b.words) >= CONTRADICTION_OVERLAP
    ):
        return result(Action.SUPERSEDE, "a number changed")
    only_old, only_new = old_all - new_all, new_all - old_all
    if (
        0 < len(only_old) <= SWAP_MAX
        and 0 < len(only_new) <= SWAP_MAX
        and jaccard >= CONTRADICTION_OVERLAP
    ):
        return result(
            Action.SUPERSEDE, f"{', '.join(sorted(only_old))} -> {', '.join(sorted(only_new))}"
        )
    if jaccard >= SIMILAR and old_cover >= COVER and len(new_all) > len(old_all):
        return result(Action.UPDATE, "more detailed")
    if jaccard >= SIMILAR and new_cover >= COVER:
        return result(Action.NONE, "already known")
    return result(Action.ADD, "unrelated")


# ------------------------------------------------------------------------------------- records


@dataclass
class Fact:
    id: int
    type: str
    content: str
    context: str | None
    session_id: str | None
    message_id: str | None
    conversation_id: int | None
    created_at: str
    updated_at: str
    superseded_by: int | None
    edited: bool
    source_ts: str | None

    @property
    def active(self) -> bool:
        return self.superseded_by is None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_COLUMNS = (
    "id, type, content, context, session_id, message_id, conversation_id, created_at, "
    "updated_at, superseded_by, edited, source_ts"
)


def _fact(row: Sequence[Any]) -> Fact:
    fact = Fact(*row)
    fact.edited = bool(fact.edited)
    return fact


@dataclass(frozen=True)
class NewFact:
    """A fact to store; where it came from travels with it."""

    type: str
    content: str
    context: str = ""
    session_id: str | None = None
    message_id: str | None = None
    conversation_id: int | None = None
    source_ts: str | None = None


@dataclass(frozen=True)
class Decision:
    """What the update rules make of a new fact; ``match`` is the existing fact it concerns."""

    action: Action
    match: Fact | None = None
    comparison: Comparison | None = None

    @property
    def reason(self) -> str:
        return self.comparison.reason if self.comparison else "no similar fact"


@dataclass(frozen=True)
class FactChange:
    """One applied decision. ``fact_id`` is the fact now holding the knowledge (the new one
    for ADD and SUPERSEDE, the updated or already-known one for UPDATE and NONE);
    ``previous_id`` the superseded fact, for SUPERSEDE."""

    action: Action
    fact_id: int
    previous_id: int | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "fact_id": self.fact_id,
            "previous_id": self.previous_id,
            "reason": self.reason,
        }


def _clean(text: str | None) -> str:
    """Masked, on one line, trimmed: what gets stored and indexed."""
    return " ".join(mask_secrets(text or "").split())


def _same_source(fact: Fact, new: NewFact) -> bool:
    """Both were drawn from the same message (facts without a message never match)."""
    return fact.message_id is not None and fact.message_id == new.message_id


def _check_type(kind: str) -> str:
    if kind not in FACT_TYPES:
        raise UsageError(f"unknown fact type {kind!r} (use {', '.join(FACT_TYPES)})")
    return kind


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
        row = self.db.execute(f"SELECT {_COLUMNS} FROM facts WHERE id = ?", (fact_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no fact {fact_id} (see `clawback facts --all`)")
        return _fact(row)

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
            params.append(_check_type(type))
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
            f"SELECT {_COLUMNS} FROM facts {where} ORDER BY updated_at DESC, id DESC LIMIT ?",
            [*params, -1 if limit is None else limit],
        ).fetchall()
        return [_fact(row) for row in rows]

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
        ranked = self._ranked(match, limit=limit, type=type, include_superseded=include_superseded)
        return [fact for fact, _rank in ranked]

    def for_recall(
        self, query: str, limit: int = RECALL_LIMIT
    ) -> builtins.list[tuple[Fact, float]]:
        """Active facts sharing any meaningful word with ``query``, best first, with a 0..1 score.

        A chat message is prose, so its words are OR-ed (each quoted, so nothing in it is
        FTS5 syntax); bm25 ranks facts matching more and rarer words first.
        """
        words: list[str] = []
        for word in _QUERY_WORD.findall(query.lower()):
            if word not in _STOPWORDS and word not in words and (len(word) > 1 or word.isdigit()):
                words.append(word)
        if not words or limit <= 0:
            return []
        match = " OR ".join(f'"{w}"' for w in words[:_RECALL_TERMS])
        ranked = self._ranked(match, limit=limit, type=None, include_superseded=False)
        return [(fact, score_from_rank(rank)) for fact, rank in ranked]

    def _ranked(
        self, match: str, *, limit: int, type: str | None, include_superseded: bool
    ) -> builtins.list[tuple[Fact, float]]:
        clauses = ["facts_fts MATCH ?"]
        params: builtins.list[Any] = [match]
        if type:
            clauses.append("f.type = ?")
            params.append(_check_type(type))
        if not include_superseded:
            clauses.append("f.superseded_by IS NULL")
        columns = ", ".join(f"f.{c.strip()}" for c in _COLUMNS.split(","))
        try:
            rows = self.db.execute(
                f"""SELECT {columns}, bm25(facts_fts, 1.0, 0.4) AS rank
                    FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
                    WHERE {" AND ".join(clauses)}
                    ORDER BY rank, f.updated_at DESC LIMIT ?""",
                [*params, limit],
            ).fetchall()
        except sqlite3.OperationalError:
            return []  # an expression this table cannot run (a CJK column filter) finds nothing
        return [(_fact(row[:-1]), float(row[-1])) for row in rows]

    # -- the update rules -------------------------------------------------------------------

    def decide(self, new: NewFact) -> Decision:
        """Which rule applies to ``new`` (nothing is written)."""
        incoming = tokenize(_clean(new.content))
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE superseded_by IS NULL AND type = ?",
            (new.type,),
        ).fetchall()
        scored: list[tuple[float, int, Fact, Tokens]] = []
        for row in rows:
            fact = _fact(row)
            tokens = tokenize(fact.content)
            scored.append((_jaccard(tokens.all, incoming.all), fact.id, fact, tokens))
        scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
        for _score, _id, fact, tokens in scored:
            comparison = _compare_tokens(tokens, incoming)
            if comparison.action is Action.ADD:
                continue
            if fact.edited and _same_source(fact, new) and comparison.action is not Action.NONE:
                corrected = replace(comparison, action=Action.NONE, reason="corrected by hand")
                return Decision(Action.NONE, fact, corrected)
            if comparison.action is Action.UPDATE and fact.edited:
                # A person's wording is never rewritten by a machine: keep both.
                return Decision(Action.ADD, fact, comparison)
            return Decision(comparison.action, fact, comparison)
        if incoming.all:
            for row in self.db.execute(
                f"SELECT {_COLUMNS} FROM facts WHERE superseded_by IS NULL AND type != ?",
                (new.type,),
            ):
                fact = _fact(row)
                tokens = tokenize(fact.content)
                if tokens.all == incoming.all and tokens.negated == incoming.negated:
                    comparison = Comparison(Action.NONE, 1.0, 1.0, 1.0, "known under another type")
                    return Decision(Action.NONE, fact, comparison)
        return Decision(Action.ADD)

    def add(self, new: NewFact) -> FactChange:
        """Store ``new`` by the update rules: ADD, UPDATE, SUPERSEDE or NONE."""
        _check_type(new.type)
        if not _clean(new.content):
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
        if not _clean(content):
            raise UsageError("a fact needs some content")
        with self._writing() as conn:
            fact = self.get(fact_id)
            if fact.superseded_by is not None:
                raise UsageError(
                    f"fact {fact_id} is superseded by fact {fact.superseded_by}; "
                    "edit that one instead"
                )
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
        if not _clean(content):
            raise UsageError("a fact needs some content")
        with self._writing() as conn:
            old = self.get(fact_id)
            if old.superseded_by is not None:
                raise UsageError(
                    f"fact {fact_id} is already superseded by fact {old.superseded_by}; "
                    "supersede that one instead"
                )
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
        content, context = _clean(new.content), _clean(new.context) or None
        cursor = conn.execute(
            """INSERT INTO facts (type, content, context, session_id, message_id,
                   conversation_id, created_at, updated_at, edited, source_ts)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (_check_type(new.type), content, context, new.session_id, new.message_id,
             new.conversation_id, now, now, int(edited), new.source_ts),
        )  # fmt: skip
        fact_id = int(cursor.lastrowid or 0)
        conn.execute(
            "INSERT INTO facts_fts (rowid, content, context) VALUES (?, ?, ?)",
            (fact_id, content, context),
        )
        return fact_id

    def _rewrite(self, conn: sqlite3.Connection, old: Fact, new: NewFact, *, edited: bool) -> None:
        """Replace a fact's text in place (UPDATE rule or a hand edit); provenance follows it."""
        content = _clean(new.content)
        context = _clean(new.context) or old.context
        conn.execute(
            "INSERT INTO facts_fts (facts_fts, rowid, content, context) VALUES ('delete', ?, ?, ?)",
            (old.id, old.content, old.context),
        )
        conn.execute(
            """UPDATE facts SET content = ?, context = ?, session_id = ?, message_id = ?,
                   conversation_id = ?, source_ts = ?, updated_at = ?, edited = ?
               WHERE id = ?""",
            (content, context, new.session_id or old.session_id,
             new.message_id or old.message_id, new.conversation_id or old.conversation_id,
             new.source_ts or old.source_ts, now_ts(), int(edited or old.edited), old.id),
        )  # fmt: skip
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


# -------------------------------------------------------------------------------------- recall


def facts_for_recall(
    db: sqlite_utils.Database, query: str, limit: int = RECALL_LIMIT
) -> list[RecallFact]:
    """Active facts relevant to ``query``, best first, as recall's ``<knowledge>`` lines."""
    return [
        RecallFact(text=_recall_text(fact), score=score, kind=fact.type, id=fact.id)
        for fact, score in FactStore(db).for_recall(query, limit)
    ]


def facts_provider(db: sqlite_utils.Database) -> FactsProvider:
    """:func:`facts_for_recall` bound to ``db``: the ``facts_provider`` recall takes."""
    return functools.partial(facts_for_recall, db)


def _recall_text(fact: Fact) -> str:
    """``content (context; 2026-11-20)``: the date says how old the knowledge is."""
    extra = [part for part in (fact.context, (fact.source_ts or fact.created_at)[:10]) if part]
    return fact.content + (f" ({'; '.join(extra)})" if extra else "")
