"""The librarian and the extraction call, against the fake ``claude``.

Status transitions ready -> processing -> archived, skipped for short conversations, never twice,
a crash mid-way (a row left ``processing``, and a real ``clawback process`` killed with SIGKILL
while claude is slow), claude errors leaving the conversation ``ready``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clawback.core.claude.runner import ClaudeRunner, TurnResult
from clawback.core.home import Home
from clawback.core.memory.extraction import (
    EXTRACTION_SCHEMA,
    ExtractionMessage,
    extract,
    render_transcript,
)
from clawback.core.memory.facts import Action, FactStore
from clawback.core.memory.librarian import LibrarianBusy
from clawback.core.records import Source
from clawback.core.timeutil import format_ts

from tests.cli_runner import CLAWBACK, run_cli
from tests.fake_claude.fixtures import FAKE_CLAUDE, FakeClaude, fake_claude_fixture  # noqa: F401
from tests.helpers import cc_assistant, cc_user, until, wait_until, write_lines

KEY = "sk-ant-api03-" + "Qw7" * 12

PAYLOAD = {
    "summary": "Chose PostgreSQL 16 for the tangerine billing service.",
    "facts": [
        {
            "type": "decision",
            "content": "The tangerine billing service uses PostgreSQL 16",
            "context": "picked over MySQL",
            "message_id": "m2",
        },
        {"type": "config", "content": "Billing listens on port 5432", "context": "",
         "message_id": "[M4]"},
        {"type": "gossip", "content": "The user likes tea", "context": "", "message_id": "m1"},
        {"type": "issue", "content": "   ", "context": "", "message_id": "m1"},
        {"type": "task_state", "content": "Migrations are still to do", "context": "",
         "message_id": "m999"},
    ],
}  # fmt: skip


def conversation(
    path: Path, session: str, turns: int, *, start: datetime | None = None, extra: Any = ()
) -> None:
    """A Claude Code file with ``turns`` user/assistant pairs, finished a day ago (ready)."""
    start = start or datetime.now(UTC) - timedelta(days=1)
    lines = []
    for i in range(turns):
        ts = format_ts(start + timedelta(minutes=i))
        lines.append(cc_user(session, f"{session}-u{i}", f"question {i} about billing", ts))
        reply = [{"type": "text", "text": f"answer {i}: PostgreSQL"}]
        lines.append(cc_assistant(session, f"{session}-a{i}", reply, ts))
    write_lines(path, [*lines, *extra])


def statuses(home: Home) -> dict[str | None, str]:
    rows = home.db.execute("SELECT session_id, status FROM conversations").fetchall()
    return dict(rows)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    return tmp_path / "src" / "proj"


def ingest(home: Home, *files: Path) -> None:
    home.ingest_paths(list(files), Source.CLAUDE_CODE)


# -- extraction ------------------------------------------------------------------------------


async def test_extraction_reads_structured_output(fake_claude: FakeClaude) -> None:
    fake_claude.structured(PAYLOAD)
    messages = [
        ExtractionMessage("user", "Which database for billing?", "2026-11-20T10:00:00.000Z",
                          "uuid-1", "s1"),
        ExtractionMessage("assistant", f"PostgreSQL 16. The key is {KEY}",
                          "2026-11-20T10:01:00.000Z", "uuid-2", "s1"),
        ExtractionMessage("user", "   ", None, "uuid-x", "s1"),  # empty: not labelled
        ExtractionMessage("user", "And the port?", "2026-11-20T10:02:00.000Z", "uuid-3", "s1"),
        ExtractionMessage("assistant", "5432", "2026-11-20T10:03:00.000Z", "uuid-4", "s1"),
    ]  # fmt: skip
    extraction = await extract(fake_claude.runner(), messages, conversation_id=7, session_id="s1")
    assert extraction.summary == PAYLOAD["summary"]
    assert extraction.dropped == 2  # an unknown type and an empty fact
    decision, config, task = extraction.facts
    assert (decision.type, decision.message_id, decision.source_ts) == (
        "decision", "uuid-2", "2026-11-20T10:01:00.000Z")  # fmt: skip
    assert decision.context == "picked over MySQL" and decision.conversation_id == 7
    assert config.message_id == "uuid-4"  # "[M4]" is read as m4
    assert task.message_id is None and task.session_id == "s1"  # an unknown label
    call = fake_claude.last_call()
    argv = call["argv"]
    assert json.loads(argv[argv.index("--json-schema") + 1]) == EXTRACTION_SCHEMA
    assert "greetings" in argv[argv.index("--system-prompt") + 1]
    assert (
        KEY not in call["stdin"] and "[m2] 2026-11-20 10:01 Assistant: PostgreSQL" in call["stdin"]
    )


async def test_extraction_with_the_fakes_default_answer(fake_claude: FakeClaude) -> None:
    """Without a scripted payload the fake builds one from the schema: still parsed."""
    extraction = await extract(fake_claude.runner(), [ExtractionMessage("user", "hello there")])
    assert extraction.summary.startswith("ECHO: ")
    assert [f.type for f in extraction.facts] == ["decision"]


async def test_nothing_to_read_costs_no_call(fake_claude: FakeClaude) -> None:
    extraction = await extract(fake_claude.runner(), [ExtractionMessage("user", "  \n ")])
    assert (extraction.summary, extraction.facts) == ("", [])
    assert fake_claude.calls() == []


def test_long_transcripts_are_cut_in_the_middle() -> None:
    messages = [ExtractionMessage("user", f"message {i} " + "x" * 90) for i in range(100)]
    text, labels = render_transcript(messages, max_chars=2_000)
    assert len(text) < 2_400 and len(labels) == 100
    assert text.startswith("[m1] User: message 0 ") and "[m100] User: message 99 " in text
    assert "messages omitted" in text and "[m50]" not in text
    long = render_transcript([ExtractionMessage("user", "a" * 500 + "b" * 500)],
                             max_message_chars=300)[0]  # fmt: skip
    assert "characters cut" in long and long.endswith("b" * 100)


# -- the librarian -----------------------------------------------------------------------------


class Watching(ClaudeRunner):
    """The fake runner, checking from another connection that the row is committed
    ``processing`` while claude runs."""

    def __init__(self, fake: FakeClaude, database: Path) -> None:
        super().__init__(str(fake.path), timeout=10, kill_grace=1, cwd=fake.cwd)
        self.database = database
        self.seen: list[str] = []

    async def run(self, prompt: str, **kwargs: Any) -> TurnResult:
        with sqlite3.connect(self.database) as other:
            self.seen += [row[0] for row in other.execute("SELECT status FROM conversations")]
        return await super().run(prompt, **kwargs)


async def test_ready_processing_archived(home: Home, src: Path, fake_claude: FakeClaude) -> None:
    tool_use = cc_assistant("long", "long-t", [{"type": "tool_use", "id": "t1", "name": "Bash",
                            "input": {"command": "cat .env"}}])  # fmt: skip
    tool_result = cc_user("long", "long-r", [{"type": "tool_result", "tool_use_id": "t1",
                          "content": "RAW FILE CONTENT"}])  # fmt: skip
    day_ago = datetime.now(UTC) - timedelta(days=1)
    stamp = format_ts(day_ago + timedelta(minutes=30))
    tool_use["timestamp"] = tool_result["timestamp"] = stamp
    conversation(src / "long.jsonl", "long", 3, extra=[tool_use, tool_result])
    conversation(src / "short.jsonl", "short", 2)  # 4 messages < 5
    ingest(home, src / "long.jsonl", src / "short.jsonl")
    assert set(statuses(home).values()) == {"ready"}

    fake_claude.structured(PAYLOAD)
    runner = Watching(fake_claude, home.paths.database)
    report = await home.librarian(runner).process()

    assert statuses(home) == {"long": "archived", "short": "skipped"}
    assert "processing" in runner.seen  # committed before the call
    assert len(fake_claude.calls()) == 1  # the short one cost nothing
    assert report.to_json()["archived"] == 1 and report.to_json()["skipped"] == 1
    (archived,) = [c for c in report.conversations if c.status == "archived"]
    assert archived.counts() == {"add": 3, "update": 0, "supersede": 0, "none": 0}
    assert archived.dropped_facts == 2
    summary, processed_at = home.db.execute(
        "SELECT summary, processed_at FROM conversations WHERE session_id = 'long'"
    ).fetchone()
    assert summary == PAYLOAD["summary"] and processed_at

    prompt = fake_claude.last_call()["stdin"]
    assert "(tool call) Bash: cat .env" in prompt and "RAW FILE CONTENT" not in prompt
    assert "[m1] " in prompt and " User: question 0 about billing" in prompt

    facts = {f.type: f for f in FactStore(home.db).list()}
    decision = facts["decision"]
    assert decision.session_id == "long" and decision.message_id == "long-a0"
    assert decision.conversation_id is not None and decision.source_ts is not None


async def test_never_twice_and_new_lines_form_a_new_conversation(
    home: Home, src: Path, fake_claude: FakeClaude
) -> None:
    file = src / "s.jsonl"
    conversation(file, "s", 3, start=datetime.now(UTC) - timedelta(days=2))
    ingest(home, file)
    fake_claude.structured(PAYLOAD)
    await home.librarian().process()  # the configured claude ($CLAWBACK_CLAUDE: the fake)
    assert len(fake_claude.calls()) == 1
    again = await home.librarian().process()
    assert again.conversations == [] and len(fake_claude.calls()) == 1

    # the same session goes on a day later: a new conversation, processed on its own
    with file.open("a") as handle:
        later = datetime.now(UTC) - timedelta(days=1)
        for i in range(3):
            ts = format_ts(later + timedelta(minutes=i))
            handle.write(json.dumps(cc_user("s", f"late-u{i}", "more on billing", ts)) + "\n")
            reply = [{"type": "text", "text": "ok"}]
            handle.write(json.dumps(cc_assistant("s", f"late-a{i}", reply, ts)) + "\n")
    ingest(home, file)
    rows = home.db.execute("SELECT status FROM conversations ORDER BY id").fetchall()
    assert [r[0] for r in rows] == ["archived", "ready"]
    report = await home.librarian().process()
    assert [c.status for c in report.conversations] == ["archived"]
    assert len(fake_claude.calls()) == 2
    assert "late" not in fake_claude.calls()[0]["stdin"]
    assert "more on billing" in fake_claude.calls()[1]["stdin"]
    assert "question 0" not in fake_claude.calls()[1]["stdin"]
    # the same facts again are already known
    assert report.conversations[0].counts()["none"] == 3


async def test_limit_caps_claude_calls(home: Home, src: Path, fake_claude: FakeClaude) -> None:
    for name in ("a", "b", "c"):
        conversation(src / f"{name}.jsonl", name, 3)
    conversation(src / "tiny.jsonl", "tiny", 1)
    ingest(home, *(src / f"{n}.jsonl" for n in ("a", "b", "c", "tiny")))
    fake_claude.structured({"summary": "s", "facts": []})
    report = await home.librarian().process(limit=2)
    assert len(fake_claude.calls()) == 2
    assert sorted(statuses(home).values()) == ["archived", "archived", "ready", "skipped"]
    assert report.count("skipped") == 1


async def test_a_crash_left_processing_is_recovered(
    home: Home, src: Path, fake_claude: FakeClaude
) -> None:
    conversation(src / "s.jsonl", "s", 3)
    ingest(home, src / "s.jsonl")
    home.db.execute("UPDATE conversations SET status = 'processing'")  # a run died here
    fake_claude.structured(PAYLOAD)
    report = await home.librarian().process()
    assert report.recovered == 1
    assert statuses(home) == {"s": "archived"}
    assert len(FactStore(home.db).list()) == 3


async def test_claude_errors_leave_the_conversation_ready(
    home: Home, src: Path, fake_claude: FakeClaude
) -> None:
    conversation(src / "a.jsonl", "a", 3, start=datetime.now(UTC) - timedelta(days=2))
    conversation(src / "b.jsonl", "b", 3)
    ingest(home, src / "a.jsonl", src / "b.jsonl")

    fake_claude.mode("crash")  # one bad call: reported, and the run goes on
    report = await home.librarian().process()
    assert [c.status for c in report.conversations] == ["failed", "failed"]
    assert "crashed on purpose" in (report.conversations[0].error or "")
    assert report.stopped is None and statuses(home) == {"a": "ready", "b": "ready"}

    fake_claude.mode("err429")  # the account is rate-limited: the rest would fail too
    report = await home.librarian().process()
    assert len(report.conversations) == 1 and "429" in (report.stopped or "")
    assert statuses(home) == {"a": "ready", "b": "ready"}

    fake_claude.mode("badjson")
    report = await home.librarian().process(limit=1)
    assert report.failed == 1 and statuses(home) == {"a": "ready", "b": "ready"}
    assert FactStore(home.db).count(include_superseded=True) == 0

    fake_claude.mode("success").structured(PAYLOAD)
    report = await home.librarian().process()
    assert statuses(home) == {"a": "archived", "b": "archived"}


async def test_cancelling_returns_the_conversation_to_ready(
    home: Home, src: Path, fake_claude: FakeClaude
) -> None:
    conversation(src / "s.jsonl", "s", 3)
    ingest(home, src / "s.jsonl")
    fake_claude.mode("slow").delay(30).set_env("FAKE_CLAUDE_RETRIES", "1")
    librarian = home.librarian(fake_claude.runner())
    task = asyncio.create_task(librarian.process())
    await until(fake_claude.calls, "claude to start")
    assert statuses(home) == {"s": "processing"}
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert statuses(home) == {"s": "ready"}


async def test_one_librarian_at_a_time(home: Home) -> None:
    first = home.librarian()
    with first.exclusive(), pytest.raises(LibrarianBusy, match="already running"):
        await home.librarian().process()
    assert (await home.librarian().process()).conversations == []


@pytest.mark.slow
def test_sigkill_mid_call_then_a_rerun_completes(src: Path, tmp_path: Path) -> None:
    """A real ``clawback process`` killed with SIGKILL while claude is slow."""
    home = tmp_path / "home"
    conversation(src / "s.jsonl", "s", 3)
    opened = Home.open(home)
    ingest(opened, src / "s.jsonl")
    opened.close()
    log = tmp_path / "calls.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("FAKE_CLAUDE_")},
        "CLAWBACK_HOME": str(home),
        "CLAWBACK_CLAUDE": str(FAKE_CLAUDE),
        "FAKE_CLAUDE_LOG": str(log),
    }
    slow = {
        **env,
        "FAKE_CLAUDE_MODE": "slow",
        "FAKE_CLAUDE_RETRIES": "1",
        "FAKE_CLAUDE_DELAY": "30",
    }

    def status() -> str:
        with sqlite3.connect(home / "clawback.db") as db:
            return str(db.execute("SELECT status FROM conversations").fetchone()[0])

    proc = subprocess.Popen([CLAWBACK, "process"], env=slow, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    orphans: list[int] = []
    try:
        wait_until(lambda: log.exists() and log.read_text().strip(), "claude to start", 20)
        assert status() == "processing"
        orphans = [json.loads(line)["pid"] for line in log.read_text().splitlines()]
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
        assert status() == "processing"  # as the crash left it

        # claude itself may outlive its parent; the rerun must not wait for it
        rerun = run_cli(
            "process", "--json", env={**env, "FAKE_CLAUDE_STRUCTURED": json.dumps(PAYLOAD)}
        )
        assert rerun.returncode == 0, rerun.stderr
        report = json.loads(rerun.stdout)
        assert (report["recovered"], report["archived"], report["failed"]) == (1, 1, 0)
        assert status() == "archived"
        with sqlite3.connect(home / "clawback.db") as db:
            assert db.execute("SELECT count(*) FROM facts").fetchone()[0] == 3
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in orphans:  # the slow fake claude we started, by its own pid
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_actions_are_strings() -> None:
    assert [a.value for a in Action] == ["add", "update", "supersede", "none"]
