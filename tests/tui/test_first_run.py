"""An empty archive says what to do: the folders it would read, how many transcripts are
there, and the keys that index them or start a chat."""

from __future__ import annotations

from pathlib import Path

from clawback.core.home import Home
from clawback.tui.app import make_app
from textual.widgets import Static

from ..helpers import cc_user, write_lines
from .conftest import SIZE
from .pilot import settle


async def test_an_empty_archive_names_the_folders_and_the_keys(tmp_path: Path) -> None:
    claude = tmp_path / "claude-projects"
    write_lines(claude / "proj" / "s1.jsonl", [cc_user("s1", "u1", "hello")])
    write_lines(claude / "proj" / "s2.jsonl", [cc_user("s2", "u1", "again")])
    home_dir = tmp_path / "home"
    home_dir.mkdir()
    (home_dir / "config.toml").write_text(
        f'[sources]\nclaude_code_path = "{claude}"\nopenclaw_path = "{tmp_path / "none"}"\n'
    )
    home = Home.open(home_dir)
    app = make_app(home, watch=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("escape")  # the offer to index them: not now
            await settle(pilot)
            hint = str(app.query_one("#sessions-empty", Static).render())
            assert f"Claude Code: {claude} (2 transcripts)" in hint
            assert "OpenClaw:" in hint and "(folder not found)" in hint
            assert "Ctrl+N" in hint and "Ingest sources" in hint
    finally:
        home.close()
