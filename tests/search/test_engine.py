"""Search: prefix expansion is invisible, filters narrow, limits hold, hits point at lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawback.core.home import Home
from clawback.core.search.engine import SearchFilters, search
from clawback.core.search.query import build_match


@pytest.mark.parametrize("query", ["sak*", "ter*", "kyo* hot*", "fts*", "the*", "co*", "s*"])
def test_prefix_queries_find_exactly_what_fts5_prefixes_find(demo_home: Home, query: str) -> None:
    match = build_match(query)
    raw = {row[0] for row in demo_home.db.execute(
        "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?", (match,))}  # fmt: skip
    found = {hit.entry_id for hit in search(demo_home.db, query, limit=1000).hits}
    assert found == raw and raw


def test_filters_narrow_and_limit_holds(demo_home: Home) -> None:
    everything = search(demo_home.db, "the", limit=1000).hits
    assert len(search(demo_home.db, "the", limit=3).hits) == 3
    users = search(demo_home.db, "the", SearchFilters(role="user"), limit=1000).hits
    assert users and all(hit.role == "user" for hit in users)
    assert len(users) < len(everything)
    recent = search(demo_home.db, "the", SearchFilters(since="2026-11-20"), limit=1000).hits
    assert recent and all((hit.timestamp or "") >= "2026-11-20" for hit in recent)
    project = search(demo_home.db, "the", SearchFilters(project="website"), limit=1000).hits
    assert project and {hit.session_title for hit in project} == {"Deploy pipeline for the website"}


def test_hits_are_ranked_and_point_at_their_line(demo_home: Home) -> None:
    hits = search(demo_home.db, "sidebar", limit=50).hits
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for hit in hits:
        lines = Path(hit.path).read_text(encoding="utf-8").splitlines()
        assert "sidebar" in lines[hit.line - 1].lower()
