"""The ``clawback`` command: JSON contracts, errors as one line, exit codes.

Calls run in-process (:func:`tests.cli_runner.run_cli`); ``test_the_installed_script_*`` runs
the console script itself.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_runner import CLAWBACK
from tests.cli_runner import run_cli as run
from tests.helpers import cc_user, write_lines


def test_the_installed_script_runs_and_exits_with_the_codes(tmp_path: Path) -> None:
    """The console script itself: its entry point, exit codes and one-line errors."""
    env = {**os.environ, "CLAWBACK_HOME": str(tmp_path)}

    def script(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CLAWBACK, *args], capture_output=True, text=True, env=env,
                              timeout=60)  # fmt: skip

    version = script("--version")
    assert version.returncode == 0 and version.stdout.startswith("clawback, version ")
    missing = script("show", "no-such-session")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1 and "no session" in missing.stderr
    (tmp_path / "config.toml").write_text("[archive\n")
    bad = script("sessions")
    assert bad.returncode == 2 and "invalid TOML" in bad.stderr and "Traceback" not in bad.stderr
    usage = script("search")
    assert usage.returncode == 2 and "Missing argument" in usage.stderr


def test_version(tmp_path: Path) -> None:
    result = run("--version", home=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("clawback, version ")


def test_ingest_and_search_json_contract(tmp_path: Path) -> None:
    src = tmp_path / "src" / "proj"
    write_lines(src / "s1.jsonl", [cc_user("s1", "u1", "the tangerine protocol is ready")])
    write_lines(src / "s2.jsonl", [cc_user("s2", "u1", f"unrelated note {i}") for i in range(5)])
    result = run(
        "ingest", str(tmp_path / "src"), "--source", "claude-code", "--json", home=tmp_path / "h"
    )
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert {"files", "entries", "skipped_lines", "seconds"} <= set(stats)
    assert stats["files"] == 2 and stats["entries"] == 6
    result = run("search", "tangerine", "--json", home=tmp_path / "h")
    assert result.returncode == 0, result.stderr
    (hit,) = json.loads(result.stdout)
    for key in (
        "session_id",
        "source",
        "role",
        "kind",
        "timestamp",
        "snippet",
        "score",
        "file",
        "line",
    ):
        assert key in hit
    assert hit["session_id"] == "s1" and hit["line"] == 1 and hit["source"] == "claude-code"
    assert "<mark>tangerine</mark>" in hit["snippet"]
    assert 0 < hit["score"] <= 1
    result = run("search", "is the tangerine protocol ready?", "--json", home=tmp_path / "h")
    (hit,) = json.loads(result.stdout)
    assert hit["held"] == 1.0  # a question: the share of its words the hit holds
    # The home is private.
    assert (tmp_path / "h").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "h" / "clawback.db").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "query", ['"', "(", "AND", ":", "*", "NEAR(", "a OR", "-", '"unbalanced']
)  # an empty query is a usage error (tests/cli/test_search_input.py)
def test_odd_queries_never_fail(tmp_path: Path, query: str) -> None:
    result = run("search", query, "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_bad_config_is_one_clear_line(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "config.toml").write_text('[archive]\nconversation_gap_minutes = "soon"\n')
    result = run("sessions", home=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "config.toml, line 2: archive.conversation_gap_minutes" in result.stderr
    (tmp_path / "config.toml").write_text("[archive\n")
    result = run("sessions", home=tmp_path)
    assert result.returncode == 2 and "invalid TOML" in result.stderr and "line 1" in result.stderr


def test_errors_are_one_line_and_nonzero(tmp_path: Path) -> None:
    result = run("show", "no-such-session", home=tmp_path)
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0 and "no session" in result.stderr
    result = run("ingest", str(tmp_path / "nope"), home=tmp_path)
    assert result.returncode != 0 and "no such file" in result.stderr
    result = run("search", "x", "--since", "yesterday-ish", home=tmp_path)
    assert result.returncode != 0 and "not a date" in result.stderr


def test_demo_sessions_show_health(tmp_path: Path) -> None:
    result = run("demo", "--ingest-only", home=tmp_path)
    assert result.returncode == 0, result.stderr
    home = Path(result.stdout.strip())
    sessions = json.loads(run("sessions", "--json", home=home).stdout)
    assert {s["source"] for s in sessions} == {"claude-code", "openclaw", "native"}
    titled = {s["title"] for s in sessions}
    assert "Trip planning with Alice" in titled and "memory design" in titled
    kyoto = next(s for s in sessions if s["title"] == "Trip planning with Alice")
    markdown = run("show", kyoto["id"][:8], home=home).stdout
    assert markdown.startswith("# Trip planning with Alice") and "Sakura Terrace" in markdown
    shown = json.loads(run("show", kyoto["id"], "--format", "json", home=home).stdout)
    assert shown["session"]["id"] == kyoto["id"] and len(shown["messages"]) == 4
    health = json.loads(run("health", "--json", home=home).stdout)
    assert health["sources"]["claude-code"]["sessions"] == 3
    assert health["stuck_ingesting"] == []
    assert "claude_path" in health
    convs = json.loads(run("conversations", "--json", home=home).stdout)
    assert convs and {"id", "status", "message_count", "session_id"} <= set(convs[0])
