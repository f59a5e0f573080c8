"""Issue 31 item 18: no test reads or writes the home of the person running the tests.

``make check`` failed on a machine whose HOME held Claude Code transcripts: a reindex test read
the real ``~/.claude/projects``. Every test now runs with HOME, CLAWBACK_HOME and Claude Code's
folders in temporary ones (``tests/conftest.py``'s autouse ``_isolated_home``), and an audit hook
fails any test that opens, lists or changes a file in the real ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clawback.core.config import load_config
from clawback.core.hooks.settings import settings_path
from clawback.core.ingest.sources import configured_roots
from clawback.core.paths import Paths, default_home

from . import conftest


def test_every_home_a_test_sees_is_a_temporary_one(tmp_path: Path) -> None:
    temporary = Path(str(tmp_path)).parents[1]  # pytest's base folder for this run
    assert Path.home().is_relative_to(temporary)
    assert default_home().is_relative_to(temporary)
    assert "CLAUDE_CONFIG_DIR" not in os.environ
    assert settings_path("user", cwd=tmp_path).is_relative_to(temporary)
    paths = Paths.resolve()
    for root in configured_roots(load_config(paths.config), paths):
        assert root.root.is_relative_to(temporary), root
    for place in conftest.REAL_PLACES:
        assert not Path(place).is_relative_to(temporary)


def test_touching_a_real_place_is_seen(request: pytest.FixtureRequest) -> None:
    """The guard itself: what a test opens or lists in the real Claude Code folder is
    recorded (and the test that did it fails when it ends)."""
    place = Path(conftest.REAL_PLACES[0])
    with pytest.raises(OSError):
        open(place / "projects" / "no-such-session.jsonl", "rb")  # noqa: SIM115
    with pytest.raises(OSError):
        os.listdir(place / "no-such-folder")
    seen = [event for event, path in conftest.TOUCHED if path.startswith(str(place))]
    conftest.TOUCHED.clear()  # this test touched them on purpose
    assert seen == ["open", "os.listdir"]
