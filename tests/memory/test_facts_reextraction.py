"""A hand edit outlives the archive being rebuilt: ``clawback reindex`` re-opens every
conversation, the librarian extracts from it again, and the corrected fact must still stand."""

from __future__ import annotations

from pathlib import Path

from clawback.core.home import Home
from clawback.core.memory.facts import FactStore

from tests.fake_claude.fixtures import FakeClaude, fake_claude_fixture  # noqa: F401  (fixture)

from .test_librarian import PAYLOAD, conversation, statuses


async def test_an_edited_fact_survives_reindex_and_extraction_again(
    home: Home, cc_root: Path, fake_claude: FakeClaude
) -> None:
    conversation(cc_root / "proj" / "long.jsonl", "long", 3)
    home.ingest_all()
    fake_claude.structured(PAYLOAD)
    await home.librarian(fake_claude.runner()).process()
    store = FactStore(home.db)
    (port,) = [f for f in store.list() if f.type == "config"]
    assert port.content == "Billing listens on port 5432" and port.message_id == "long-a1"
    store.edit(port.id, "Billing listens on port 6432")
    before = {(f.id, f.content) for f in store.list(include_superseded=True)}

    home.reindex()
    assert statuses(home) == {"long": "ready"}  # extraction will run again...
    report = await home.librarian(fake_claude.runner()).process()
    assert statuses(home) == {"long": "archived"} and len(fake_claude.calls()) == 2
    (outcome,) = report.conversations
    assert outcome.counts()["supersede"] == 0 and outcome.counts()["add"] == 0

    kept = store.get(port.id)  # ...and the correction stands
    assert kept.active and kept.edited and kept.content == "Billing listens on port 6432"
    assert {(f.id, f.content) for f in store.list(include_superseded=True)} == before


async def test_a_superseded_fact_stays_replaced_after_extraction_again(
    home: Home, cc_root: Path, fake_claude: FakeClaude
) -> None:
    """Issue 22: ``facts supersede`` then ``process`` again added a fact superseding the
    person's with the old wrong text, and re-added the text they had taken out."""
    conversation(cc_root / "proj" / "long.jsonl", "long", 3)
    home.ingest_all()
    fake_claude.structured(PAYLOAD)
    await home.librarian(fake_claude.runner()).process()
    store = FactStore(home.db)
    (decision,) = [f for f in store.list() if f.type == "decision"]
    (port,) = [f for f in store.list() if f.type == "config"]
    replaced = store.supersede(decision.id, "The tangerine billing service moved to SQLite")
    corrected = store.supersede(port.id, "Billing listens on port 6432")
    before = {(f.id, f.content, f.superseded_by) for f in store.list(include_superseded=True)}

    home.reindex()
    report = await home.librarian(fake_claude.runner()).process()
    (outcome,) = report.conversations
    assert outcome.counts()["supersede"] == 0 and outcome.counts()["add"] == 0
    after = {(f.id, f.content, f.superseded_by) for f in store.list(include_superseded=True)}
    assert after == before
    assert {f.id for f in store.list()} >= {replaced.id, corrected.id}
