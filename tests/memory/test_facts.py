"""Knowledge facts: the four update rules at their thresholds, no deletes, masking, FTS in step."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils
from clawback.core.db import connect
from clawback.core.errors import NotFoundError, UsageError
from clawback.core.memory.facts import (
    CONTRADICTION_OVERLAP,
    COVER,
    SIMILAR,
    SWAP_MAX,
    Action,
    FactStore,
    NewFact,
    compare,
    facts_for_recall,
    facts_provider,
    tokenize,
)
from clawback.core.schema import migrations


@pytest.fixture
def store() -> FactStore:
    return FactStore(connect(None))


def words(*names: str) -> str:
    """A fact text made of the given tokens (NATO words: no stopwords, no plural 's')."""
    return " ".join(names)


ABC = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "kilo"]


def assert_fts_in_sync(store: FactStore) -> None:
    """FTS5's own check: the index holds exactly the tokens of the rows in ``facts``."""
    try:
        store.db.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:  # "database disk image is malformed" on any drift
        pytest.fail(f"facts_fts is out of step with facts: {exc}")


def test_thresholds_are_the_documented_ones() -> None:
    assert (SIMILAR, COVER, CONTRADICTION_OVERLAP, SWAP_MAX) == (0.4, 0.8, 0.5, 2)


def test_tokenize_drops_stopwords_and_flags_negation() -> None:
    tokens = tokenize("We don't use the Redis caches on port 6379.")
    assert tokens.words == {"redi", "cache", "port"}
    assert tokens.numbers == {"6379"}
    assert tokens.negated
    assert not tokenize("We use Redis").negated
    # paths, versions and identifiers stay whole; sentence punctuation goes
    assert tokenize("Sessions live in ~/.clawback/sessions/, on v2.1.").words == {
        "session",
        "live",
        "clawback/sessions",
        "v2.1",
    }


# -- the rules on plain language -----------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "action"),
    [
        # ADD: nothing alike
        ("The watcher uses watchfiles", "Transcripts are the source of truth", Action.ADD),
        # UPDATE: the new one keeps all of the old and adds detail
        (
            "We use PostgreSQL for billing",
            "We use PostgreSQL 16 for billing and invoices",
            Action.UPDATE,
        ),
        (
            "Retries 3 times with 2s backoff",
            "Retries 3 times with 2s backoff, at most 30s in total",
            Action.UPDATE,
        ),
        # SUPERSEDE: a swapped value, a changed number, a negation
        (
            "We decided to use PostgreSQL for billing",
            "We decided to use MySQL for billing",
            Action.SUPERSEDE,
        ),
        ("Postgres listens on port 5432", "Postgres listens on port 5433", Action.SUPERSEDE),
        ("Telemetry is enabled by default", "Telemetry is disabled by default", Action.SUPERSEDE),
        ("The watcher debounces events", "The watcher does not debounce events", Action.SUPERSEDE),
        # NONE: nothing new in it
        ("We use PostgreSQL 16 for billing", "We use PostgreSQL 16 for billing.", Action.NONE),
        ("We use PostgreSQL 16 for billing and invoices", "PostgreSQL 16 for billing", Action.NONE),
    ],
)
def test_rules_on_examples(old: str, new: str, action: Action) -> None:
    assert compare(old, new).action is action


# -- the rules at their thresholds ---------------------------------------------------------


def test_none_at_the_cover_threshold() -> None:
    old = words(*ABC[:7])
    # 4 of the new fact's 5 tokens are known: new_cover = 0.8, jaccard = 4/8 = 0.5
    at = compare(old, words(*ABC[:4], "zulu"))
    assert (at.action, at.new_cover, at.jaccard) == (Action.NONE, 0.8, 0.5)
    # 4 of 6: new_cover 0.67 -> a new fact
    below = compare(old, words(*ABC[:4], "zulu", "yankee"))
    assert below.action is Action.ADD and below.new_cover < COVER


def test_none_at_the_similarity_threshold() -> None:
    old = words(*ABC[:10])
    at = compare(old, words(*ABC[:4]))  # a subset: new_cover 1.0, jaccard 4/10
    assert (at.action, at.jaccard) == (Action.NONE, 0.4)
    below = compare(old, words(*ABC[:3]))  # jaccard 0.3: too little to be the same fact
    assert below.action is Action.ADD


def test_update_at_the_cover_threshold() -> None:
    old = words(*ABC[:10])
    # keeps 8 of the 10 old tokens (old_cover 0.8), adds 3: longer, jaccard 8/13
    at = compare(old, words(*ABC[:8], "xray", "yankee", "zulu"))
    assert (at.action, at.old_cover) == (Action.UPDATE, 0.8)
    # keeps 7 of 10 (0.7), adds 4: not a more detailed version of the same fact
    below = compare(old, words(*ABC[:7], "whiskey", "xray", "yankee", "zulu"))
    assert below.action is Action.ADD


def test_update_needs_a_longer_fact() -> None:
    old = words(*ABC[:5])
    same_size = compare(old, words(*ABC[:5]))
    assert same_size.action is Action.NONE
    longer = compare(old, words(*ABC[:6]))
    assert longer.action is Action.UPDATE


def test_swap_at_the_overlap_threshold() -> None:
    # one token swapped, jaccard 2/4 = 0.5: a contradiction
    at = compare(words("alpha", "bravo", "xray"), words("alpha", "bravo", "yankee"))
    assert (at.action, at.jaccard) == (Action.SUPERSEDE, 0.5)
    # one token swapped, jaccard 1/3: too little in common to contradict
    assert compare(words("alpha", "xray"), words("alpha", "yankee")).action is Action.ADD


def test_swap_size_threshold() -> None:
    base = ABC[:6]
    two = compare(words(*base, "uniform", "victor"), words(*base, "xray", "yankee"))
    assert two.action is Action.SUPERSEDE  # 2 swapped (SWAP_MAX), jaccard 6/10
    three = compare(
        words(*base, "uniform", "victor", "whiskey"), words(*base, "xray", "yankee", "zulu")
    )
    assert three.action is Action.ADD  # 3 swapped: a different fact, jaccard 6/12


def test_negation_at_the_overlap_threshold() -> None:
    old = words(*ABC[:4])
    at = compare(old, "not " + words(*ABC[:2]))  # jaccard 2/4
    assert (at.action, at.reason) == (Action.SUPERSEDE, "negation differs")
    below = compare(old, "never " + words(*ABC[:1]))  # jaccard 1/4
    assert below.action is Action.ADD


def test_changed_number_compares_the_words_around_it() -> None:
    # the words agree (jaccard 1.0) though the token sets only share one of three
    assert compare("Port 5432", "Port 8080").action is Action.SUPERSEDE
    # words around the numbers: 1/3 in common -> not the same setting
    assert compare("Port 5432 alpha bravo", "Port 8080 xray yankee").action is Action.ADD
    # a number added is detail, not a contradiction
    assert compare("Timeout alpha bravo", "Timeout alpha bravo 30s").action is Action.UPDATE


def test_rules_are_deterministic() -> None:
    pairs = [("We use PostgreSQL for billing", "We use MySQL for billing")] * 50
    assert len({compare(old, new) for old, new in pairs}) == 1


# -- the store ------------------------------------------------------------------------------


def test_add_update_supersede_none_in_the_store(store: FactStore) -> None:
    first = store.add(NewFact("decision", "We use PostgreSQL for billing", "chosen in review"))
    assert first.action is Action.ADD

    known = store.add(NewFact("decision", "We use PostgreSQL for billing."))
    assert (known.action, known.fact_id) == (Action.NONE, first.fact_id)

    detail = store.add(NewFact("decision", "We use PostgreSQL 16 for billing and invoices"))
    assert (detail.action, detail.fact_id) == (Action.UPDATE, first.fact_id)
    updated = store.get(first.fact_id)
    assert updated.content == "We use PostgreSQL 16 for billing and invoices"
    assert updated.context == "chosen in review"  # kept when the new one has none

    change = store.add(NewFact("decision", "We use MySQL 16 for billing and invoices"))
    assert change.action is Action.SUPERSEDE and change.previous_id == first.fact_id
    old, new = store.get(first.fact_id), store.get(change.fact_id)
    assert old.superseded_by == new.id and not old.active and new.active

    # no deletes: the superseded fact is kept, listed only with include_superseded
    assert [f.id for f in store.list()] == [new.id]
    assert {f.id for f in store.list(include_superseded=True)} == {old.id, new.id}
    assert store.count() == 1 and store.count(include_superseded=True) == 2
    assert_fts_in_sync(store)


def test_only_facts_of_the_same_type_are_updated(store: FactStore) -> None:
    store.add(NewFact("config", "Postgres listens on port 5432"))
    other = store.add(NewFact("issue", "Postgres listens on port 5433"))
    assert other.action is Action.ADD
    # the very same tokens under another type are already known
    again = store.add(NewFact("architecture", "postgres listens on port 5432"))
    assert again.action is Action.NONE


def test_superseded_facts_are_not_matched_again(store: FactStore) -> None:
    store.add(NewFact("config", "Postgres listens on port 5432"))
    store.add(NewFact("config", "Postgres listens on port 5433"))
    back = store.add(NewFact("config", "Postgres listens on port 5432"))
    assert back.action is Action.SUPERSEDE  # against 5433, the active one
    assert len(store.list(include_superseded=True)) == 3


def test_most_similar_fact_decides(store: FactStore) -> None:
    store.add(NewFact("config", words("alpha", "bravo", "charlie", "delta", "echo")))
    close = store.add(NewFact("config", words("alpha", "bravo", "charlie", "xray", "yankee")))
    assert close.action is Action.ADD  # jaccard 3/7 with the first: unrelated
    change = store.add(NewFact("config", words("alpha", "bravo", "charlie", "xray", "zulu")))
    assert (change.action, change.previous_id) == (Action.SUPERSEDE, close.fact_id)


def test_a_batch_sees_its_own_facts(store: FactStore) -> None:
    changes = store.apply(
        [
            NewFact("task_state", "The importer handles OpenClaw sessions"),
            NewFact("task_state", "The importer handles OpenClaw sessions."),
        ]
    )
    assert [c.action for c in changes] == [Action.ADD, Action.NONE]


def test_secrets_are_masked_before_storage(store: FactStore) -> None:
    key = "sk-ant-api03-" + "Zx9" * 12
    change = store.add(
        NewFact("config", f"The billing service reads ANTHROPIC_API_KEY={key}", f"key {key}")
    )
    fact = store.get(change.fact_id)
    assert key not in fact.content and "[masked]" in fact.content
    assert fact.context is not None and key not in fact.context
    edited = store.edit(change.fact_id, f"Billing reads the key from the env: token={key}")
    assert key not in edited.content
    new = store.supersede(change.fact_id, f"Billing uses a vault; password: {key}")
    assert key not in new.content
    raw = store.db.execute("SELECT group_concat(content || coalesce(context, '')) FROM facts")
    assert key not in raw.fetchone()[0]
    assert store.search("Zx9Zx9Zx9Zx9*") == []


def test_fts_in_sync_after_update_supersede_and_edit(store: FactStore) -> None:
    first = store.add(NewFact("architecture", "The tangerine service owns billing"))
    store.add(NewFact("architecture", "The tangerine service owns billing and refunds"))
    assert [f.id for f in store.search("refunds")] == [first.fact_id]
    assert_fts_in_sync(store)

    store.edit(first.fact_id, "The clementine service owns billing and refunds")
    assert store.search("tangerine") == []
    assert [f.id for f in store.search("clementine")] == [first.fact_id]
    assert_fts_in_sync(store)

    new = store.supersede(first.fact_id, "The mandarin service owns billing and refunds")
    assert [f.id for f in store.search("mandarin")] == [new.id]
    assert store.search("clementine") == []  # superseded: only with include_superseded
    assert [f.id for f in store.search("clementine", include_superseded=True)] == [first.fact_id]
    assert_fts_in_sync(store)

    store.rebuild_index()
    assert_fts_in_sync(store)


def test_hand_edits(store: FactStore) -> None:
    change = store.add(NewFact("decision", "We use PostgreSQL for billing", session_id="s1"))
    edited = store.edit(change.fact_id, "We use PostgreSQL for the billing database")
    assert edited.edited and edited.content == "We use PostgreSQL for the billing database"
    assert edited.session_id == "s1"
    # a more detailed machine version never rewrites a person's words: it is added beside
    more = store.add(NewFact("decision", "We use PostgreSQL for the billing database, version 16"))
    assert more.action is Action.ADD
    assert store.get(change.fact_id).content == "We use PostgreSQL for the billing database"

    new = store.supersede(change.fact_id, "We use MySQL for billing")
    assert new.edited and new.type == "decision" and new.session_id == "s1"
    assert store.get(change.fact_id).superseded_by == new.id
    with pytest.raises(UsageError, match="already superseded"):
        store.supersede(change.fact_id, "again")
    with pytest.raises(NotFoundError):
        store.edit(999, "nope")
    with pytest.raises(UsageError):
        store.edit(new.id, "   ")


def test_list_filters_for_the_compaction_pane(store: FactStore) -> None:
    a = store.add(NewFact("config", "Port 5432", session_id="s1", conversation_id=7))
    store.add(NewFact("config", "Port 5433", session_id="s1", conversation_id=7))
    store.add(NewFact("issue", "The watcher misses renames", session_id="s2"))
    session = store.list(session_id="s1", include_superseded=True)
    assert len(session) == 2 and any(f.id == a.fact_id and not f.active for f in session)
    assert [f.type for f in store.list(type="issue")] == ["issue"]
    assert len(store.list(conversation_id=7)) == 1
    with pytest.raises(UsageError, match="unknown fact type"):
        store.list(type="gossip")
    with pytest.raises(UsageError):
        store.add(NewFact("gossip", "x y z"))


def test_facts_for_recall(store: FactStore) -> None:
    store.add(NewFact("decision", "We use PostgreSQL for billing", "after the review"))
    store.add(NewFact("config", "The watcher debounces events for 200ms"))
    old = store.add(NewFact("config", "Billing runs on port 5432"))
    store.add(NewFact("config", "Billing runs on port 5433"))
    found = facts_for_recall(store.db, 'which database do we use for billing? (AND OR NEAR"', 5)
    texts = [fact.text for fact in found]
    assert any(t.startswith("We use PostgreSQL for billing (after the review; ") for t in texts)
    assert any("5433" in t for t in texts)
    assert not any("5432" in t for t in texts)  # superseded facts are not recalled
    assert all(fact.kind in ("decision", "config") for fact in found)
    assert old.fact_id not in {fact.id for fact in found}
    assert all(0 <= fact.score <= 1 for fact in found)
    assert facts_for_recall(store.db, "the and of", 5) == []
    assert facts_provider(store.db)("watcher", 3)[0].text.startswith("The watcher debounces")


def test_search_never_fails_on_odd_input(store: FactStore) -> None:
    store.add(NewFact("config", "Port 5432"))
    for query in ['"', "(", "AND", "*", "", "NEAR(", "-", "学习"]:
        assert isinstance(store.search(query), list)


def test_facts_from_before_migration_0005_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite_utils.Database(path)
    migrations.apply(old, stop_before="0005_fact_sources")
    old.execute(
        "INSERT INTO facts (type, content, created_at, updated_at) VALUES (?, ?, ?, ?)",
        ("config", "Billing listens on port 5432", "2026-11-01", "2026-11-01"),
    )
    old.execute("INSERT INTO facts_fts (rowid, content) VALUES (1, 'Billing listens on port 5432')")
    old.conn.commit()
    old.close()
    store = FactStore(connect(path))
    assert store.get(1).source_ts is None
    assert store.add(NewFact("config", "Billing listens on port 5433")).previous_id == 1
    assert_fts_in_sync(store)


def test_a_superseded_fact_cannot_be_edited(store: FactStore) -> None:
    old = store.add(NewFact("config", "Billing listens on port 5432"))
    new = store.add(NewFact("config", "Billing listens on port 5433"))
    assert new.previous_id == old.fact_id
    with pytest.raises(UsageError, match=f"superseded by fact {new.fact_id}; edit that one"):
        store.edit(old.fact_id, "Billing listens on port 6432")
    assert store.get(old.fact_id).content == "Billing listens on port 5432"
    assert not store.get(old.fact_id).edited
    assert_fts_in_sync(store)


@pytest.mark.parametrize(
    "extracted",
    [
        "Billing listens on port 5432",  # would supersede the correction (a number changed)
        "Billing listens on port 5432 behind the pgbouncer pool",  # would update it
        "Billing listens on port 6432",  # the correction itself: already known
    ],
)
def test_re_extracting_the_same_message_keeps_a_hand_edit(store: FactStore, extracted: str) -> None:
    first = NewFact("config", "Billing listens on port 5432", session_id="s1", message_id="m4")
    fact_id = store.add(first).fact_id
    store.edit(fact_id, "Billing listens on port 6432")
    again = store.add(NewFact("config", extracted, session_id="s1", message_id="m4"))
    assert again.action is Action.NONE and again.fact_id == fact_id
    kept = store.get(fact_id)
    assert kept.active and kept.edited and kept.content == "Billing listens on port 6432"
    assert store.count(include_superseded=True) == 1


def test_no_later_extraction_supersedes_or_contradicts_a_hand_edit(store: FactStore) -> None:
    """Issue 22: extraction may add facts, never supersede or contradict a person's edit."""
    fact_id = store.add(NewFact("config", "Billing listens on port 5432", message_id="m4")).fact_id
    store.edit(fact_id, "Billing listens on port 6432")
    for text, message in (("Billing listens on port 5432", "m9"),
                          ("Billing listens on port 7432", None)):  # fmt: skip
        later = store.add(NewFact("config", text, message_id=message))
        assert later.action is Action.NONE and later.fact_id == fact_id
        assert later.reason == "a person's edit stands"
    kept = store.get(fact_id)
    assert kept.active and kept.content == "Billing listens on port 6432"
    assert store.count(include_superseded=True) == 1
    other = store.add(NewFact("config", "The worker pool has eight threads"))
    assert other.action is Action.ADD  # new knowledge is still added


def test_extraction_never_re_adds_what_a_person_replaced(store: FactStore) -> None:
    wrong = store.add(NewFact("decision", "We use MongoDB for the billing ledger")).fact_id
    right = store.supersede(wrong, "Billing moved to PostgreSQL 16 in March")
    for text in ("We use MongoDB for the billing ledger",
                 "We use MongoDB for the billing ledger with three replicas"):  # fmt: skip
        again = store.add(NewFact("decision", text, message_id="m1"))
        assert again.action is Action.NONE and again.reason == "removed by hand"
    assert [f.id for f in store.list()] == [right.id]
    assert store.count(include_superseded=True) == 2
