"""``clawback facts`` and ``facts edit|supersede``, end to end (in-process, see ``cli_runner``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawback.core.home import Home
from clawback.core.memory.facts import FactStore, NewFact

from .test_memory import one_error_line, run


@pytest.fixture
def facts_home(tmp_path: Path) -> Path:
    home = tmp_path / "h"
    opened = Home.open(home)
    store = FactStore(opened.db)
    store.add(NewFact("config", "Billing listens on port 5432", session_id="s1"))
    store.add(NewFact("config", "Billing listens on port 5433", session_id="s1"))  # supersedes
    store.add(NewFact("decision", "We use PostgreSQL for billing", "review", session_id="s2"))
    opened.close()
    return home


def test_facts_list_type_all_json(facts_home: Path) -> None:
    active = json.loads(run("facts", "--json", home=facts_home).stdout)
    assert [f["content"] for f in active] == [
        "We use PostgreSQL for billing",
        "Billing listens on port 5433",
    ]
    assert {"id", "type", "content", "context", "session_id", "message_id", "superseded_by",
            "edited", "created_at", "source_ts"} <= set(active[0])  # fmt: skip
    everything = json.loads(run("facts", "--all", "--json", home=facts_home).stdout)
    assert len(everything) == 3
    (old,) = [f for f in everything if f["superseded_by"] is not None]
    assert old["content"] == "Billing listens on port 5432"
    configs = json.loads(
        run("facts", "--type", "config", "--all", "--json", home=facts_home).stdout
    )
    assert {f["type"] for f in configs} == {"config"} and len(configs) == 2
    found = json.loads(run("facts", "--search", "postgres*", "--json", home=facts_home).stdout)
    assert [f["type"] for f in found] == ["decision"]

    text = run("facts", "--all", home=facts_home)
    assert text.returncode == 0 and "superseded by" in text.stdout and "(review)" in text.stdout
    assert run("facts", "--type", "gossip", home=facts_home).returncode == 2


def test_facts_edit_and_supersede(facts_home: Path) -> None:
    edited = run(
        "facts", "edit", "3", "We use PostgreSQL 16 for billing", "--json", home=facts_home
    )
    assert edited.returncode == 0, edited.stderr
    fact = json.loads(edited.stdout)
    assert fact["edited"] is True and fact["content"] == "We use PostgreSQL 16 for billing"

    replaced = run("facts", "supersede", "3", "We use MySQL for billing", "--json", home=facts_home)
    assert replaced.returncode == 0, replaced.stderr
    data = json.loads(replaced.stdout)
    assert data["superseded"]["superseded_by"] == data["fact"]["id"]
    assert data["fact"]["edited"] is True and data["fact"]["type"] == "decision"
    active = json.loads(run("facts", "--type", "decision", "--json", home=facts_home).stdout)
    assert [f["content"] for f in active] == ["We use MySQL for billing"]

    assert "already superseded" in one_error_line(
        run("facts", "supersede", "3", "again", home=facts_home)
    )
    assert "no fact 99" in one_error_line(run("facts", "edit", "99", "x", home=facts_home))
