"""``clawback usage`` (issue 36 item 3): groupings, dates, filters, JSON, totals, unknown prices."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..cli_runner import run_cli
from ..helpers import cc_assistant, cc_user, write_lines

UTC = {"TZ": "UTC"}  # days are local days: these tests read them in UTC


def _reply(session: str, uuid: str, ts: str, model: str, output: int) -> dict:
    line = cc_assistant(session, uuid, [{"type": "text", "text": f"done {uuid}"}], ts)
    line["message"]["model"] = model
    line["message"]["usage"] = {
        "input_tokens": 100,
        "output_tokens": output,
        "cache_read_input_tokens": 900,
        "cache_creation_input_tokens": 0,
    }
    line["requestId"] = f"req_{uuid}"
    return line


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    write_lines(
        tmp_path / "src" / "-home-u-garden" / "s1.jsonl",
        [
            cc_user("s1", "u1", "Plan the garden beds", ts="2026-05-01T09:00:00.000Z"),
            _reply("s1", "a1", "2026-05-01T09:00:05.000Z", "claude-sonnet-4-5", 1_000),
            _reply("s1", "a2", "2026-05-02T09:00:05.000Z", "claude-sonnet-4-5", 2_000),
        ],
    )
    write_lines(
        tmp_path / "src" / "-home-u-garden" / "s2.jsonl",
        [
            cc_user("s2", "u2", "Try the new model", ts="2026-05-02T10:00:00.000Z"),
            _reply("s2", "b1", "2026-05-02T10:00:05.000Z", "mystery-model", 50),
        ],
    )
    done = run_cli("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home)
    assert done.returncode == 0, done.stderr
    yield home


def test_by_day_lists_each_day_and_the_total(home: Path) -> None:
    result = run_cli("usage", home=home, env=UTC)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["Day", "Input", "Output"]
    assert lines[1].split()[:3] == ["2026-05-01", "100", "1,000"]
    assert lines[2].split()[:3] == ["2026-05-02", "200", "2,050"]
    assert lines[3].startswith("Total") and lines[3].endswith("+?")  # part of it has no price
    # Sonnet 4.5: 100 in at $3, 1,000 out at $15, 900 cache reads at $0.30 per million.
    assert lines[1].split()[-1] == "$0.02"
    assert "cost unknown for mystery-model" in result.stderr


def test_json_rows_and_a_model_without_a_price(home: Path) -> None:
    result = run_cli("usage", "--by", "model", "--json", home=home, env=UTC)
    assert result.returncode == 0, result.stderr
    rows = {row["model"]: row for row in json.loads(result.stdout)}
    assert rows["mystery-model"]["cost_usd"] is None
    assert rows["mystery-model"]["output_tokens"] == 50
    sonnet = rows["claude-sonnet-4-5"]
    assert sonnet["cost_usd"] == pytest.approx((200 * 3 + 3_000 * 15 + 1_800 * 0.3) / 1e6)
    assert sonnet["cache_read_share"] == 0.9
    for row in rows.values():
        assert {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                "cost_usd"} <= set(row)  # fmt: skip


def test_sessions_projects_and_filters(home: Path) -> None:
    sessions = json.loads(run_cli("usage", "--by", "session", "--json", home=home).stdout)
    assert [row["session_id"] for row in sessions] == ["s1", "s2"]
    assert sessions[0]["title"] == "Plan the garden beds"
    text = run_cli("usage", "--by", "session", home=home).stdout
    assert "Plan the garden beds" in text
    projects = json.loads(run_cli("usage", "--by", "project", "--json", home=home).stdout)
    assert [row["project"] for row in projects] == ["/home/u/proj"]
    days = run_cli("usage", "--since", "2026-05-02", "--until", "2026-05-02", "--json",
                   home=home, env=UTC)  # fmt: skip
    assert [row["period"] for row in json.loads(days.stdout)] == ["2026-05-02"]
    model = run_cli("usage", "--model", "mystery-model", "--json", home=home, env=UTC)
    assert [row["output_tokens"] for row in json.loads(model.stdout)] == [50]
    none = run_cli("usage", "--project", "elsewhere", home=home)
    assert none.returncode == 0 and "No usage matches." in none.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--since", "2026-02-30"), "not a date"),
        (("--since", "2026-05-03", "--until", "2026-05-01"), "nothing can match"),
    ],
)
def test_bad_dates_are_one_clear_error(home: Path, args: tuple[str, ...], message: str) -> None:
    result = run_cli("usage", *args, home=home)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_an_empty_home_says_so(tmp_path: Path) -> None:
    result = run_cli("usage", home=tmp_path / "empty")
    assert result.returncode == 0
    assert "No usage recorded yet." in result.stderr
    assert json.loads(run_cli("usage", "--json", home=tmp_path / "empty").stdout) == []


def test_a_bad_price_in_the_config_is_one_line(home: Path) -> None:
    (home / "config.toml").write_text('[usage]\nprices = ["mystery-model=cheap"]\n')
    result = run_cli("usage", home=home)
    assert result.returncode != 0
    assert "usage.prices" in result.stderr and "Traceback" not in result.stderr
    (home / "config.toml").write_text('[usage]\nprices = ["mystery-model=1,10"]\n')
    rows = json.loads(run_cli("usage", "--by", "model", "--json", home=home).stdout)
    priced = {row["model"]: row["cost_usd"] for row in rows}
    assert priced["mystery-model"] == pytest.approx((100 * 1 + 50 * 10 + 900 * 0.1) / 1e6)


def test_sessions_and_show_json_carry_each_sessions_usage(home: Path) -> None:
    listed = {row["id"]: row for row in json.loads(run_cli("sessions", "--json", home=home).stdout)}
    garden = listed["s1"]["usage"]
    assert (garden["input_tokens"], garden["output_tokens"]) == (200, 3_000)
    assert garden["cost_usd"] == pytest.approx((200 * 3 + 3_000 * 15 + 1_800 * 0.3) / 1e6)
    assert listed["s2"]["usage"]["cost_usd"] is None  # mystery-model has no price
    shown = json.loads(run_cli("show", "s1", "--format", "json", home=home).stdout)
    assert shown["session"]["usage"] == garden


def test_a_chats_usage_is_what_its_transcript_says(tmp_path: Path) -> None:
    """One reading: `clawback usage` and `sessions --json` count a chat's turns exactly as its
    transcript's reply lines say (tokens, and the cost `claude` reported), as `show` does."""
    from .test_chat import run as chat

    home = tmp_path / "home"
    fake = json.dumps({"input": 40, "output": 60, "cache_read": 900, "cache_write": 60})
    first = json.loads(chat("chat", "--json", "hello", home=home, usage=fake).stdout)
    second = json.loads(chat("chat", "--json", "again", home=home, usage=fake).stdout)
    session = first["session_id"]
    shown = json.loads(run_cli("show", session, "--format", "json", home=home).stdout)
    spent = shown["session"]["usage"]
    (row,) = json.loads(run_cli("usage", "--by", "session", "--json", home=home).stdout)
    listed = {s["id"]: s for s in json.loads(run_cli("sessions", "--json", home=home).stdout)}
    kinds = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    for counted in (row, listed[session]["usage"]):
        assert {k: counted[k] for k in kinds} == {k: spent[k] for k in kinds}
        assert counted["cost_usd"] == pytest.approx(spent["cost_usd"], abs=1e-6)
        assert counted["cost_usd"] == pytest.approx(first["cost_usd"] + second["cost_usd"])
    assert row["session_id"] == session and row["responses"] == spent["turns"] == 2
