"""Recall that knows where it is: the asker's project first at equal relevance, the turn that
answered a question before its restatement, no bare acknowledgements, a ref memory_get takes on
every line, and dates as people say them."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from clawback.core.home import Home
from clawback.core.mcp.reader import Reader
from clawback.core.memory.facts import FactStore, NewFact
from clawback.core.memory.facts.recall import facts_provider
from clawback.core.recall import recall

from tests.helpers import cc_assistant, cc_user, write_lines

ALPHA, BETA = "/home/u/alpha", "/home/u/beta"


def _said(session: str, uuid: str, role: str, text: str, cwd: str, ts: str) -> dict[str, Any]:
    if role == "user":
        line = cc_user(session, uuid, text, ts=ts)
    else:
        line = cc_assistant(session, uuid, [{"type": "text", "text": text}], ts=ts)
    return {**line, "cwd": cwd}


def _session(root: Path, session: str, cwd: str, turns: list[tuple[str, str]], day: int) -> None:
    ts = f"2026-11-{day:02d}T10:00:00.000Z"
    lines = [
        _said(session, f"{session}-{n}", role, text, cwd, ts)
        for n, (role, text) in enumerate(turns)
    ]
    write_lines(root / cwd.strip("/").replace("/", "-") / f"{session}.jsonl", lines)


def test_the_askers_project_comes_first_at_equal_relevance(home: Home, cc_root: Path) -> None:
    _session(cc_root, "a1", ALPHA, [("user", "the deploy script lives in scripts/deploy.sh")], 10)
    _session(cc_root, "b1", BETA, [("user", "the deploy script lives in tools/deploy.sh")], 10)
    home.ingest_all()
    prompt = ["where does the deploy script live?"]
    for project, first in ((ALPHA, "scripts/"), (BETA, "tools/")):
        block = recall(home.db, prompt, cap=2000, project=project)
        assert len(block.details) == 2 and first in block.details[0].text


def test_another_project_clearly_better_still_comes_first(home: Home, cc_root: Path) -> None:
    _session(cc_root, "a1", ALPHA, [("user", "we deploy on fridays")], 10)
    _session(cc_root, "b1", BETA, [("user", "the deploy script lives in tools/deploy.sh")], 10)
    home.ingest_all()
    block = recall(home.db, ["where does the deploy script live?"], cap=2000, project=ALPHA)
    assert "tools/deploy.sh" in block.details[0].text


ANSWER = "We dropped Redis: SQLite's page cache serves the reads now."


def test_a_past_turn_restating_the_prompt_gives_its_place_to_the_answer(
    home: Home, cc_root: Path
) -> None:
    """Asked again, a question finds its first asking, and as the person's own turn about a
    decision it was lifted above the assistant's answer; it says nothing the prompt does not."""
    _session(
        cc_root, "q1", ALPHA,
        [("user", "what did we decide about the cache layer?"),
         ("assistant", "Let me check."), ("assistant", ANSWER)],
        10,
    )  # fmt: skip
    _session(cc_root, "q2", ALPHA, [("user", "Plan the garden irrigation schedule")], 11)
    home.ingest_all()
    block = recall(
        home.db, ["remind me what we decided about the cache layer"], cap=2000, min_coverage=0.25
    )
    texts = [hit.text for hit in block.details]
    assert texts[:2] == [ANSWER, "what did we decide about the cache layer?"]


def test_a_statement_in_the_questions_words_is_its_answer(home: Home, cc_root: Path) -> None:
    _session(cc_root, "v1", ALPHA, [("user", "we picked vite for the recorder")], 10)
    home.ingest_all()
    block = recall(home.db, ["did we pick vite for the recorder?"], cap=2000, min_coverage=0.25)
    assert [hit.text for hit in block.details] == ["we picked vite for the recorder"]


def test_an_acknowledgement_is_not_recalled_on_its_own(home: Home, cc_root: Path) -> None:
    _session(
        cc_root, "k1", ALPHA,
        [("user", "which sessions index format?"),
         ("assistant", "Store the sessions index in SQLite with FTS5."), ("user", "yo")],
        10,
    )  # fmt: skip
    home.ingest_all()
    block = recall(home.db, ["how do we store the sessions index?"], cap=2000, min_coverage=0.25)
    texts = [hit.text for hit in block.details]
    assert "Store the sessions index in SQLite with FTS5." in texts and "yo" not in texts


def test_every_line_carries_the_ref_memory_get_takes(home: Home, cc_root: Path) -> None:
    _session(
        cc_root, "r1", ALPHA,
        [("user", "Should we keep the Redis cache layer?"), ("assistant", ANSWER)],
        10,
    )  # fmt: skip
    home.ingest_all()
    FactStore(home.db).add(NewFact("decision", "The cache layer is SQLite's page cache"))
    block = recall(
        home.db, ["what about the redis cache layer?"], cap=2000,
        facts_provider=facts_provider(home.db),
    )  # fmt: skip
    lines = [line for line in block.text.splitlines() if line.startswith("- [")]
    assert len(lines) == len(block.details) + len(block.knowledge) >= 3
    reader = Reader(home.db)
    for line in lines:
        found = re.search(r"ref: (\S+)\]", line)
        assert found, line
        got = reader.get(found[1], context=0)
        said = got["messages"][0]["text"] if "messages" in got else got["content"]
        assert said.split()[0] in line.split("] ", 1)[1]


def test_a_weekday_in_a_prompt_recalls_what_was_asked_that_day(home: Home, cc_root: Path) -> None:
    today = datetime.now().astimezone().date()
    tuesday = today - timedelta(days=(today.weekday() - 1 - 1) % 7 + 1)
    asked = "Please move the nightly backups of the wiki to the new NAS."
    for offset, text in ((0, asked), (-1, "Rename the staging bucket.")):
        day = tuesday + timedelta(days=offset)
        noon = datetime(day.year, day.month, day.day, 12).astimezone().isoformat()
        line = {**cc_user("t1", f"t{offset}", text, ts=noon), "cwd": ALPHA}
        write_lines(cc_root / "alpha" / f"t{-offset}.jsonl", [line])
    home.ingest_all()
    block = recall(home.db, ["what did we do last Tuesday?"], cap=2000, min_coverage=0.25)
    assert [hit.text for hit in block.details] == [asked]
