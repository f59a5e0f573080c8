"""The memory tools' logic on small archives: refs round-trip, bounded answers, odd input, refused
refs, memory files and facts, and new entries seen by an open connection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clawback.core.home import Home
from clawback.core.mcp.answers import MAX_ANSWER_CHARS, SEARCH_BUDGET, dumps
from clawback.core.mcp.refs import RefError
from clawback.core.mcp.tools import MemoryTools, ToolInputError

from tests.helpers import cc_assistant, cc_user, write_lines

SID = "11111111-2222-4333-8444-555555555555"
OTHER = "99999999-2222-4333-8444-555555555555"


@pytest.fixture
def tools(demo_home: Home) -> MemoryTools:
    return MemoryTools(demo_home.db)


def test_hits_carry_the_contract_fields_and_their_refs_read_back(tools: MemoryTools) -> None:
    answer = tools.search("sqlite")
    hits = answer["results"]
    assert hits and json.loads(dumps(answer)) == answer
    fields = {"ref", "session_id", "session_title", "source", "role", "kind", "timestamp",
              "snippet", "score", "found_by"}  # fmt: skip
    for hit in hits:
        assert set(hit) == fields
        assert "«" in hit["snippet"] and "sqlite" in hit["snippet"].lower()
        read = tools.get(hit["ref"])
        if hit["source"] == "fact":
            assert read["ref"] == hit["ref"] and read["content"]
            continue
        [target] = [m for m in read["messages"] if m.get("target")]
        assert target["ref"] == read["ref"] == hit["ref"]
        assert "sqlite" in target["text"].lower()
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_a_message_comes_back_whole_with_its_neighbours_in_order(tools: MemoryTools) -> None:
    ref = tools.search('"Tantivy would be faster"')["results"][0]["ref"]
    alone = tools.get(ref, context=0)["messages"]
    assert len(alone) == 1 and alone[0]["text"].endswith("adds a Rust build step.")
    around = tools.get(ref, context=1)["messages"]
    assert [m["line"] for m in around] == sorted(m["line"] for m in around)
    assert len(around) == 3 and around[1]["target"] and around[1]["text"] == alone[0]["text"]


def test_memory_files_are_searched_and_read_with_their_line_numbers(
    demo_home: Home, tools: MemoryTools
) -> None:
    [hit] = tools.search("hotels")["results"]
    assert hit["source"] == "memory" and hit["ref"] == "memory:MEMORY.md#L3"
    assert hit["session_title"].startswith("MEMORY.md lines 3-5")
    read = tools.get(hit["ref"], context=0)
    assert read["file"] == "MEMORY.md"
    lines = (demo_home.workspace / "MEMORY.md").read_text().splitlines()
    [target] = read["messages"]
    assert (target["line"], target["end_line"]) == (3, 5)
    for numbered in target["text"].splitlines():
        number, text = numbered.split("| ", 1)
        assert lines[int(number) - 1] == text


def test_facts_are_searched_and_point_at_the_message_they_came_from(tools: MemoryTools) -> None:
    hits = tools.search("flush", source="fact")["results"]
    assert hits and all(h["source"] == "fact" and h["ref"].startswith("fact:") for h in hits)
    fact = tools.get(hits[0]["ref"])
    assert "flush" in fact["content"].lower()
    source = tools.get(fact["message_ref"], context=0)
    assert source["session_id"] == fact["session_id"]
    mixed = tools.search("flush", max_results=8)["results"]
    assert sum(h["source"] == "fact" for h in mixed) <= 2  # facts take at most a quarter


def test_a_session_id_gives_its_outline(tools: MemoryTools) -> None:
    hit = tools.search("Tantivy")["results"][0]
    outline = tools.get(hit["session_id"])
    assert outline["session_id"] == hit["session_id"]
    assert outline["session_title"] == hit["session_title"]
    assert outline["message_count"] > 0 and outline["first_prompt"]
    assert outline["user_turns"][0]["text"] == outline["first_prompt"]
    assert tools.get(outline["user_turns"][0]["ref"], context=0)["messages"][0]["role"] == "user"
    assert tools.get(hit["session_id"][:8])["session_id"] == hit["session_id"]


def _long_archive(home: Home, cc_root: Path, sessions: int, words: int) -> None:
    filler = " ".join(f"word{i} common" for i in range(words))
    for s in range(sessions):
        sid = f"{s:08d}-2222-4333-8444-555555555555"
        write_lines(
            cc_root / "proj" / f"{sid}.jsonl",
            [
                cc_user(sid, f"u{s}", f"Session {s} title prompt " + "long title " * 60),
                cc_assistant(sid, f"a{s}", [{"type": "text", "text": filler}]),
            ],
        )
    home.ingest_all()


def test_a_broad_search_stays_bounded_by_trimming_snippets_not_hits(
    home: Home, cc_root: Path
) -> None:
    _long_archive(home, cc_root, sessions=60, words=400)
    answer = MemoryTools(home.db).search("common", max_results=50)
    assert len(answer["results"]) == 50
    assert len(dumps(answer)) <= SEARCH_BUDGET < MAX_ANSWER_CHARS
    assert all("«common»" in hit["snippet"] for hit in answer["results"])
    assert "max_results" in answer["note"]
    assert len(MemoryTools(home.db).search("common", max_results=500)["results"]) == 50


def test_a_message_longer_than_an_answer_is_read_in_parts(home: Home, cc_root: Path) -> None:
    text = "".join(f"line {i} of a very long tool output\n" for i in range(4000))  # ~140 kB
    write_lines(
        cc_root / "proj" / f"{SID}.jsonl",
        [cc_user(SID, "u1", "dump it"), cc_assistant(SID, "a1", [{"type": "text", "text": text}])],
    )
    home.ingest_all()
    tools = MemoryTools(home.db)
    ref = tools.search('"line 3999"')["results"][0]["ref"]
    parts, answers = [], 0
    while ref:
        read = tools.get(ref)
        assert len(dumps(read)) < MAX_ANSWER_CHARS
        [message] = read["messages"]
        parts.append(message["text"])
        ref = message.get("next_ref")
        answers += 1
    assert "".join(parts) == text and answers > 3


def test_neighbours_never_come_from_another_session(home: Home, cc_root: Path) -> None:
    write_lines(
        cc_root / "proj" / f"{SID}.jsonl",
        [
            cc_user(SID, "u1", "first session asks about kiwis"),
            cc_assistant(SID, "a1", [{"type": "text", "text": "kiwis answer"}]),
        ],
    )
    write_lines(
        cc_root / "proj" / f"{OTHER}.jsonl",
        [
            cc_user(OTHER, "u2", "second session asks about mangos"),
            cc_assistant(OTHER, "a2", [{"type": "text", "text": "mangos answer"}]),
        ],
    )
    home.ingest_all()
    tools = MemoryTools(home.db)
    ref = tools.search("mangos", kind="text", max_results=1)["results"][0]["ref"]
    read = tools.get(ref, context=5)
    assert "kiwis" not in json.dumps(read)
    assert [m["text"] for m in read["messages"]] == [
        "second session asks about mangos",
        "mangos answer",
    ]


def test_nothing_found_says_why(tools: MemoryTools) -> None:
    assert tools.search("xyzzyplugh")["note"].startswith(
        "No matches: nothing in the archive matches this, by words or by meaning."
    )
    then = tools.search("what did we do on 1999-01-02?")
    assert then["results"] == []
    assert then["note"].startswith("No matches: nothing in the archive was said then (1999-01-02).")


@pytest.mark.parametrize(
    "query", ["***", "-sqlite", '"', "AND OR NOT", "NEAR(a b)", "日本語", "sear*", "a'b", "x\x00y",
              "text:foo", "^start", "🙂"],
)  # fmt: skip
def test_odd_queries_get_a_result(tools: MemoryTools, query: str) -> None:
    answer = tools.search(query)
    assert isinstance(answer["results"], list)
    assert answer["note"]


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"query": ""}, "empty"),
        ({"query": "x" * 5000}, "characters"),
        ({"query": "x", "since": "yesterday"}, "YYYY-MM-DD"),
        ({"query": "x", "since": "2025-07-15", "until": "2025-07-14"}, "is after until"),
        ({"query": "x", "source": "web"}, "source"),
        ({"query": "x", "kind": "code"}, "kind"),
        ({"query": "x", "session": "no-such-session"}, "session"),
    ],
)
def test_bad_inputs_fail_with_one_sentence(
    tools: MemoryTools, arguments: dict[str, Any], says: str
) -> None:
    with pytest.raises(ToolInputError) as caught:
        tools.search(**arguments)
    message = str(caught.value)
    assert says in message and "\n" not in message and message.endswith(".")


@pytest.mark.parametrize(
    "ref",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "memory:../secret.md#L1",
        "memory:/etc/passwd#L1",
        "claude-code:..\\..\\x.jsonl#L1",
        "openclaw:C:/Windows/win.ini#L1",
        "memory:MEMORY.md#L999",
        "memory:MEMORY.md",
        "fact:999999",
        "fact:one",
        "no-such-session",
        "",
    ],
)
def test_refused_and_unknown_refs_are_errors(tools: MemoryTools, ref: str) -> None:
    with pytest.raises(RefError) as caught:
        tools.get(ref)
    assert "\n" not in str(caught.value)


def test_a_symlink_out_of_the_workspace_is_never_read(home: Home, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nfirst version\n")
    folder = home.workspace / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "link.md").symlink_to(outside)
    home.ingest_all()
    outside.write_text("# Outside\n\nSECRET written after indexing\n")
    tools = MemoryTools(home.db)
    for ref in ("memory:memory/link.md#L1", "memory:memory/link.md#L3"):
        try:
            read = tools.get(ref)
        except RefError:
            continue
        assert "SECRET" not in json.dumps(read)


def test_an_open_connection_sees_entries_ingested_after_it_opened(
    home: Home, cc_root: Path
) -> None:
    reader = Home.open(home.paths.home)
    try:
        tools = MemoryTools(reader.db)
        assert tools.search("zebracorn")["results"] == []
        write_lines(cc_root / "proj" / f"{SID}.jsonl", [cc_user(SID, "u1", "the zebracorn")])
        home.ingest_all()
        [hit] = tools.search("zebracorn")["results"]
        assert hit["session_id"] == SID
    finally:
        reader.close()
