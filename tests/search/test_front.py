"""One search for every client: the front door owns the mode, typing, the floor's note and
facts, and the CLI, the app, memory_search and the recall block all come through it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import sqlite_utils
from clawback.core.db import write_transaction
from clawback.core.search.filters import SearchFilters
from clawback.core.search.front import NOTHING, as_you_type, by_meaning, default_mode, find

from tests.search_doubles import small_index

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ["cli/search.py", "tui/store.py", "core/mcp/tools.py", "core/recall/finding.py"]
RANKING = {"search", "fuse", "fuse_weighted", "fuse_rrf", "first_page", "admit", "plan_query"}


@pytest.mark.parametrize("client", CLIENTS)
def test_every_client_searches_through_the_front_door(client: str) -> None:
    tree = ast.parse((ROOT / client).read_text(encoding="utf-8"))
    imported = {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    assert ("clawback.core.search", "find") in imported  # through the door: front.find
    rules = {name for module, name in imported if module.startswith("clawback.core.search")}
    assert not rules & RANKING, f"{client} holds ranking rules: {rules & RANKING}"


@pytest.fixture
def db() -> sqlite_utils.Database:
    database = small_index([{"role": "user", "text": "compaction keeps the summary"}])
    with write_transaction(database) as conn:
        conn.execute(
            "INSERT INTO facts (id, type, content, created_at, updated_at) VALUES"
            " (1, 'decision', 'compaction runs at 80 percent', '2026-01-02', '2026-01-02')"
        )
        conn.execute(
            "INSERT INTO facts_fts (rowid, content, context) SELECT id, content, '' FROM facts"
        )
    return database


def test_mode_typing_and_meaning_rules() -> None:
    assert default_mode(None) == "keyword" and default_mode(object()) == "hybrid"  # type: ignore[arg-type]
    assert as_you_type("comp") == "comp*" and as_you_type("comp ") == "comp "
    assert by_meaning('the "exact title"') and not by_meaning("comp*") and not by_meaning("a -b")


def test_typing_finds_by_prefix_and_a_pause_by_words(db: sqlite_utils.Database) -> None:
    assert [h.entry_id for h in find(db, "compac", typing=True).results.hits] == [1]
    assert find(db, "compac").results.hits == []


def test_nothing_says_so(db: sqlite_utils.Database) -> None:
    found = find(db, "xyzzyplugh")
    assert found.empty and found.results.note == NOTHING


def test_facts_join_the_list_by_score(db: sqlite_utils.Database) -> None:
    found = find(db, "compaction", facts=True, limit=8)
    assert [f.id for f in found.facts] == [1]
    assert len(found.ranked(8)) == 2 and len(found.ranked(1)) == 1
    alone = find(db, "compaction", facts=True, archive=False)
    assert alone.results.hits == [] and [f.id for f in alone.facts] == [1]


def test_filters_leave_out_a_session_and_messages_before_the_cut() -> None:
    """What an asker already holds (recall: its prompt's own lines) is left out by SQLite, so
    the first ``limit`` hits are all others; with no exclusion nothing changes."""
    database = small_index([
        {"role": "user", "text": "rollout plan", "session_id": "held"},
        {"role": "user", "text": "rollout plan", "session_id": "held"},
        {"role": "user", "text": "the rollout plan again", "session_id": "other"},
        {"role": "user", "text": "the rollout plan once more", "session_id": "other"},
    ])  # fmt: skip
    with write_transaction(database) as conn:
        for line, uuid in ((1, "h1"), (2, "h2"), (3, "o1")):
            conn.execute("UPDATE entries SET uuid = ? WHERE line = ?", (uuid, line))
    rows = dict(database.execute("SELECT id, uuid FROM entries").fetchall())

    def uuids(filters: SearchFilters, limit: int = 2) -> list[str | None]:
        return [rows[h.entry_id] for h in find(database, "rollout plan", filters, limit=limit)
                .results.hits]  # fmt: skip

    assert uuids(SearchFilters(), limit=4)[:2] == ["h2", "h1"]
    assert sorted(map(str, uuids(SearchFilters(exclude_session="held")))) == ["None", "o1"]
    assert sorted(map(str, uuids(SearchFilters(exclude_uuids=("h1", "h2", ""))))) == ["None", "o1"]
    assert uuids(SearchFilters(exclude_session="hel"), limit=4)[:2] == ["h2", "h1"]  # exact id
