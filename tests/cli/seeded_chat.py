"""A home holding one indexed chat session, and what ``flush`` and ``compact`` may change in it."""

from __future__ import annotations

from pathlib import Path

from clawback.core.home import Home

from tests.memory.test_flush import seed


def seeded_chat(tmp_path: Path) -> tuple[Path, str]:
    """A home with one indexed chat session of 10 messages: (home, session id)."""
    home = tmp_path / "home"
    opened = Home.open(home)
    try:
        session = seed(opened.chat_engine(), 10)
        opened.ingest_changed({session.transcript_path})
    finally:
        opened.close()
    return home, session.id


def state(home: Path, session_id: str) -> tuple[bytes, tuple[object, ...], list[object]]:
    """The transcript bytes, the session row and the ledger, to compare before and after."""
    opened = Home.open(home)
    try:
        row = opened.db.execute(
            "SELECT * FROM chat_sessions WHERE id = ?", (session_id,)
        ).fetchone()
        ledger = opened.db.execute("SELECT * FROM compactions").fetchall()
        return (home / "sessions" / f"{session_id}.jsonl").read_bytes(), tuple(row), ledger
    finally:
        opened.close()


def session_row(home: Path, session_id: str) -> dict[str, object]:
    opened = Home.open(home)
    try:
        session = opened.chat_engine().store.require(session_id)
        return session.to_json()
    finally:
        opened.close()


def daily_files(home: Path) -> list[Path]:
    return sorted((home / "workspace" / "memory").glob("*.md"))
