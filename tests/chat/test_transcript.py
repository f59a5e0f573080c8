"""Native transcript appends: whole lines, private files, torn-line recovery, reading back."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from clawback.core.chat.transcript import Transcript
from clawback.core.formats.native import (
    compaction_event,
    label_event,
    message_event,
    session_header,
)
from clawback.core.home import Home

T0 = "2026-05-01T10:00:00.000Z"


def ts(minute: int) -> str:
    return f"2026-05-01T10:{minute:02d}:00.000Z"


def header(session_id: str = "s-1", parent: str | None = None) -> dict:
    return session_header(session_id, "local:alice", T0, parent=parent)


def msg(n: int, role: str = "user", text: str | None = None, **kw: Any) -> dict[str, Any]:
    return message_event(f"m{n}", role, text or f"message {n}", ts(n), **kw)


def test_create_writes_the_header_once_and_the_file_is_private(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    assert not t.exists()
    assert t.create(header()) is True
    assert t.create(header()) is False
    assert t.path.stat().st_mode & 0o777 == 0o600
    lines = t.path.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["format"] == "clawback"


def test_append_writes_whole_lines_and_reads_back(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    t.create(header())
    t.append([msg(1, text="line one\nline two")], sync=True)
    t.append([msg(2, "assistant", model="opus", partial=True)])
    raw = t.path.read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 3  # newlines in content are escaped
    view = t.read()
    assert view.session_id == "s-1" and not view.torn_tail and view.bad_lines == 0
    assert [m.id for m in view.messages] == ["m1", "m2"]
    assert view.messages[0].content == "line one\nline two"
    assert view.messages[1].partial and view.messages[1].model == "opus"


def test_a_looser_file_is_tightened_on_append(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(header()) + "\n")
    path.chmod(0o644)
    Transcript(path).append([msg(1)])
    assert path.stat().st_mode & 0o777 == 0o600


def test_torn_last_line_is_ignored_on_read_and_repaired_on_next_append(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    t.create(header())
    t.append([msg(1)])
    with t.path.open("ab") as handle:  # a crash half-way through writing the reply
        handle.write(b'{"type":"message","id":"m2","role":"assistant","content":"half a')
    view = t.read()
    assert view.torn_tail and [m.id for m in view.messages] == ["m1"]

    t.append([msg(3)])
    data = t.path.read_bytes()
    assert data.endswith(b"\n")
    for line in data.splitlines():
        json.loads(line)  # every line is whole again
    view = t.read()
    assert not view.torn_tail and [m.id for m in view.messages] == ["m1", "m3"]
    # The torn bytes are not thrown away: they are kept beside the transcript.
    assert b"half a" in t.torn_path.read_bytes()
    assert t.torn_path.stat().st_mode & 0o777 == 0o600


def test_a_torn_header_is_rewritten_by_create(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    t.path.write_bytes(b'{"type":"session","form')
    assert t.read().header is None
    assert t.create(header()) is True
    assert t.read().header == header()


def test_bad_lines_in_the_middle_are_skipped(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    t.create(header())
    with t.path.open("ab") as handle:
        handle.write(b"not json\n[1, 2]\n")
    t.append([msg(1)])
    view = t.read()
    assert view.bad_lines == 2 and [m.id for m in view.messages] == ["m1"]


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    t.create(header())
    big = "x" * 50_000

    def writer(n: int) -> None:
        for i in range(20):
            Transcript(t.path).append([msg(n * 100 + i, text=big)])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    view = t.read()
    assert view.bad_lines == 0 and len(view.messages) == 80


def test_live_messages_start_at_the_latest_compaction(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    t.create(header())
    t.append([msg(n, "user" if n % 2 else "assistant") for n in range(1, 7)])
    t.append([compaction_event("c1", ts(7), "summary one", "m5", 1000, 100)])
    t.append([msg(8), msg(9, "assistant")])
    view = t.read()
    assert view.compaction is not None and view.compaction.summary == "summary one"
    assert [m.id for m in view.live_messages] == ["m5", "m6", "m8", "m9"]
    assert len(view.messages) == 8  # compaction never removes anything

    t.append([compaction_event("c2", ts(10), "summary two", None, 900, 50), msg(11)])
    view = t.read()
    assert view.compaction is not None and view.compaction.summary == "summary two"
    assert [m.id for m in view.live_messages] == ["m11"]


def test_read_until_stops_at_a_point_in_time(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    t.create(header())
    t.append([msg(1), msg(2, "assistant"), msg(3), msg(4, "assistant")])
    assert [m.id for m in t.read(until=ts(2)).messages] == ["m1", "m2"]


def test_labels_last_one_wins_and_null_clears(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s-1.jsonl")
    t.create(session_header("s-1", "local:alice", T0, label="first"))
    assert t.read().label == "first"
    t.append([label_event("second", ts(1))])
    assert t.read().label == "second"
    t.append([label_event(None, ts(2))])
    assert t.read().label is None


def test_a_missing_file_reads_as_empty(tmp_path: Path) -> None:
    view = Transcript(tmp_path / "nope.jsonl").read()
    assert view.header is None and view.messages == [] and not view.torn_tail


def test_the_index_reads_a_repaired_transcript_whole(home: Home) -> None:
    from clawback.core.archive.sessions import session_messages

    t = Transcript(home.paths.sessions / "s-1.jsonl")
    t.create(header())
    t.append([msg(1, text="the pelican brief")])
    with t.path.open("ab") as handle:
        handle.write(b'{"type":"message","id":"m2","role":"assis')
    home.ingest_changed({t.path})  # the torn tail is left for later, not counted as bad
    assert [m.text for m in session_messages(home.db, "s-1")] == ["the pelican brief"]
    t.append([msg(3, "assistant", text="a heron instead")])
    home.ingest_changed({t.path})
    texts = [m.text for m in session_messages(home.db, "s-1")]
    assert texts == ["the pelican brief", "a heron instead"]
    skipped = home.db.execute("SELECT count(*) FROM skipped_lines").fetchone()[0]
    assert skipped == 0
