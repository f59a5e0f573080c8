"""Installing into Claude Code's settings keeps the person's file: other keys, other hooks on
the same events, key order; installing twice adds nothing; uninstalling removes only clawback's."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from clawback.core.hooks.settings import (
    BACKUP_SUFFIX,
    EVENTS,
    SettingsError,
    hook_command,
    install,
    installed_events,
    is_clawback_command,
    merge_hooks,
    read_settings,
    remove_hooks,
    uninstall,
)
from hypothesis import given, settings
from hypothesis import strategies as st

HOME = Path("/home/u/.clawback")
CLAWBACK = ["/opt/venv/bin/clawback"]
COMMANDS = {event: hook_command(CLAWBACK, HOME, event) for event in EVENTS}
THEIRS = {"type": "command", "command": "~/bin/notify.sh --on-stop", "timeout": 10}


def test_the_command_names_this_clawback_this_home_and_the_event() -> None:
    assert COMMANDS["UserPromptSubmit"] == (
        "/opt/venv/bin/clawback --home /home/u/.clawback hook user-prompt"
    )
    spaced = hook_command(["/opt/my venv/bin/clawback"], Path("/tmp/a b"), "Stop")
    assert spaced == "'/opt/my venv/bin/clawback' --home '/tmp/a b' hook stop"
    assert is_clawback_command(spaced)
    python = hook_command(["/usr/bin/python3", "-m", "clawback.cli"], HOME, "PreCompact")
    assert is_clawback_command(python)
    for theirs in ("~/bin/notify.sh --on-stop", "echo hook stop", "git hook stop", "", "'", None):
        assert not is_clawback_command(theirs)


def test_merge_appends_after_their_hooks_and_keeps_everything_else() -> None:
    mine: dict[str, Any] = {
        "model": "sonnet",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"Stop": [{"matcher": "", "hooks": [THEIRS]}]},
    }
    merged = merge_hooks(mine, COMMANDS)
    assert merged["model"] == "sonnet" and merged["permissions"] == mine["permissions"]
    assert list(merged) == ["model", "permissions", "hooks"]  # key order kept
    assert merged["hooks"]["Stop"][0] == {"matcher": "", "hooks": [THEIRS]}  # theirs first
    assert merged["hooks"]["Stop"][1]["hooks"][0]["command"] == COMMANDS["Stop"]
    assert installed_events(merged) == COMMANDS
    assert mine["hooks"]["Stop"] == [{"matcher": "", "hooks": [THEIRS]}]  # input untouched


def test_a_reinstall_updates_the_command_in_place() -> None:
    old = merge_hooks({}, {e: hook_command(["/old/clawback"], Path("/old"), e) for e in EVENTS})
    new = merge_hooks(old, COMMANDS)
    assert installed_events(new) == COMMANDS
    assert all(len(groups) == 1 for groups in new["hooks"].values())


def test_remove_takes_only_clawbacks_entries() -> None:
    shared = {
        "hooks": {"Stop": [{"hooks": [THEIRS, {"type": "command", "command": COMMANDS["Stop"]}]}]}
    }
    assert remove_hooks(shared) == {"hooks": {"Stop": [{"hooks": [THEIRS]}]}}
    assert remove_hooks({"a": 1}) == {"a": 1}


@pytest.mark.parametrize("bad", [{"hooks": []}, {"hooks": "x"}, {"hooks": {"Stop": {"hooks": []}}}])
def test_a_hooks_table_of_the_wrong_shape_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(SettingsError, match="hooks"):
        merge_hooks(bad, COMMANDS)


# -- the property: install then uninstall gives the file back; install twice adds nothing ------

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
other_hook = st.fixed_dictionaries(
    {
        "type": st.just("command"),
        "command": st.text(min_size=1, max_size=20).filter(lambda c: not is_clawback_command(c)),
    },
    optional={"timeout": st.integers(1, 600)},
)
group = st.fixed_dictionaries(
    {"hooks": st.lists(other_hook, min_size=1, max_size=3)},
    optional={"matcher": st.sampled_from(["", "*", "Bash", "startup|resume"])},
)
event_name = st.sampled_from([*EVENTS, "PostToolUse", "Notification"])
# Empty hook containers are the one thing a round trip does not give back (see the test below).
hooks_table = st.dictionaries(
    event_name, st.lists(group, min_size=1, max_size=3), min_size=1, max_size=4
)
settings_files = st.dictionaries(
    st.text(max_size=10).filter(lambda k: k != "hooks"), json_value, max_size=5
).flatmap(
    lambda other: st.one_of(
        st.just(other), hooks_table.map(lambda table: {**other, "hooks": table})
    )
)


@settings(max_examples=200, deadline=None)
@given(settings_files)
def test_install_uninstall_round_trips(original: dict[str, Any]) -> None:
    installed = merge_hooks(original, COMMANDS)
    assert installed_events(installed) == COMMANDS
    assert merge_hooks(installed, COMMANDS) == installed  # idempotent
    assert remove_hooks(installed) == original  # exactly what was there
    # every hook that was not clawback's is still there, in order
    for event, groups in original.get("hooks", {}).items():
        assert installed["hooks"][event][: len(groups)] == groups


@settings(max_examples=50, deadline=None)
@given(settings_files)
def test_round_trip_through_the_file(
    tmp_path_factory: pytest.TempPathFactory, original: dict[str, Any]
) -> None:
    path = tmp_path_factory.mktemp("s") / "settings.json"
    path.write_text(json.dumps(original))
    assert install(path, COMMANDS).changed
    assert not install(path, COMMANDS).changed
    assert uninstall(path).changed
    assert json.loads(path.read_text()) == original


def test_empty_hook_containers_left_by_the_removal_go_with_it() -> None:
    """Claude Code reads ``"hooks": {}`` and no ``hooks`` alike; what clawback emptied goes."""
    assert remove_hooks(merge_hooks({"hooks": {}}, COMMANDS)) == {}
    assert remove_hooks(merge_hooks({"hooks": {"Stop": []}}, COMMANDS)) == {}
    kept = {"hooks": {"Stop": [], "Notification": [{"hooks": [THEIRS]}]}}
    assert remove_hooks(merge_hooks(kept, COMMANDS)) == {
        "hooks": {"Notification": [{"hooks": [THEIRS]}]}
    }


# -- the file ----------------------------------------------------------------------------------


def test_install_writes_atomically_with_a_backup_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    original = '{\n  "theme": "dark",\n  "env": {"X": "ü"}\n}\n'
    path.write_text(original, encoding="utf-8")
    path.chmod(0o644)
    written = install(path, COMMANDS)
    assert written.backup == path.with_name("settings.json" + BACKUP_SUFFIX)
    assert written.backup.read_text(encoding="utf-8") == original
    assert stat.S_IMODE(written.backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["env"] == {"X": "ü"} and data["theme"] == "dark"
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_new_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "settings.json"
    assert install(path, COMMANDS).backup is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"hooks": {},}', "not valid JSON"),
        ("// a comment\n{}", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"n": NaN}', "not valid JSON"),
        ('{"n": 1e999}', "not valid JSON"),
    ],
)
def test_a_file_that_is_not_a_json_object_is_refused_unchanged(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(SettingsError, match=says):
        install(path, COMMANDS)
    assert path.read_text() == text
    assert list(tmp_path.iterdir()) == [path]


def test_an_empty_file_is_an_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("")
    assert read_settings(path) == {}
    install(path, COMMANDS)
    assert installed_events(read_settings(path)) == COMMANDS
