"""``clawback process``, end to end (in-process, see ``cli_runner``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.memory.test_librarian import PAYLOAD, conversation

from .test_memory import run


def test_process_json_and_exit_codes(tmp_path: Path) -> None:
    home = tmp_path / "h"
    src = tmp_path / "src" / "proj"
    conversation(src / "a.jsonl", "a", 3)
    conversation(src / "b.jsonl", "b", 3)
    conversation(src / "tiny.jsonl", "tiny", 1)
    ingested = run("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home)
    assert ingested.returncode == 0, ingested.stderr

    failed = run("process", "--json", home=home, env={"FAKE_CLAUDE_MODE": "err401"})
    assert failed.returncode == 1
    report = json.loads(failed.stdout)
    assert report["failed"] == 1 and "401" in report["stopped"]
    assert report["skipped"] == 1  # the short one never needs claude

    payload = json.dumps(PAYLOAD)
    one = run(
        "process", "--limit", "1", "--json", home=home, env={"FAKE_CLAUDE_STRUCTURED": payload}
    )
    assert one.returncode == 0, one.stderr
    report = json.loads(one.stdout)
    assert report["archived"] == 1 and report["failed"] == 0
    (conv,) = report["conversations"]
    assert conv["facts"] == {"add": 3, "update": 0, "supersede": 0, "none": 0}
    assert conv["summary"] == PAYLOAD["summary"] and conv["status"] == "archived"

    rest = run("process", home=home, env={"FAKE_CLAUDE_STRUCTURED": payload})
    assert rest.returncode == 0, rest.stderr
    assert "archived" in rest.stdout and "already known" in rest.stdout
    assert "1 archived, 0 skipped, 0 failed" in rest.stderr

    nothing = run("process", home=home)
    assert nothing.returncode == 0 and "Nothing to process" in nothing.stderr
    statuses = json.loads(run("conversations", "--json", home=home).stdout)
    assert sorted(c["status"] for c in statuses) == ["archived", "archived", "skipped"]
    assert len(json.loads(run("facts", "--json", home=home).stdout)) == 3
