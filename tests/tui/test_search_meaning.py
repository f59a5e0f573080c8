"""Live search by meaning: keyword results at once, hybrid ones when typing pauses."""

from __future__ import annotations

from typing import Any

import pytest
from clawback.core.home import Home
from clawback.tui.app import make_app
from clawback.tui.panes.search import SearchPane
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from .conftest import SIZE
from .pilot import settle

pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")


def embed_demo(home: Home) -> None:
    from clawback.core.embeddings.embedder import HashEmbedder
    from clawback.core.embeddings.store import VectorStore
    from clawback.core.embeddings.worker import EmbeddingWorker

    home.config.embeddings.model = "hash"
    store = VectorStore.open(home.paths.vectors)
    EmbeddingWorker(home.db, store, HashEmbedder()).run()
    store.close()


async def search_for(pilot: Pilot[Any], text: str, pause: float = 0) -> SearchPane:
    """Open the search pane and type ``text``; ``pause``: how long typing must pause before the
    search by meaning runs (0: at once)."""
    await settle(pilot)
    await pilot.press("ctrl+f")
    pane = pilot.app.query_one(SearchPane)
    pane.meaning_pause = pause
    pilot.app.query_one("#search-input", Input).insert_text_at_cursor(text)
    await settle(pilot)
    return pane


async def test_a_pause_in_typing_brings_results_by_meaning(
    demo_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawback.core.search import hybrid

    # The floor is calibrated for the real model; the hash stand-in's similarities are lower.
    monkeypatch.setattr(hybrid, "QUERY_FLOOR", 0.0)
    monkeypatch.setattr(hybrid, "HIT_FLOOR", 0.0)
    embed_demo(demo_home)
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        # no pause yet: only the keyword search has run
        pane = await search_for(pilot, "sqlite zzqx ", pause=600)
        status = pane.query_one("#search-status", Static)
        # No message holds both words: the ones holding "sqlite" answer, by words alone.
        assert pane._hits and {hit.found_by for hit in pane._hits} == {"keyword"}
        pane.meaning_pause = 0  # now the person stops typing
        app.query_one("#search-input", Input).insert_text_at_cursor(" ")
        await settle(pilot)
        assert "semantic" in {hit.found_by for hit in pane._hits}
        assert pane.query_one("#search-results", OptionList).option_count == len(pane._hits)
        assert "by words and meaning" in str(status.render())
        from clawback.core.embeddings.coverage import Coverage

        pane.store.embedded = Coverage(model="hash-64", vectors=1, total=4)  # still growing
        app.query_one("#search-input", Input).insert_text_at_cursor(" ")
        await settle(pilot)
        assert "(25% embedded so far)" in str(status.render())


async def test_meaning_alone_and_unsure_says_so_first(
    demo_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawback.core.search import hybrid
    from clawback.core.search.front import RELATED_ONLY
    from clawback.tui.panes.search import hit_row

    monkeypatch.setattr(hybrid, "QUERY_FLOOR", 0.0)
    monkeypatch.setattr(hybrid, "HIT_FLOOR", 0.0)
    monkeypatch.setattr(hybrid, "ANSWER_FLOOR", 1.01)  # no neighbour is sure enough
    embed_demo(demo_home)
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await search_for(pilot, "zzqx plumbing ")
        assert pane._hits and {hit.found_by for hit in pane._hits} == {"related"}
        status = str(pane.query_one("#search-status", Static).render())
        assert status.startswith(RELATED_ONLY) and "matches" not in status.removeprefix(
            RELATED_ONLY
        )
        assert str(hit_row(pane._hits[0])).split("  ")[2].startswith("only related")


async def test_prefixes_never_wait_for_meaning(demo_home: Home) -> None:
    embed_demo(demo_home)
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await search_for(pilot, "zzqx*")
        assert pane._hits == [] and pane._meaning_timer is None


async def test_a_quoted_title_not_in_the_archive_still_finds_by_meaning(demo_home: Home) -> None:
    embed_demo(demo_home)
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await search_for(pilot, '"sqlite zzqx"')
        assert pane._hits and {hit.found_by for hit in pane._hits} == {"semantic"}
        status = str(pane.query_one("#search-status", Static).render())
        assert "by meaning alone" in status and "by words" not in status


async def test_nonsense_says_so_and_stays_empty(demo_home: Home) -> None:
    # The vector side's floor is the real model's (core tests); the hash stand-in has none.
    app = make_app(demo_home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await search_for(pilot, "xyzzyplugh qwfpgj")
        status = str(pane.query_one("#search-status", Static).render())
        assert pane._hits == [] and "nothing in the archive matches" in status
