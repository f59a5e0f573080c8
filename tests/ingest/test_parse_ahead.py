"""The parse worker: files read in a second process give exactly the rows of one process.

A worker that is starting up or behind is never waited for, so on small test inputs the
writing process may read everything itself. ``PatientParseAhead`` waits for the worker's parts
of each file, so these tests check the rows that crossed the process boundary, and count them.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.core.ingest import parse_ahead
from clawback.core.ingest.file_reader import FileReader, Start
from clawback.core.ingest.parse_ahead import ParseAhead, ReadOptions, worth_it
from clawback.core.ingest.sources import SourceRoot, WorkItem
from clawback.core.records import Source
from clawback.core.text.masking import mask_secrets, seal

from tests.helpers import cc_assistant, cc_user, wait_until, write_lines

SECRET = "sk-ant-api03-" + "Q" * 40
TABLES = {
    "entries": "SELECT * FROM entries ORDER BY id",
    "sessions": "SELECT * FROM sessions ORDER BY id",
    "conversations": "SELECT * FROM conversations ORDER BY id",
    "files": """SELECT source, file_key, session_id, status, size, "offset", last_line,
                prefix_hash, skipped_lines, tail_bytes FROM files ORDER BY source, file_key""",
    "skipped_lines": "SELECT * FROM skipped_lines ORDER BY file_id, line",
    "leaf_titles": "SELECT * FROM leaf_titles ORDER BY leaf_uuid",
    "search": "SELECT rowid FROM entries_fts WHERE entries_fts MATCH 'alpha OR 秘密' ORDER BY rowid",
}


class PatientParseAhead(ParseAhead):
    """Waits for the worker's parts of each file, and counts the files it served."""

    served = 0

    def take(self, item: WorkItem, start: Start) -> Any:
        at = self._index[(item.source, item.key)]

        def arrived_or_dead() -> bool:
            return at in self._ready or self._worker is None or self._worker.poll() is not None

        wait_until(arrived_or_dead, f"the worker to read {item.path.name}", 30)
        parts = super().take(item, start)
        type(self).served += parts is not None
        return parts


def use_worker(monkeypatch: pytest.MonkeyPatch, kind: Any) -> None:
    """Every ingest of two files or more starts ``kind`` as its worker, whatever its size."""
    from clawback.core.ingest import plan

    monkeypatch.setattr(parse_ahead, "MIN_BYTES", 0)
    monkeypatch.setattr(parse_ahead, "MIN_FILE_BYTES", 0)
    monkeypatch.setattr(parse_ahead.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(plan, "ParseAhead", kind)


@pytest.fixture
def worker_always(monkeypatch: pytest.MonkeyPatch) -> type[PatientParseAhead]:
    use_worker(monkeypatch, PatientParseAhead)
    PatientParseAhead.served = 0
    return PatientParseAhead


def work_items(root: Path, mtime: float | None = None) -> list[WorkItem]:
    """Every transcript under ``root`` as the ingestor's scan would list it."""
    return [
        WorkItem(SourceRoot(Source.CLAUDE_CODE, root, "cc"), path, Source.CLAUDE_CODE,
                 str(path.relative_to(root)), path.stat().st_size,
                 path.stat().st_mtime if mtime is None else mtime)
        for path in sorted(root.rglob("*.jsonl"))
    ]  # fmt: skip


def dump(home: Home) -> dict[str, list[tuple[Any, ...]]]:
    return {name: home.db.execute(sql).fetchall() for name, sql in TABLES.items()}


def ingest(home: Path, roots: list[SourceRoot], *, worker: bool) -> dict[str, Any]:
    opened = Home.open(home)
    opened.config.archive.parse_worker = worker
    stats = opened.ingestor().ingest(roots)
    assert not stats.errors
    rows = dump(opened)
    opened.close()
    return rows


def varied_corpus(root: Path) -> int:
    """Files in the shapes that take every branch of reading; returns how many files."""
    sid = "11111111-2222-3333-4444-555555555555"
    other = "99999999-2222-3333-4444-555555555555"
    lines = []
    for n in range(30):
        ts = f"2026-11-{1 + n // 10:02d}T10:{n:02d}:00.000Z"  # gaps split conversations
        lines.append(cc_user(sid, f"u{n}", f"alpha question {n} key {SECRET}", ts))
        lines.append(
            cc_assistant(
                sid,
                f"a{n}",
                [
                    {"type": "thinking", "thinking": f"thinking {n}"},
                    {"type": "text", "text": f"answer {n} 秘密のメモ"},
                    {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}},
                ],
                ts,
            )
        )
    lines.append(cc_user(other, "x1", "a line of another session in the same file"))
    lines.append({"type": "summary", "summary": f"Titled {SECRET}", "leafUuid": "a29"})
    lines.append({"type": "custom-title", "customTitle": "My title", "sessionId": sid})
    write_lines(root / "-home-u-proj" / f"{sid}.jsonl", lines)
    with (root / "-home-u-proj" / f"{sid}.jsonl").open("a") as handle:
        handle.write("{not json\n")
        handle.write(json.dumps({"type": "weird-new-type", "sessionId": sid}) + "\n")
        handle.write('{"type": "user", "message": {"role": "user", "content": "torn')
    agent = root / "-home-u-proj" / sid / "subagents" / "agent-1.jsonl"
    write_lines(agent, [cc_user(sid, "s1", "sub-agent alpha work")])
    for n in range(5):
        session = f"{n:08d}-aaaa-bbbb-cccc-dddddddddddd"
        write_lines(
            root / "-home-u-other" / f"{session}.jsonl",
            [cc_user(session, f"p{n}", f"plain alpha {n}")],
        )
    return 7


def varied_and_alone(tmp_path: Path) -> tuple[list[SourceRoot], dict[str, Any]]:
    """The varied corpus's roots, and the rows an ingest in one process makes of it."""
    varied_corpus(tmp_path / "cc")
    roots = [SourceRoot(Source.CLAUDE_CODE, tmp_path / "cc", "cc")]
    return roots, ingest(tmp_path / "alone", roots, worker=False)


def test_worker_rows_are_the_rows_of_one_process(
    tmp_path: Path, worker_always: type[PatientParseAhead]
) -> None:
    files = varied_corpus(tmp_path / "cc")
    roots = [SourceRoot(Source.CLAUDE_CODE, tmp_path / "cc", "cc")]
    alone = ingest(tmp_path / "alone", roots, worker=False)
    assert worker_always.served == 0
    ahead = ingest(tmp_path / "ahead", roots, worker=True)
    assert worker_always.served == files
    assert alone == ahead
    assert alone["entries"] and alone["skipped_lines"] and alone["leaf_titles"]
    assert SECRET not in json.dumps(ahead, ensure_ascii=False, default=str)


def test_worker_rows_match_on_real_transcripts_and_peer_fixtures(
    shared_dir: Path, tmp_path: Path, worker_always: type[PatientParseAhead]
) -> None:
    roots = [
        SourceRoot(None, shared_dir / "real-transcripts", "real"),
        SourceRoot(None, shared_dir / "peer-fixtures", "peers"),
    ]
    alone = ingest(tmp_path / "alone", roots, worker=False)
    ahead = ingest(tmp_path / "ahead", roots, worker=True)
    assert worker_always.served > 100
    assert len(alone["entries"]) > 1000
    assert alone == ahead


def test_a_file_the_index_moved_on_since_the_plan_is_read_here(
    tmp_path: Path, worker_always: type[PatientParseAhead]
) -> None:
    root = tmp_path / "cc"
    varied_corpus(root)
    roots = [SourceRoot(Source.CLAUDE_CODE, root, "cc")]
    home = Home.open(tmp_path / "home")
    ingestor = home.ingestor()
    work = ingestor.scan(roots, stats=parse_ahead_stats())
    first = work[0]
    ingestor.ingest_file(first)  # the index moves on after the worker's plan was made
    plan = [(item, Start(0, 0, None)) for item in work]
    with PatientParseAhead(plan, options()) as ahead:
        state = ingestor._state(first)
        moved = Start(state.offset, state.last_line, state.session_id)
        assert ahead.take(first, moved) is None
        rest = [item for item in work if item is not first]
        assert all(ahead.take(item, Start(0, 0, None)) for item in rest)
    home.close()


def test_a_worker_that_dies_leaves_the_reading_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots, alone = varied_and_alone(tmp_path)

    class Killed(ParseAhead):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            assert self.pid is not None
            os.kill(self.pid, signal.SIGKILL)
            wait_until(lambda: not _running(self.pid or 0), "the worker to die")

    use_worker(monkeypatch, Killed)
    assert ingest(tmp_path / "ahead", roots, worker=True) == alone


def test_close_stops_the_worker(tmp_path: Path) -> None:
    root = tmp_path / "cc"
    varied_corpus(root)
    work = work_items(root)
    ahead = ParseAhead([(item, Start(0, 0, None)) for item in work], options())
    worker = ahead.pid
    assert worker is not None and _running(worker)
    started = time.monotonic()
    ahead.close()
    assert not _running(worker)
    assert time.monotonic() - started < 5
    assert ahead.take(work[0], Start(0, 0, None)) is None  # closed: read here


def test_chunks_split_a_file_as_one_read_does(tmp_path: Path) -> None:
    root = tmp_path / "cc"
    varied_corpus(root)
    item = max(work_items(root, mtime=0.0), key=lambda item: item.size)  # quiet: tail read
    one = list(FileReader(item, Start(0, 0, None), max_line=1 << 20, mask=None, seal=str).parts())
    many = list(
        FileReader(
            item, Start(0, 0, None), max_line=1 << 20, mask=None, seal=str, batch_lines=7
        ).parts()
    )
    assert len(one) == 1 and len(many) > 5
    assert [line for part in many for line in part.lines] == one[0].lines
    assert [s for part in many for s in part.skipped] == one[0].skipped
    assert many[-1].end_offset == one[0].end_offset and many[-1].torn == one[0].torn > 0
    assert many[-1].meta == one[0].meta and many[-1].final and not many[0].final
    # Reading on from where a part ended gives the rest.
    middle = many[2]
    rest = FileReader(
        item, Start(middle.end_offset, middle.end_line, middle.session_id),
        max_line=1 << 20, mask=None, seal=str,
    ).parts()  # fmt: skip
    assert [line for part in rest for line in part.lines] == [
        line for part in many[3:] for line in part.lines
    ]


def test_worth_it_needs_a_second_core_two_files_and_enough_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    big = parse_ahead.MIN_BYTES
    monkeypatch.setattr(parse_ahead.os, "cpu_count", lambda: 2)
    assert worth_it([big // 2, big // 2])
    assert not worth_it([big])  # one file: nothing to read ahead
    assert not worth_it([big // 4, big // 4])
    monkeypatch.setattr(parse_ahead.os, "cpu_count", lambda: 1)
    assert not worth_it([big, big])


def test_parse_worker_off_means_no_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> None:
        raise AssertionError("a worker was started with parse_worker = false")

    use_worker(monkeypatch, refuse)
    varied_corpus(tmp_path / "cc")
    rows = ingest(tmp_path / "home", [SourceRoot(Source.CLAUDE_CODE, tmp_path / "cc", "cc")],
                  worker=False)  # fmt: skip
    assert rows["entries"]


def options() -> ReadOptions:
    return ReadOptions(max_line=1 << 20, mask=mask_secrets, seal=seal)


def parse_ahead_stats() -> Any:
    from clawback.core.ingest.stats import IngestStats

    return IngestStats()


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for whoever adopts it to reap it)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_worker_whose_writer_is_killed_exits(tmp_path: Path) -> None:
    import subprocess
    import sys
    import textwrap

    varied_corpus(tmp_path / "cc")
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from clawback.core.text.masking import mask_secrets, seal
        from clawback.core.ingest.parse_ahead import ParseAhead, ReadOptions
        from clawback.core.ingest.file_reader import Start
        from clawback.core.ingest.sources import WorkItem
        from clawback.core.ingest.sources import SourceRoot
        from clawback.core.records import Source

        if __name__ == "__main__":
            root = Path({str(tmp_path / "cc")!r})
            paths = sorted(root.rglob("*.jsonl"))
            plan = [(WorkItem(SourceRoot(Source.CLAUDE_CODE, root, "cc"), p, Source.CLAUDE_CODE,
                              p.name, p.stat().st_size, 0.0), Start(0, 0, None)) for p in paths]
            ahead = ParseAhead(plan, ReadOptions(1 << 20, mask_secrets, seal))
            print(ahead.pid, flush=True)
            time.sleep(60)
        """
    )
    (tmp_path / "writer.py").write_text(script)
    writer = subprocess.Popen(
        [sys.executable, str(tmp_path / "writer.py")], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    worker = int(writer.stdout.readline())
    assert _running(worker)
    writer.kill()
    writer.wait()
    wait_until(lambda: not _running(worker), "the orphaned worker to exit", timeout=10)


def test_no_worker_to_be_had_means_reading_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots, alone = varied_and_alone(tmp_path)

    def no_process(*args: Any, **kwargs: Any) -> None:
        raise OSError(11, "Resource temporarily unavailable")

    use_worker(monkeypatch, ParseAhead)
    monkeypatch.setattr(parse_ahead.subprocess, "Popen", no_process)
    monkeypatch.setattr(parse_ahead.tempfile, "tempdir", str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    assert ingest(tmp_path / "ahead", roots, worker=True) == alone
    assert not list((tmp_path / "temp").iterdir())  # the plan, with every path, is gone


def test_a_file_rewritten_after_the_worker_read_it_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "cc"
    varied_corpus(root)
    victim = min(work_items(root), key=lambda item: item.size).path
    rewritten = [cc_user("77777777-2222-3333-4444-555555555555", "n1", "omega rewritten")]

    class RewrittenMeanwhile(PatientParseAhead):
        def take(self, item: WorkItem, start: Start) -> Any:
            if item.path == victim:  # the worker has read it: now it changes under us
                at = self._index[(item.source, item.key)]
                wait_until(lambda: at in self._ready, "the worker to read the victim")
                write_lines(victim, rewritten)
            return super().take(item, start)

    use_worker(monkeypatch, RewrittenMeanwhile)
    RewrittenMeanwhile.served = 0
    roots = [SourceRoot(Source.CLAUDE_CODE, root, "cc")]
    first = ingest(tmp_path / "ahead", roots, worker=True)
    assert RewrittenMeanwhile.served == len(work_items(root)) - 1
    assert any("omega rewritten" in str(row) for row in first["entries"])
    # The next scan finds the file's new size; the rows were right already.
    again = ingest(tmp_path / "ahead", roots, worker=False)
    assert again["entries"] == first["entries"]
    assert again == ingest(tmp_path / "alone", roots, worker=False)


def test_grown_and_reimported_files_read_ahead_as_in_one_process(
    tmp_path: Path, worker_always: type[PatientParseAhead]
) -> None:
    root = tmp_path / "cc"
    varied_corpus(root)
    roots = [SourceRoot(Source.CLAUDE_CODE, root, "cc")]
    homes = {"alone": tmp_path / "alone", "ahead": tmp_path / "ahead"}
    for name, home in homes.items():
        ingest(home, roots, worker=name == "ahead")
    for n, item in enumerate(work_items(root)):  # every file grows by a line
        with item.path.open("a") as handle:
            sid = f"{n:08d}-1111-2222-3333-444444444444"
            handle.write(json.dumps(cc_user(sid, f"g{n}", f"grown alpha {n}")) + "\n")
    for reimport in (False, True):
        rows = {}
        for name, home in homes.items():
            opened = Home.open(home)
            opened.config.archive.parse_worker = name == "ahead"
            assert not opened.ingestor().ingest(roots, reimport=reimport).errors
            rows[name] = dump(opened)
            opened.close()
        assert rows["ahead"] == rows["alone"]
    assert worker_always.served > 0


def test_a_file_gone_before_planning_is_reported_and_the_rest_ingested(
    tmp_path: Path, worker_always: type[PatientParseAhead], monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawback.core.ingest.ingestor import Ingestor

    root = tmp_path / "cc"
    varied_corpus(root)
    roots = [SourceRoot(Source.CLAUDE_CODE, root, "cc")]
    ingest(tmp_path / "home", roots, worker=True)
    items = work_items(root)
    for item in items:
        with item.path.open("a") as handle:
            handle.write(json.dumps(cc_user("x", "y", "grown")) + "\n")
    gone = items[0].path
    scan = Ingestor.scan

    def scan_then_delete(self: Ingestor, *args: Any, **kwargs: Any) -> Any:
        work = scan(self, *args, **kwargs)
        gone.unlink()  # between the scan and the plan, as a cleanup might
        return work

    monkeypatch.setattr(Ingestor, "scan", scan_then_delete)
    home = Home.open(tmp_path / "home")
    stats = home.ingestor().ingest(roots)
    home.close()
    assert [path for path, _ in stats.skipped_files] == [str(gone)]
    assert stats.files == len(items) - 1 and stats.entries >= len(items) - 2


def test_the_worker_never_imports_from_the_current_folder(
    tmp_path: Path, worker_always: type[PatientParseAhead], monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "untrusted"
    planted.mkdir()
    marker = tmp_path / "imported"
    (planted / "pickle.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(planted)
    roots, alone = varied_and_alone(tmp_path)
    assert ingest(tmp_path / "ahead", roots, worker=True) == alone
    assert worker_always.served > 0
    assert not marker.exists()


def test_the_writer_waits_for_a_file_the_worker_is_reading(tmp_path: Path) -> None:
    """Reading it here as well would do the same work twice on two busy cores."""
    sid = "0d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a"
    big = tmp_path / "cc" / "p" / f"{sid}.jsonl"
    write_lines(big, [cc_user(sid, f"u{i}", f"message {i} " * 40) for i in range(15_000)])
    write_lines(tmp_path / "cc" / "p" / "other.jsonl", [cc_user("other", "u1", "hi")])
    work = work_items(tmp_path / "cc")
    assert work[0].path == big
    with ParseAhead([(item, Start(0, 0, None)) for item in work], options()) as ahead:
        wait_until(lambda: ahead._reading == 0, "the worker to start on the big file")
        if 0 in ahead._ready:
            pytest.skip("the worker finished the big file before the writer asked")
        parts = ahead.take(work[0], Start(0, 0, None))
    assert parts is not None and parts[-1].end_line == 15_000
