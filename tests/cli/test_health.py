"""`clawback health` names every reason a line was skipped, and every line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import run_cli as run
from tests.helpers import cc_user


def test_health_lists_every_skip_reason_and_line(tmp_path: Path) -> None:
    """Issue 22: health showed 10 of 12 reasons and 10 of the lines."""
    lines = [json.dumps(cc_user("s", f"u{i}", f"line {i}")) for i in range(3)]
    lines += [json.dumps({"type": f"future-kind-{i}", "uuid": f"x{i}"}) for i in range(12)]
    lines += ["{not json"] * 6
    path = tmp_path / "src" / "proj" / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")
    home = tmp_path / "home"
    assert (
        run("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home).returncode == 0
    )
    shown = run("health", home=home).stdout
    report = json.loads(run("health", "--json", home=home).stdout)
    assert len(report["skipped_reasons"]) == 13
    assert all(reason in shown for reason in report["skipped_reasons"])
    assert shown.count(f"{path}:") == report["skipped_lines"] == 18
