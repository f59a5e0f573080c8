"""`clawback demo` keeps one demo home, and `--reset` starts it over."""

from __future__ import annotations

import json
from pathlib import Path

from ..cli_runner import run_cli as run


def test_demo_reuses_one_home_and_reset_starts_over(tmp_path: Path) -> None:
    first = run("demo", "--ingest-only", home=tmp_path)
    assert first.returncode == 0, first.stderr
    demo = Path(first.stdout.strip())
    assert demo == tmp_path.resolve() / "demo"
    marker = demo / "workspace" / "tried.md"
    marker.write_text("something I tried")
    again = run("demo", "--ingest-only", home=tmp_path)
    assert Path(again.stdout.strip()) == demo and marker.exists()  # the same home, kept
    reset = run("demo", "--ingest-only", "--reset", home=tmp_path)
    assert Path(reset.stdout.strip()) == demo and not marker.exists()
    sessions = json.loads(run("sessions", "--json", home=demo).stdout)
    assert len(sessions) == 6
