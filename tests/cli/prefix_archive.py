"""An archive of three sessions whose ids share a long beginning (``ses_stag...``)."""

from __future__ import annotations

from pathlib import Path

from ..cli_runner import run_cli as run
from ..helpers import cc_user, write_lines

SHARED = ["ses_stagA1", "ses_stagB2", "ses_other"]  # ids that share a long beginning


def archive_with_shared_prefixes(tmp_path: Path) -> Path:
    """A home holding the :data:`SHARED` sessions, ingested from ``tmp_path/src``."""
    home = tmp_path / "home"
    for sid in SHARED:
        write_lines(tmp_path / "src" / "proj" / f"{sid}.jsonl", [cc_user(sid, "u1", f"hi {sid}")])
    result = run("ingest", str(tmp_path / "src"), "--source", "claude-code", home=home)
    assert result.returncode == 0, result.stderr
    return home
