"""Builders for transcript lines in the real shapes, and waiting on conditions, used across tests."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawback.core.chat.engine import ChatEngine
    from clawback.core.chat.events import ChatEvent, TurnOutcome

TS = "2026-11-20T10:00:00.000Z"


def cc_user(session: str, uuid: str, content: Any, ts: str = TS) -> dict[str, Any]:
    """A Claude Code ``user`` line (content: a string or a list of blocks)."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/u/proj",
        "sessionId": session,
        "version": "2.1.328",
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uuid,
        "timestamp": ts,
    }


def cc_assistant(
    session: str, uuid: str, blocks: list[dict[str, Any]], ts: str = TS
) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/u/proj",
        "sessionId": session,
        "version": "2.1.328",
        "type": "assistant",
        "message": {
            "id": f"msg_{uuid}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": blocks,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
        "uuid": uuid,
        "timestamp": ts,
    }


def write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def entry_rows(home: Any) -> list[tuple[Any, ...]]:
    """Every indexed entry in a stable order, for comparing two ingests."""
    return home.db.execute(
        """SELECT f.file_key, e.line, e.block, e.piece, e.kind, e.text FROM entries e
           JOIN files f ON f.id = e.file_id ORDER BY f.file_key, e.line, e.block, e.piece"""
    ).fetchall()


def wait_until(condition: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    """Poll ``condition`` until it holds: tests wait on what they need, never on a fixed sleep."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up after {timeout:g} s waiting for {what}"
        time.sleep(0.01)


async def until(condition: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    """:func:`wait_until` for async tests: the event loop keeps running while we wait."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up after {timeout:g} s waiting for {what}"
        await asyncio.sleep(0.01)


def corrupt_pages(database: Path, first_page: int = 2) -> None:
    """Overwrite every page of an SQLite file from ``first_page`` on with garbage, as a torn
    disk would: the header (page 1) still opens, any read of the tables fails as malformed."""
    size = database.stat().st_size
    page = int.from_bytes(database.read_bytes()[16:18], "big") or 65536
    with database.open("r+b") as file:
        file.seek((first_page - 1) * page)
        file.write(bytes([0xDE, 0xAD, 0xBE, 0xEF]) * ((size - (first_page - 1) * page) // 4))


async def run_turn(
    engine: ChatEngine,
    text: str,
    *,
    key: str | None = None,
    session_id: str | None = None,
    model: str | None = None,
    new: bool = False,
    on_event: Callable[[ChatEvent], None] | None = None,
) -> TurnOutcome:
    """Run a chat turn to its end; ``on_event`` sees every event. Errors raise ClaudeError."""
    turn = engine.turn(text, key=key, session_id=session_id, model=model, new=new)
    async for event in turn:
        if on_event is not None:
            on_event(event)
    assert turn.outcome is not None
    return turn.outcome


def kill_at(proc: subprocess.Popen[Any], home: Path, entries: int, poll: float) -> bool:
    """SIGKILL the ingest ``proc`` once the index in ``home`` holds ``entries`` (checked every
    ``poll`` seconds, for at most a minute), then wait for it; whether it was killed (a run that
    finished first was not)."""
    deadline = time.monotonic() + 60
    killed = False
    while proc.poll() is None and time.monotonic() < deadline:
        if entries_so_far(home) >= entries:
            os.kill(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(poll)
    proc.wait(timeout=60)
    return killed


def entries_so_far(home: Path) -> int:
    """How many entries the index in ``home`` holds right now, read beside a running ingest (a
    kill test waits for a count before killing it); 0 while there is no readable index yet."""
    try:
        conn = sqlite3.connect(f"file:{home / 'clawback.db'}?mode=ro", uri=True, timeout=0.2)
        try:
            return int(conn.execute("SELECT count(*) FROM entries").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
