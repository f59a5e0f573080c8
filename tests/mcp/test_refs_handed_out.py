"""Every ref ``memory_search`` hands out is taken back by ``memory_get``, answers keep their
budget whatever the file keys, and no ref gets an exception's text (issue 19, item 12).

File keys of ~1,580 characters (deep folders with long names) made a 92,286-character search
answer (the contract is under 40,000) and refs that ``memory_get`` refused as too long;
``fact:<huge number>`` answered with an OverflowError.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.core.mcp.answers import MAX_ANSWER_CHARS, dumps
from clawback.core.mcp.refs import MAX_REF_CHARS, RefError
from clawback.core.mcp.tools import MAX_RESULTS, MemoryTools

from tests.helpers import cc_user, write_lines

LONG = [f"{n}-" + "long-folder-name-" * 13 for n in range(7)]  # 7 x ~225: a 1,580-char key


def no_session_id(line: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in line.items() if key != "sessionId"}


def plant(cc_root: Path, files: int) -> None:
    folder = cc_root.joinpath(*LONG)
    for n in range(files):
        session = f"10000000-0000-4000-8000-{n:012d}"
        line = cc_user(session, f"u{n}", f"the database note number {n}")
        # half the files name no session: theirs is made from the (long) key
        write_lines(folder / f"transcript-{n:02d}.jsonl", [no_session_id(line) if n % 2 else line])


def test_long_keys_keep_search_answers_in_budget_and_every_ref_reads_back(
    home: Home, cc_root: Path
) -> None:
    plant(cc_root, MAX_RESULTS)
    home.ingest_all()
    assert min(len(row[0]) for row in home.db.execute("SELECT file_key FROM files")) > 1_500
    tools = MemoryTools(home.db)
    answer = tools.search("database", max_results=MAX_RESULTS)
    hits = answer["results"]
    assert len(hits) == MAX_RESULTS
    assert len(dumps(answer)) < MAX_ANSWER_CHARS
    for hit in hits:
        assert len(hit["ref"]) < MAX_REF_CHARS and len(hit["session_id"]) < MAX_REF_CHARS
        read = tools.get(hit["ref"])
        [target] = [m for m in read["messages"] if m.get("target", True)]
        assert target["ref"] == hit["ref"] and "database note" in target["text"]
        assert tools.get(hit["session_id"])["user_turns"][0]["ref"] == hit["ref"]


@pytest.mark.parametrize("ref", ["fact:99999999999999999999999", "fact:" + "9" * 30, "fact:²"])
def test_impossible_fact_numbers_are_one_sentence_errors(demo_home: Home, ref: str) -> None:
    with pytest.raises(RefError) as caught:
        MemoryTools(demo_home.db).get(ref)
    message = str(caught.value)
    assert "Overflow" not in message and "\n" not in message and message.endswith(".")
