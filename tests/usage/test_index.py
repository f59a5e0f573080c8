"""Usage in the index: each API response counted once, sub-agents in their session, the same
figures whatever order files arrive in, and kept right as files grow, change or go (item 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clawback.core.home import Home
from clawback.core.usage import load_prices, session_usage

from tests.helpers import cc_assistant, cc_user

SID = "5c0f5e4e-1111-4222-8333-444455556666"


def reply(
    uuid: str,
    message_id: str,
    output: int,
    *,
    request: str = "req_1",
    session: str = SID,
    sidechain: bool = False,
    cache_read: int = 0,
    ts: str = "2026-11-20T10:00:00.000Z",
) -> dict[str, Any]:
    line = cc_assistant(session, uuid, [{"type": "text", "text": f"reply {uuid}"}], ts)
    line["message"]["id"] = message_id
    line["message"]["usage"] = {
        "input_tokens": 10,
        "output_tokens": output,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": 100,
    }
    line["requestId"] = request
    line["isSidechain"] = sidechain
    return line


def write(path: Path, *lines: dict[str, Any], append: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")
    return path


def counted(home: Home) -> set[tuple[str, int]]:
    return {
        (key, line)
        for key, line in home.db.execute(
            "SELECT f.file_key, u.line FROM usage u JOIN files f ON f.id = u.file_id"
            " WHERE u.counted = 1"
        )
    }


def totals(home: Home, session: str = SID) -> tuple[int, int, int, int]:
    got = session_usage(home.db, load_prices(), [session])[session]
    return (got.input_tokens, got.output_tokens, got.cache_read_tokens, got.cache_write_tokens)


def test_a_response_written_as_several_lines_counts_once_with_its_complete_usage(
    home: Home, cc_root: Path
) -> None:
    """Claude Code writes a response's thinking, text and tool call as separate lines sharing
    the message and request ids; the earlier lines carry partial output counts."""
    write(
        cc_root / "-p" / f"{SID}.jsonl",
        cc_user(SID, "q1", "question"),
        reply("a1", "msg_A", 1),
        reply("a2", "msg_A", 1),
        reply("a3", "msg_A", 345),
        reply("b1", "msg_B", 20, request="req_2"),
    )
    home.ingest_all()
    assert counted(home) == {(f"-p/{SID}.jsonl", 4), (f"-p/{SID}.jsonl", 5)}
    assert totals(home) == (20, 365, 0, 200)
    # Lines read together keep a row per response: the rest can never count.
    assert home.db.execute("SELECT count(*) FROM usage").fetchone()[0] == 2


def test_sub_agent_files_count_toward_their_session(home: Home, cc_root: Path) -> None:
    write(cc_root / "-p" / f"{SID}.jsonl", cc_user(SID, "q1", "go"), reply("a1", "msg_A", 10))
    agent = reply("s1", "msg_S", 30, request="req_s", sidechain=True)
    write(cc_root / "-p" / SID / "subagents" / "agent-abc.jsonl", agent)
    # A legacy sub-agent file beside its session's, named by the session id it carries.
    legacy = reply("l1", "msg_L", 50, request="req_l", sidechain=True)
    write(cc_root / "-p" / "agent-0a1b2c3d.jsonl", legacy)
    home.ingest_all()
    assert totals(home) == (30, 90, 0, 300)
    assert {row[0] for row in home.db.execute("SELECT DISTINCT session_id FROM usage")} == {SID}


def test_a_sub_agent_replay_of_its_parents_message_never_counts(home: Home, cc_root: Path) -> None:
    """A side question's log replays the parent's messages with new request ids and the
    parent's cache reads; ccusage keeps the parent's line (its issue 913)."""
    write(cc_root / "-p" / f"{SID}.jsonl", reply("a1", "msg_P", 10, request="req_p", cache_read=20))
    replayed = reply("r1", "msg_P", 10, request="req_replay", sidechain=True, cache_read=50_000)
    own = reply("r2", "msg_own", 30, request="req_own", sidechain=True, cache_read=700)
    write(cc_root / "-p" / SID / "subagents" / "agent-btw.jsonl", replayed, own)
    home.ingest_all()
    assert totals(home) == (20, 40, 720, 200)


def test_the_same_lines_count_whichever_file_is_read_first(tmp_path: Path) -> None:
    """Copies of a session's lines in two files (a session kept under two project folders,
    a resumed session's file) count once, and the same ones in any order."""
    folder = tmp_path / "src"
    first = write(folder / "-a" / f"{SID}.jsonl", reply("a1", "msg_A", 1), reply("a2", "msg_B", 9))
    second = write(
        folder / "-b" / f"{SID}.jsonl",
        reply("a1", "msg_A", 7),
        reply("a2", "msg_B", 9),
        reply("a3", "msg_C", 5),
    )
    results: list[tuple[set[tuple[str, int]], tuple[int, int, int, int]]] = []
    for order in ((first, second), (second, first)):
        home = Home.open(tmp_path / f"home-{len(results)}")
        for path in order:
            home.ingest_paths([path.parent.parent])  # one root, so the keys are the same
            home.ingest_paths([path.parent.parent])
        results.append((counted(home), totals(home)))
        home.close()
    assert results[0] == results[1]
    assert results[0][1] == (30, 21, 0, 300)  # msg_A's complete line (7) once, msg_B once


def test_a_response_completed_by_a_later_append_counts_its_complete_line(
    home: Home, cc_root: Path
) -> None:
    path = write(cc_root / "-p" / f"{SID}.jsonl", reply("a1", "msg_A", 1))
    home.ingest_all()
    assert totals(home) == (10, 1, 0, 100)
    write(path, reply("a2", "msg_A", 250), append=True)
    home.ingest_all()
    assert counted(home) == {(f"-p/{SID}.jsonl", 2)}
    assert totals(home) == (10, 250, 0, 100)


def test_a_file_read_again_leaves_its_other_copy_counting(home: Home, cc_root: Path) -> None:
    """A file rewritten without a response's lines: the copy in another file counts again."""
    main = write(cc_root / "-a" / f"{SID}.jsonl", reply("a1", "msg_A", 9), reply("a2", "msg_B", 4))
    write(cc_root / "-b" / f"{SID}.jsonl", reply("a1", "msg_A", 9))
    home.ingest_all()
    assert totals(home) == (20, 13, 0, 200)
    assert (f"-a/{SID}.jsonl", 1) in counted(home)  # ties go to the first file by key
    write(main, reply("a2", "msg_B", 4))  # rewritten: msg_A is gone from it
    home.ingest_all()
    assert counted(home) == {(f"-a/{SID}.jsonl", 1), (f"-b/{SID}.jsonl", 1)}
    assert totals(home) == (20, 13, 0, 200)
    rows = home.db.execute("SELECT count(*) FROM usage").fetchone()[0]
    assert rows == 2  # the rewritten file's old lines are gone from the index


def test_usage_of_another_session_in_a_mixed_file_is_that_sessions(
    home: Home, cc_root: Path
) -> None:
    other = "9e9e9e9e-1111-4222-8333-444455556666"
    write(
        cc_root / "-p" / f"{SID}.jsonl",
        cc_user(SID, "q1", "hello"),
        reply("a1", "msg_A", 5),
        reply("o1", "msg_O", 8, request="req_o", session=other),
    )
    home.ingest_all()
    assert totals(home) == (10, 5, 0, 100)
    assert totals(home, other) == (10, 8, 0, 100)
