"""The demo's chat session: the rows a real chat, compaction and extraction would have written.

The demo's native transcript (``data/native``) already holds a compaction line, because the
transcript is the source of truth. What lives only in the database is added here, derived from
that transcript or written with fixed text through the fact store's own API: the
``chat_sessions`` row that makes it a chat session, its compaction ledger row, and a few
knowledge facts (one superseded by a later one, one corrected by hand). So the compaction pane
has something real to show without ever running ``claude``, and two builds give the same rows.

This module must never call ``claude``, never change the transcript, and never add a second copy
of anything when the demo home is built again (it only re-points the session at its transcript).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clawback.core.chat.sessions import ChatSession
from clawback.core.chat.transcript import Transcript, TranscriptView
from clawback.core.db import write_transaction
from clawback.core.home import Home
from clawback.core.memory import FactStore, NewFact

SESSION_ID = "618966e0-d7ef-5856-afd2-a43fb7f0c984"
KEY = "local:demo"

# The transcript's messages, in order: a question, the flush design, a budget rule, agreement.
ASKED, FLUSH_DESIGN, BUDGET_ASKED, BUDGET_AGREED = range(4)


@dataclass(frozen=True)
class DemoFact:
    """A fact as extraction would have stored it, drawn from the message at ``source``."""

    type: str
    content: str
    source: int
    context: str = ""


FACTS = [
    DemoFact(
        "decision",
        "Flush memory when the prompt gets near the context window",
        FLUSH_DESIGN,
        "pre-compaction memory flush",
    ),
    DemoFact(
        "architecture",
        "Compaction summarizes older turns while the transcript keeps every word",
        FLUSH_DESIGN,
    ),
    DemoFact(
        "config",
        "The recalled block is capped at min(4000 tokens, 10% of the context window)",
        BUDGET_AGREED,
        "lowest-scored details are dropped first, then knowledge facts",
    ),
    DemoFact("task_state", "Open question: when clawback should flush memory", ASKED),
]
# The open question, answered two messages later: it stays, marked superseded by this.
ANSWERED = DemoFact(
    "task_state",
    "Settled: clawback flushes memory once per compaction cycle, before compacting",
    FLUSH_DESIGN,
)
# A person made the vague decision exact (``clawback facts edit``): it shows as edited.
CORRECTED = (
    "Flush memory when the prompt reaches the context window minus the 5,000-token reserve"
    " floor and the 4,000-token soft threshold"
)


def seed_chat_session(home: Home) -> None:
    """Register the demo transcript as a chat session with its ledger row and facts (once)."""
    path = home.paths.sessions / f"{SESSION_ID}.jsonl"
    view = Transcript(path).read()
    if view.compaction is None or len(view.messages) != 4:
        raise RuntimeError(f"{path}: not the demo chat transcript this module describes")
    with write_transaction(home.db) as conn:
        if conn.execute("SELECT 1 FROM chat_sessions WHERE id = ?", (SESSION_ID,)).fetchone():
            # A copied demo home: the row must point at this home's transcript, not the other's.
            conn.execute(
                "UPDATE chat_sessions SET transcript = ? WHERE id = ?", (str(path), SESSION_ID)
            )
            return
        _insert_session(home, view, path)
        _insert_ledger_row(home, view)
        _add_facts(home, view)


def _insert_session(home: Home, view: TranscriptView, path: Path) -> None:
    compaction = view.compaction
    assert compaction is not None and view.created is not None
    last = view.messages[-1]
    session = ChatSession(
        id=SESSION_ID,
        key=KEY,
        transcript=str(path),
        created_at=view.created,
        updated_at=last.timestamp or view.created,
        label=view.label,
        message_count=len(view.messages),
        compaction_count=1,
        input_tokens=2100,  # the last reply's usage, as the transcript records it
        output_tokens=90,
        total_tokens=compaction.tokens_after or 0,  # what a commit leaves (Compactor.commit)
        last_model=last.model,
    )
    values = session.to_json()
    home.db.execute(
        f"INSERT INTO chat_sessions ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
        list(values.values()),
    )


def _insert_ledger_row(home: Home, view: TranscriptView) -> None:
    """The row :meth:`Compactor.commit` writes beside the transcript's compaction line.

    Its time and first kept message are the line's, so the pane finds the messages it replaced.
    """
    compaction = view.compaction
    assert compaction is not None
    removed = [m.id for m in view.messages].index(compaction.first_kept_id or "")
    home.db.execute(
        """INSERT INTO compactions (session_id, created_at, tokens_before, tokens_after,
               messages_removed, first_kept_id, summary, model)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            SESSION_ID,
            compaction.timestamp,
            compaction.tokens_before,
            compaction.tokens_after,
            removed,
            compaction.first_kept_id,
            compaction.summary,
            view.messages[-1].model,
        ),
    )


def _add_facts(home: Home, view: TranscriptView) -> None:
    store = FactStore(home.db)

    def new(fact: DemoFact) -> NewFact:
        message = view.messages[fact.source]
        return NewFact(
            fact.type,
            fact.content,
            fact.context,
            SESSION_ID,
            message.id,
            source_ts=message.timestamp,
        )

    changes = store.apply([new(fact) for fact in FACTS])
    decision, *_others, question = (change.fact_id for change in changes)
    store.supersede(
        question,
        ANSWERED.content,
        edited=False,
        session_id=SESSION_ID,
        message_id=view.messages[ANSWERED.source].id,
    )
    store.edit(decision, CORRECTED)
