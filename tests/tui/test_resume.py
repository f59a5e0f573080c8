"""One key on a Claude Code session (in the list or a search hit) suspends the app, runs
`claude --resume <id>` in the session's folder, and comes back to the same place; on a deleted
session the same key offers to restore it first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from clawback.core.archive.restore import project_folder
from clawback.core.home import Home
from clawback.tui.app import ClawbackApp, make_app
from clawback.tui.screens.dialogs import ChoiceScreen
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from ..fake_claude.fixtures import FAKE_CLAUDE
from ..helpers import cc_assistant, cc_user, write_lines
from .conftest import SIZE
from .pilot import settle, until

SID = "3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b"


@pytest.fixture
def suspended(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The headless driver made suspendable, recording what the app asks of the terminal."""
    calls: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))
    monkeypatch.setattr(
        HeadlessDriver, "suspend_application_mode", lambda self: calls.append("suspend")
    )
    monkeypatch.setattr(
        HeadlessDriver, "resume_application_mode", lambda self: calls.append("resume")
    )
    return calls


@dataclass
class World:
    """A home whose one Claude Code session ran in ``project``, and where the fake claude logs."""

    home: Home
    project: Path
    transcript: Path
    log: Path


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    user = tmp_path / "user"
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    projects = user / ".claude" / "projects"
    lines = [
        cc_user(SID, "u1", "why does the pelican benchmark flake"),
        cc_assistant(SID, "a1", [{"type": "text", "text": "a race in the fixture"}]),
    ]
    for line in lines:
        line["cwd"] = str(project)
    transcript = projects / project_folder(str(project)) / f"{SID}.jsonl"
    write_lines(transcript, lines)
    log = tmp_path / "claude-calls.jsonl"
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("CLAWBACK_CLAUDE", str(FAKE_CLAUDE))
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    home = Home.open(tmp_path / "clawback")
    home.config.sources.claude_code_path = str(projects)
    home.config.sources.openclaw = False
    home.ingest_all()
    yield World(home, project, transcript, log)
    home.close()


def calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def on_first_session(app: ClawbackApp, pilot: Pilot[Any]) -> OptionList:
    """The session list, focused, its first session highlighted."""
    await settle(pilot)
    listing = app.query_one("#session-list", OptionList)
    listing.focus()
    listing.highlighted = 0
    return listing


async def test_the_key_on_a_session_suspends_runs_claude_and_comes_back(
    world: World, suspended: list[str]
) -> None:
    app: ClawbackApp = make_app(world.home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        listing = await on_first_session(app, pilot)
        await settle(pilot)
        assert "Resume" in {b.binding.description for b in app.active_bindings.values()}
        await pilot.press("ctrl+r")
        await settle(pilot)
        [call] = calls(world.log)
        assert call["argv"] == [f"--resume={SID}"]
        assert call["cwd"] == str(world.project)
        assert suspended == ["suspend", "resume"]
        # Back where it was.
        assert app.focused is listing and listing.highlighted == 0
        assert app.screen is app.screen_stack[0]


async def test_the_key_on_a_search_hit_resumes_its_session(
    world: World, suspended: list[str]
) -> None:
    app: ClawbackApp = make_app(world.home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        await pilot.press(*"pelican")
        results = app.query_one("#search-results", OptionList)
        await until(pilot, lambda: results.option_count > 0)
        await settle(pilot)
        await pilot.press("ctrl+r")  # from the search box, on the highlighted hit
        await settle(pilot)
        [call] = calls(world.log)
        assert call["argv"] == [f"--resume={SID}"] and call["cwd"] == str(world.project)
        assert suspended == ["suspend", "resume"]
        assert isinstance(app.focused, Input) and app.focused.value == "pelican"


async def test_on_a_deleted_session_the_key_offers_restore_then_resumes(
    world: World, suspended: list[str]
) -> None:
    transcript = world.transcript
    original = transcript.read_bytes()
    transcript.unlink()
    world.home.ingest_all()
    app: ClawbackApp = make_app(world.home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_first_session(app, pilot)
        await settle(pilot)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert "deleted this session's transcript" in app.screen.question  # type: ignore[attr-defined]
        assert not calls(world.log) and suspended == []
        await pilot.press("enter")  # "Restore and resume"
        await settle(pilot)
        assert transcript.read_bytes() == original
        [call] = calls(world.log)
        assert call["argv"] == [f"--resume={SID}"]
        assert suspended == ["suspend", "resume"]


async def test_without_a_terminal_to_hand_over_it_says_what_to_run(
    world: World,
) -> None:
    app: ClawbackApp = make_app(world.home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_first_session(app, pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        [note] = [n.message for n in app._notifications]
        assert f"clawback resume {SID}" in note
        assert not calls(world.log)


async def test_without_claude_the_key_says_so_and_never_hands_the_terminal_over(
    world: World, suspended: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 31 item 16: on a real terminal the app hung for good (blank screen, Ctrl+Q
    ignored): running a missing ``claude`` failed inside ``suspend()``. It is checked first."""
    monkeypatch.setenv("CLAWBACK_CLAUDE", str(tmp_path / "no-such-claude"))
    app: ClawbackApp = make_app(world.home, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_first_session(app, pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert suspended == []  # the terminal stayed the app's
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert errors and "Claude Code is not installed or not on PATH" in errors[-1]
        await pilot.press("ctrl+f")  # and it still answers keys
        await settle(pilot)
        assert app.focused is app.query_one("#search-input", Input)
    assert calls(world.log) == []
