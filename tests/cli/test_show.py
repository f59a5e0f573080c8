"""`clawback show` lists the sessions an ambiguous or short prefix could mean."""

from __future__ import annotations

from pathlib import Path

from ..cli_runner import run_cli as run
from .prefix_archive import SHARED, archive_with_shared_prefixes


def test_show_on_an_ambiguous_prefix_lists_the_candidates(tmp_path: Path) -> None:
    home = archive_with_shared_prefixes(tmp_path)
    result = run("show", "ses_stag", home=home)
    assert result.returncode != 0
    assert "ambiguous" in result.stderr
    assert "ses_stagA1" in result.stderr and "ses_stagB2" in result.stderr
    assert "ses_other" not in result.stderr  # "_" is not a wildcard
    assert "Traceback" not in result.stderr


def test_show_on_a_short_prefix_lists_the_candidates_instead_of_no_session(
    tmp_path: Path,
) -> None:
    """Issue 22: ``show ses`` said "no session" though three ids start with it."""
    home = archive_with_shared_prefixes(tmp_path)
    result = run("show", "ses", home=home)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "too short" in result.stderr and result.stderr.count("\n") == 1
    assert all(sid in result.stderr for sid in SHARED)
    assert "no session" in run("show", "zz", home=home).stderr
