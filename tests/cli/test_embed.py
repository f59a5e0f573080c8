"""``clawback embed`` and ``clawback search --mode`` in-process (click's CliRunner), with the
deterministic hash embedder configured, so no model is needed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from clawback.cli.main import cli
from click.testing import CliRunner, Result

from ..helpers import cc_assistant, cc_user, corrupt_pages, write_lines

pytest.importorskip("numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[embeddings]\nmodel = "hash"\n')
    src = tmp_path / "src" / "proj"
    write_lines(
        src / "s1.jsonl",
        [
            cc_user("s1", "u1", "tangerine protocol launch checklist"),
            cc_assistant("s1", "a1", [{"type": "text", "text": "the launch checklist is done"}]),
            cc_assistant("s1", "a2", [{"type": "thinking", "thinking": "tangerine secret"}]),
        ],
    )
    assert invoke(home, "ingest", str(tmp_path / "src"), "--source", "claude-code").exit_code == 0
    return home


def invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], catch_exceptions=True)


def hits(result: Result) -> list[dict[str, object]]:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_embed_then_search_each_mode(home: Path) -> None:
    result = invoke(home, "embed", "--json")
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.stdout)
    assert outcome["model"] == "hash-64" and outcome["embedded"] == 2  # not the thinking block
    assert outcome["coverage"]["ratio"] == 1.0
    keyword = hits(invoke(home, "search", "launch checklist", "--mode", "keyword", "--json"))
    assert {h["found_by"] for h in keyword} == {"keyword"}
    semantic = hits(invoke(home, "search", "checklist launch", "--mode", "semantic", "--json"))
    assert semantic and {h["found_by"] for h in semantic} == {"semantic"}
    hybrid = hits(invoke(home, "search", "launch checklist", "--json"))  # default: hybrid
    assert {h["found_by"] for h in hybrid} == {"both"}
    phrase = hits(invoke(home, "search", '"launch checklist"', "--json"))
    assert {h["found_by"] for h in phrase} == {"both"}  # quotes are exact, meaning stays on
    prefix = hits(invoke(home, "search", "launch*", "--json"))
    assert {h["found_by"] for h in prefix} == {"keyword"}  # vectors cannot honour a prefix


def test_search_without_vectors_is_keyword_and_says_so_when_asked(home: Path) -> None:
    plain = invoke(home, "search", "tangerine", "--json")
    assert {h["found_by"] for h in hits(plain)} == {"keyword"}
    assert "embed" not in plain.stderr
    asked = invoke(home, "search", "tangerine", "--mode", "hybrid", "--json")
    assert hits(asked) and "run `clawback embed`" in asked.stderr


def test_a_model_that_cannot_load_degrades_to_keywords_with_one_note(home: Path) -> None:
    assert invoke(home, "embed").exit_code == 0
    (home / "config.toml").write_text('[embeddings]\nmodel = "/nowhere/model.onnx"\n')
    result = invoke(home, "search", "tangerine", "--json")
    assert {h["found_by"] for h in hits(result)} == {"keyword"}
    assert result.stderr.count("\n") == 1 and "no such model file" in result.stderr


def test_off_means_keyword_and_no_note(home: Path) -> None:
    assert invoke(home, "embed").exit_code == 0
    (home / "config.toml").write_text('[embeddings]\nmodel = "none"\n')
    result = invoke(home, "search", "tangerine", "--json")
    assert {h["found_by"] for h in hits(result)} == {"keyword"} and result.stderr == ""


def test_rebuild_and_model_change_embed_everything_again(home: Path) -> None:
    assert json.loads(invoke(home, "embed", "--json").stdout)["embedded"] == 2
    assert json.loads(invoke(home, "embed", "--json").stdout)["embedded"] == 0
    rebuilt = json.loads(invoke(home, "embed", "--rebuild", "--json").stdout)
    assert rebuilt["embedded"] == 2 and rebuilt["rebuilt"]
    changed = json.loads(invoke(home, "embed", "--model", "hash-32", "--json").stdout)
    assert changed["model"] == "hash-32" and changed["embedded"] == 2 and changed["rebuilt"]


def test_health_reports_coverage_and_model(home: Path) -> None:
    before = json.loads(invoke(home, "health", "--json").stdout)["embeddings"]
    assert before["vectors"] == 0 and before["total"] == 2 and before["setting"] == "hash"
    invoke(home, "embed", "--limit", "1")
    after = json.loads(invoke(home, "health", "--json").stdout)["embeddings"]
    assert after["model"] == "hash-64" and after["vectors"] == 1 and after["ratio"] == 0.5
    assert "Embeddings hash-64: 1 of 2 chunks (50%)" in invoke(home, "health").stdout


HOLD_THE_LOCK = """\
import sys
from pathlib import Path
from clawback.core.embeddings.worker import embed_lock
with embed_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes stdin
"""


@pytest.mark.parametrize("as_json", [False, True])
def test_an_embed_started_while_another_runs_waits_for_it(home: Path, as_json: bool) -> None:
    """Issue 31 item 17: a manual `clawback embed` while a hook's queued one runs failed with
    "another clawback process is embedding"; it now waits, says so, and embeds what is left."""
    import subprocess
    import sys
    import threading

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(home / "embed.lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    assert holder.stdin is not None
    threading.Timer(1.0, holder.stdin.close).start()  # the other one finishes a second later
    args = ["embed", "--json"] if as_json else ["embed"]
    result = invoke(home, *args)
    assert holder.wait(30) == 0
    assert result.exit_code == 0, result.output
    if as_json:
        assert json.loads(result.stdout)["embedded"] == 2 and result.stderr == ""
    else:
        assert "Another clawback embed is running" in result.stderr
        assert "Embedded 2 chunks" in result.stdout


def test_a_reindex_keeps_semantic_search_and_its_coverage(home: Path) -> None:
    """A reindex gives every entry a new id; the vectors follow their text, so semantic search
    still finds it and ``embed`` has nothing to redo."""
    src = home.parent / "src"
    write_lines(src / "proj" / "s2.jsonl", [cc_user("s2", "u1", "a second file read later"),
                                            cc_user("s2", "u2", "tangerine protocol launch checklist")])  # fmt: skip
    assert invoke(home, "ingest", str(src)).exit_code == 0
    assert invoke(home, "embed").exit_code == 0
    for rebuild in (("reindex",), ("ingest", str(src), "--reimport")):
        assert invoke(home, *rebuild).exit_code == 0
        semantic = hits(invoke(home, "search", "checklist launch", "--mode", "semantic", "--json"))
        assert semantic and {h["found_by"] for h in semantic} == {"semantic"}
        coverage = json.loads(invoke(home, "health", "--json").stdout)["embeddings"]
        assert (coverage["vectors"], coverage["total"]) == (4, 4)  # the repeated text too
    again = json.loads(invoke(home, "embed", "--json").stdout)
    assert (again["embedded"], again["removed"]) == (0, 0)


def test_health_counts_only_vectors_that_serve_their_text(home: Path) -> None:
    assert invoke(home, "embed").exit_code == 0
    with sqlite3.connect(home / "clawback.db") as db:
        db.execute("UPDATE entries SET text = 'other words' WHERE text LIKE 'the launch%'")
    coverage = json.loads(invoke(home, "health", "--json").stdout)["embeddings"]
    assert (coverage["vectors"], coverage["total"]) == (1, 2)
    assert "1 of 2 chunks (50%)" in invoke(home, "health").stdout


def test_a_damaged_store_is_set_aside_and_search_falls_back_to_keywords(home: Path) -> None:
    assert invoke(home, "embed").exit_code == 0
    corrupt_pages(home / "embeddings.db")
    first = invoke(home, "search", "tangerine", "--mode", "hybrid", "--json")
    assert {h["found_by"] for h in hits(first)} == {"keyword"}
    assert first.stderr.count("\n") == 1 and "damaged" in first.stderr
    assert "set aside as embeddings.db.damaged-" in first.stderr
    assert not (home / "embeddings.db").exists()
    assert [p.name.split("-")[0] for p in home.glob("embeddings.db.damaged-*")] == [
        "embeddings.db.damaged"
    ]
    again = invoke(home, "search", "tangerine", "--json")  # the notice was given once
    assert {h["found_by"] for h in hits(again)} == {"keyword"} and "damaged" not in again.stderr


@pytest.mark.parametrize("args", [(), ("--rebuild",)])
def test_embed_on_a_damaged_store_starts_a_fresh_one(home: Path, args: tuple[str, ...]) -> None:
    assert invoke(home, "embed").exit_code == 0
    corrupt_pages(home / "embeddings.db")
    result = invoke(home, "embed", *args)
    assert result.exit_code == 0, result.output
    assert "set aside" in result.stderr and "fresh store" in result.stderr
    semantic = hits(invoke(home, "search", "checklist launch", "--mode", "semantic", "--json"))
    assert semantic and {h["found_by"] for h in semantic} == {"semantic"}
