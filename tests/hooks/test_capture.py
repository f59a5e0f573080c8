"""``stop`` / ``session-end`` index the session; ``pre-compact`` flushes notes apart, once per
compaction cycle, one at a time per session, saying which session they came from."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from clawback.core.hooks.jobs import flush_session
from clawback.core.hooks.locks import flush_lock
from clawback.core.hooks.log import read_runs
from clawback.core.locking import held
from clawback.core.paths import Paths

from ..cli_runner import run_cli
from ..fake_claude.fixtures import FAKE_CLAUDE
from ..helpers import cc_user, wait_until
from .conftest import CURRENT, CWD, PROJECT_DIR, event, in_project

NOTE = "- The nightly export moved to 02:00 (decided in the demo-project session)."


def transcript(projects: Path) -> Path:
    return projects / PROJECT_DIR / f"{CURRENT}.jsonl"


def with_transcript(name: str, projects: Path, **changes: Any) -> dict[str, Any]:
    return event(name, transcript_path=str(transcript(projects)), **changes)


def append(path: Path, line: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def search(home: Path, words: str) -> list[dict[str, Any]]:
    done = run_cli("search", words, "--json", "--mode", "keyword", home=home)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def runs(home: Path, name: str) -> list[Any]:
    return [run for run in read_runs(Paths.resolve(home).hooks) if run.event == name]


def test_stop_indexes_the_new_lines_apart_and_session_end_finds_nothing_new(
    hook_home: Path, projects: Path
) -> None:
    append(
        transcript(projects),
        in_project(
            cc_user(CURRENT, "c2", "remember the pelican protocol", ts="2026-11-25T09:05:00Z")
        ),
    )
    started = time.monotonic()
    done = run_cli(
        "hook", "stop", home=hook_home, input=json.dumps(with_transcript("Stop", projects))
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert time.monotonic() - started < 1.0  # the session never waits for the index
    assert runs(hook_home, "stop")[-1].outcome == "detached"
    wait_until(
        lambda: search(hook_home, "pelican"), "the job apart to index the new line", timeout=30
    )
    assert [hit["session_id"] for hit in search(hook_home, "pelican")] == [CURRENT]
    wait_until(
        lambda: runs(hook_home, "stop")[-1].detail == "1 entries indexed apart",
        "the job's log line",
    )
    ended = run_cli(
        "hook",
        "session-end",
        home=hook_home,
        input=json.dumps(with_transcript("SessionEnd", projects)),
    )
    assert (ended.returncode, ended.stdout) == (0, "")
    assert runs(hook_home, "session-end")[-1].detail == "nothing new"


def test_stop_without_a_transcript_does_nothing(hook_home: Path, tmp_path: Path) -> None:
    gone = event("Stop", transcript_path=str(tmp_path / "not-written.jsonl"))
    done = run_cli("hook", "stop", home=hook_home, input=json.dumps(gone))
    assert (done.returncode, done.stdout) == (0, "")
    assert runs(hook_home, "stop")[-1].detail == "no transcript to index"


def today_notes(home: Path) -> Path:
    return home / "workspace" / "memory" / f"{datetime.now().astimezone():%Y-%m-%d}.md"


def test_pre_compact_flushes_notes_apart_naming_the_session(
    hook_home: Path, projects: Path
) -> None:
    append(
        transcript(projects),
        in_project(
            cc_user(
                CURRENT, "c4", "we moved the nightly export to 02:00", ts="2026-11-25T09:07:00Z"
            )
        ),
    )
    env = {"CLAWBACK_CLAUDE": str(FAKE_CLAUDE), "FAKE_CLAUDE_REPLY": NOTE}
    started = time.monotonic()
    done = run_cli(
        "hook",
        "pre-compact",
        home=hook_home,
        input=json.dumps(with_transcript("PreCompact", projects)),
        env=env,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert time.monotonic() - started < 2.0  # compaction does not wait for the flush
    notes = today_notes(hook_home)
    wait_until(
        lambda: notes.is_file() and NOTE in notes.read_text(), "the flush's notes", timeout=60
    )
    text = notes.read_text()
    assert f"demo-project (Claude Code session {CURRENT[:8]})" in text
    assert f"`clawback show {CURRENT}`" in text
    wait_until(
        lambda: runs(hook_home, "pre-compact")[-1].detail.startswith("flush:"),
        "the flush's log line",
    )
    found = search(hook_home, "nightly export")
    assert CURRENT in {hit["session_id"] for hit in found}  # ingested before the flush
    assert "memory" in {hit["source"] for hit in found}  # the notes file, indexed at once
    assert runs(hook_home, "pre-compact")[-1].outcome == "ok"


def test_one_flush_per_compaction_cycle_and_one_at_a_time(
    hook_home: Path, projects: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("CLAWBACK_CLAUDE", str(FAKE_CLAUDE))
    monkeypatch.setenv("FAKE_CLAUDE_REPLY", NOTE)
    paths = Paths.resolve(hook_home)
    path = transcript(projects)
    first = flush_session(paths, CURRENT, path, CWD)
    assert first.outcome == "ok" and "notes appended" in first.detail
    again = flush_session(paths, CURRENT, path, CWD)
    assert (again.outcome, again.detail) == ("skipped", "already flushed in this compaction cycle")
    append(path, {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                  "sessionId": CURRENT, "uuid": "b1", "timestamp": "2026-11-25T09:10:00Z", "cwd": CWD})  # fmt: skip
    after = flush_session(paths, CURRENT, path, CWD)  # a new cycle: flushed again
    assert after.outcome == "ok"
    assert today_notes(hook_home).read_text().count(f"session {CURRENT[:8]})") == 2
    with held(flush_lock(paths, CURRENT)):
        busy = flush_session(paths, CURRENT, path, CWD)
        assert (busy.outcome, busy.detail) == (
            "skipped",
            "a flush of this session is already running",
        )
        done = run_cli(
            "hook",
            "pre-compact",
            home=hook_home,
            input=json.dumps(with_transcript("PreCompact", projects)),
        )
        assert (done.returncode, done.stdout) == (0, "")
        assert (
            runs(hook_home, "pre-compact")[-1].detail
            == "a flush of this session is already running"
        )


def test_new_text_is_queued_for_the_embedder_when_the_person_embeds(
    hook_home: Path, projects: Path, monkeypatch: Any
) -> None:
    import clawback.core.hooks.jobs as jobs
    from clawback.core.hooks.jobs import ingest_job

    started: list[tuple[str, ...]] = []
    monkeypatch.setattr(jobs, "spawn", lambda paths, *args: started.append(args))
    paths = Paths.resolve(hook_home)
    path = transcript(projects)
    append(path, in_project(cc_user(CURRENT, "c5", "no vectors yet", ts="2026-11-25T09:08:00Z")))
    ingest_job(paths, path)
    assert started == []  # never embedded: nothing is sprung on anyone
    paths.vectors.write_bytes(b"")  # `clawback embed` has run once
    append(path, in_project(cc_user(CURRENT, "c6", "now with vectors", ts="2026-11-25T09:09:00Z")))
    ingest_job(paths, path)
    assert started == [("hook", "embed-new")]
    ingest_job(paths, path)  # nothing new: nothing to embed
    assert len(started) == 1


def test_the_brief_after_a_compaction_waits_for_the_flush_it_follows(
    hook_home: Path, projects: Path
) -> None:
    """Claude Code fires SessionStart (compact) right after PreCompact: the brief waits for the
    flush started apart (even before its process took the lock) and puts its notes first."""
    env = {"CLAWBACK_CLAUDE": str(FAKE_CLAUDE), "FAKE_CLAUDE_REPLY": NOTE}
    done = run_cli(
        "hook",
        "pre-compact",
        home=hook_home,
        input=json.dumps(with_transcript("PreCompact", projects)),
        env=env,
    )
    assert done.returncode == 0
    started = run_cli(
        "hook",
        "session-start",
        home=hook_home,
        input=json.dumps(event("SessionStart", "compact")),
        env=env,
    )
    brief = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    first = brief.split("## ")[1]
    assert first.startswith("Notes saved from this session") and NOTE in first
    wait_until(
        lambda: not (Paths.resolve(hook_home).hooks / "flush" / f"{CURRENT}.pending").exists(),
        "the job's end",
    )


def test_a_queued_embedding_that_fails_says_so_in_the_log(hook_home: Path, projects: Path) -> None:
    """Issue 31 item 17: the embedding a stop queues ran as a plain `clawback embed` whose
    failure (here, a model that cannot load) went nowhere; it is a job apart now, logged."""
    config = hook_home / "config.toml"
    config.write_text(config.read_text() + '[embeddings]\nmodel = "/nowhere/model.onnx"\n')
    Paths.resolve(hook_home).vectors.write_bytes(b"")  # `clawback embed` ran once
    path = transcript(projects)
    append(path, in_project(cc_user(CURRENT, "c7", "the zebra plan", ts="2026-11-25T09:09:00Z")))
    assert run_cli("hook", "ingest-transcript", str(path), home=hook_home).returncode == 0

    def failed() -> Any:
        return [r for r in runs(hook_home, "stop") if r.outcome == "error"]

    wait_until(failed, "the embedding job's failure in the log", timeout=60)
    assert "no such model file" in failed()[-1].detail
