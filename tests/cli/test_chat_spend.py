"""What a chat costs, as the command line shows it: each turn's tokens in ``--json``, and a
session's totals in ``show --json``, added up from its transcript."""

from __future__ import annotations

import json
from pathlib import Path

from clawback.core.chat.spend import SessionSpend, describe_turn, usage_json, usage_of
from clawback.core.claude.events import Usage

from .test_chat import run, transcript

USAGE = json.dumps({"input": 40, "output": 60, "cache_read": 900, "cache_write": 60})


def test_each_reply_line_keeps_its_tokens_and_cost(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = run("chat", "--json", "hello", home=home, usage=USAGE)
    turn = json.loads(done.stdout)
    assert turn["usage"] == {
        "input_tokens": 40, "output_tokens": 60, "cache_read_tokens": 900,
        "cache_write_tokens": 60, "total_tokens": 1000, "cache_read_share": 0.9,
    }  # fmt: skip
    reply = next(line for line in transcript(home) if line.get("role") == "assistant")
    assert reply["usage"]["cache_read_input_tokens"] == 900
    assert reply["usage"]["cost_usd"] == round(turn["cost_usd"], 6) > 0


def test_show_json_carries_a_chat_sessions_totals(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = json.loads(run("chat", "--json", "hello", home=home, usage=USAGE).stdout)
    second = json.loads(run("chat", "--json", "again", home=home, usage=USAGE).stdout)
    shown = json.loads(run("show", first["session_id"], "--format", "json", home=home).stdout)
    totals = shown["session"]["usage"]
    assert totals == {
        "turns": 2, "input_tokens": 80, "output_tokens": 120, "cache_read_tokens": 1800,
        "cache_write_tokens": 120, "cache_read_share": 0.9,
        "cost_usd": round(first["cost_usd"] + second["cost_usd"], 6),
    }  # fmt: skip


def test_usage_read_back_tolerates_odd_lines() -> None:
    assert usage_of(None) == (Usage(), 0.0)
    assert usage_of({"input_tokens": "x", "cost_usd": True}) == (Usage(), 0.0)
    assert usage_of(usage_json(Usage(1, 2, 3, 4), 0.5)) == (Usage(1, 2, 3, 4), 0.5)


def test_the_figures_a_person_reads() -> None:
    spend = SessionSpend().plus(Usage(1_204, 312, 45_310, 850), 0.021)
    assert describe_turn(Usage(1_204, 312, 45_310, 850), 0.021, spend) == (
        "turn: 1,204 in · 45,310 cache read (96%) · 850 cache write · 312 out · $0.0210"
        " · session: 1 turn, 96% from the cache, $0.0210"
    )
    assert "45.3k cache read" in describe_turn(Usage(1_204, 312, 45_310, 850), 0.0, short=True)
