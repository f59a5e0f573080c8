"""The rules of clawback's entries in Claude Code's settings: only entries clawback wrote are
changed (marked, or exactly the old form), everything else comes back byte for byte, installing
twice adds nothing, and an uninstall gives back the text as it was before the install."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from clawback.core.hooks.settings import (
    EVENTS,
    MARK,
    SettingsError,
    command_home,
    hook_command,
    installed_events,
    is_ours,
    merge_hooks,
    remove_hooks,
)
from clawback.core.jsonedit import MAX_DEPTH
from hypothesis import given, settings
from hypothesis import strategies as st

HOME = Path("/home/u/.clawback")
CLAWBACK = ["/opt/venv/bin/clawback"]
COMMANDS = {event: hook_command(CLAWBACK, HOME, event) for event in EVENTS}
THEIRS = {"type": "command", "command": "~/bin/notify.sh --on-stop", "timeout": 10}


def old_command(runner: list[str], home: str, event: str) -> str:
    """What clawback wrote before its entries were marked."""
    return " ".join(shlex.quote(w) for w in [*runner, "--home", home, "hook", EVENTS[event]])


def old_entry(runner: list[str], home: str, event: str) -> dict[str, Any]:
    return {"type": "command", "command": old_command(runner, home, event), "timeout": 30}


def test_the_command_names_this_clawback_this_home_the_event_and_the_mark() -> None:
    assert COMMANDS["UserPromptSubmit"] == (
        f"/opt/venv/bin/clawback --home /home/u/.clawback hook user-prompt {MARK}"
    )
    spaced = hook_command(["/opt/my venv/bin/clawback"], Path("/tmp/a b"), "Stop")
    assert spaced == f"'/opt/my venv/bin/clawback' --home '/tmp/a b' hook stop {MARK}"
    assert shlex.split(spaced, comments=True)[-1] == "stop"  # the mark is a shell comment
    assert is_ours({"command": spaced}, "Stop") and command_home(spaced, "Stop") == "/tmp/a b"
    python = hook_command(["/usr/bin/python3", "-m", "clawback.cli"], HOME, "PreCompact")
    assert is_ours({"command": python}, "PreCompact")


@pytest.mark.parametrize(
    "command",
    [
        "nice -n 10 clawback --home /srv/team hook stop",
        "my-audit --tool clawback hook stop",
        "clawback --home /srv/team hook stop",  # not the absolute clawback clawback writes
        "/usr/bin/clawback --home /srv/team hook stop; rm -rf ~/x",
        "/usr/bin/clawback --home /srv/team hook stop --verbose",
        "/usr/bin/clawback --home srv hook stop",  # a relative home
        "/usr/bin/clawback-dev --home /srv/team hook stop",
        "~/bin/notify.sh --on-stop",
        "echo hook stop",
        "'",
        "",
        f"nice /usr/bin/clawback --home /srv hook stop {MARK}",  # the mark after another command
    ],
)
def test_a_persons_own_command_is_never_clawbacks(command: str) -> None:
    for hook in ({"type": "command", "command": command},
                 {"type": "command", "command": command, "timeout": 30}):  # fmt: skip
        assert not is_ours(hook, "Stop")


def test_the_old_unmarked_entries_are_known_only_in_their_exact_form() -> None:
    runner, home = ["/opt/venv/bin/clawback"], "/home/u/.clawback"
    assert is_ours(old_entry(runner, home, "Stop"), "Stop")
    assert is_ours(old_entry(["/usr/bin/python3", "-m", "clawback.cli"], home, "Stop"), "Stop")
    assert is_ours(old_entry(["/opt/my venv/bin/clawback"], "/a b", "Stop"), "Stop")
    entry = old_entry(runner, home, "Stop")
    assert not is_ours(entry, "SessionEnd")  # under another event
    assert not is_ours({**entry, "timeout": 10}, "Stop")
    assert not is_ours({**entry, "statusMessage": "mine"}, "Stop")
    assert not is_ours({"type": "command", "command": entry["command"]}, "Stop")
    spaced = {**entry, "command": entry["command"].replace(" hook", "  hook")}
    assert not is_ours(spaced, "Stop")  # quoted otherwise than clawback quoted it
    assert not is_ours({**entry, "command": "'/opt/venv/bin/clawback' " + entry["command"][23:]},
                       "Stop")  # fmt: skip


def pretty(value: Any, indent: int | str = 2) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False) + "\n"


def test_hand_written_entries_for_two_homes_are_left_as_they_are() -> None:
    """Issue 31 item 2: they were rewritten to this home's command, merged into one, and an
    uninstall left ``{}``."""
    theirs = pretty({
        "hooks": {
            "Stop": [{"hooks": [
                {"type": "command", "command": "nice -n 10 clawback --home /srv/team hook stop"},
                {"type": "command", "command": "clawback --home /srv/other hook stop"},
            ]}],
            "UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": "my-audit --tool clawback hook user-prompt"}]}],
        }
    })  # fmt: skip
    merged = merge_hooks(theirs, COMMANDS)
    data = json.loads(merged.text)
    assert data["hooks"]["Stop"][0] == json.loads(theirs)["hooks"]["Stop"][0]
    assert data["hooks"]["Stop"][1] == {"hooks": [{"type": "command",
                                                   "command": COMMANDS["Stop"], "timeout": 30}]}  # fmt: skip
    assert installed_events(json.loads(merged.text)) == COMMANDS
    assert remove_hooks(merged.text, created=merged.created) == theirs
    assert remove_hooks(theirs) == theirs  # nothing of theirs is clawback's to remove


def test_an_old_install_is_upgraded_in_place_and_uninstalled_cleanly() -> None:
    old_runner, old_home = ["/old/venv/bin/clawback"], "/old/home"
    theirs_then_old = pretty({
        "model": "opus",
        "hooks": {event: [{"hooks": [THEIRS]}, {"hooks": [old_entry(old_runner, old_home, event)]}]
                  for event in EVENTS},
    })  # fmt: skip
    merged = merge_hooks(theirs_then_old, COMMANDS)
    assert installed_events(json.loads(merged.text)) == COMMANDS
    assert all(len(groups) == 2 for groups in json.loads(merged.text)["hooks"].values())
    assert merge_hooks(merged.text, COMMANDS).text == merged.text
    # Nothing tells what the old install created, so what the removal empties goes (as before).
    removed = json.loads(remove_hooks(merged.text))
    assert removed == {"model": "opus", "hooks": {e: [{"hooks": [THEIRS]}] for e in EVENTS}}
    only_old = pretty({"hooks": {e: [{"hooks": [old_entry(old_runner, old_home, e)]}]
                                 for e in EVENTS}})  # fmt: skip
    assert remove_hooks(only_old) == "{}\n"


def test_a_reinstall_updates_the_command_in_place_and_drops_a_second_copy() -> None:
    old = merge_hooks("{}", {e: hook_command(["/old/clawback"], Path("/old"), e) for e in EVENTS})
    doubled = json.loads(old.text)
    doubled["hooks"]["Stop"].append(doubled["hooks"]["Stop"][0])
    new = merge_hooks(pretty(doubled), COMMANDS)
    assert installed_events(json.loads(new.text)) == COMMANDS
    assert all(len(groups) == 1 for groups in json.loads(new.text)["hooks"].values())
    assert not new.fresh and new.created == frozenset()


@pytest.mark.parametrize(
    "text",
    [
        # the cases: an empty table, number spellings, key order, indentation
        '{\n  "hooks": {},\n  "cleanupPeriodDays": 1.50,\n  "big": 1e2\n}\n',
        '{\n    "z": 1E+2,\n    "a": [1.0, -0.0, 10000000000000000000001],\n    "hooks": {}\n}',
        '{\n\t"env": {"A": "caf\\u00e9 ✓", "B": "\\ud800 lone"},\n\t"hooks": {\n\t\t"Stop": []\n\t}\n}\n',
        '{"a":1,"hooks":{"Notification":[{"hooks":[{"type":"command","command":"say hi"}]}]}}',
        '  {  "spaces" : [ 1 , 2 ] }  \n\n',
        "{}",
        "{}\n",
    ],
)
def test_install_then_uninstall_gives_back_every_byte(text: str) -> None:
    merged = merge_hooks(text, COMMANDS)
    assert installed_events(json.loads(merged.text)) == COMMANDS
    assert merge_hooks(merged.text, COMMANDS).text == merged.text  # installing twice adds nothing
    assert remove_hooks(merged.text, created=merged.created) == text


def test_new_entries_follow_the_files_indentation() -> None:
    tabbed = merge_hooks('{\n\t"model": "opus"\n}\n', {"Stop": COMMANDS["Stop"]}).text
    assert '\n\t"hooks": {\n\t\t"Stop": [\n\t\t\t{\n' in tabbed
    four = merge_hooks(
        '{\n    "hooks": {\n        "Stop": []\n    }\n}', {"Stop": COMMANDS["Stop"]}
    )
    assert '\n        "Stop": [\n            {\n                "hooks": [' in four.text


def test_an_empty_table_the_person_had_stays_and_one_clawback_made_goes() -> None:
    had = '{\n  "hooks": {}\n}\n'
    merged = merge_hooks(had, COMMANDS)
    assert merged.created == frozenset(EVENTS)  # the lists, not the table
    assert remove_hooks(merged.text, created=merged.created) == had
    made = merge_hooks('{\n  "model": "x"\n}\n', COMMANDS)
    assert remove_hooks(made.text, created=made.created) == '{\n  "model": "x"\n}\n'


@pytest.mark.parametrize(
    "bad", ['{"hooks": []}', '{"hooks": "x"}', '{"hooks": {"Stop": {"hooks": []}}}']
)
def test_a_hooks_table_of_the_wrong_shape_is_refused(bad: str) -> None:
    with pytest.raises(SettingsError, match="hooks"):
        merge_hooks(bad, COMMANDS)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"hooks": {},}', "not valid JSON"),
        ("// a comment\n{}", "not valid JSON"),
        ('{"n": NaN}', "not valid JSON"),
        ('{"a": 1} {"b": 2}', "extra text"),
        ("[1, 2]", "not a JSON object"),
        ("[" * 100_000 + "]" * 100_000, f"nested more than {MAX_DEPTH} levels"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, f"nested more than {MAX_DEPTH} levels"),
    ],
)
def test_what_is_not_a_json_object_is_refused_in_one_line(text: str, says: str) -> None:
    for rule in (lambda: merge_hooks(text, COMMANDS), lambda: remove_hooks(text)):
        with pytest.raises(SettingsError, match=says) as raised:
            rule()
        assert "\n" not in str(raised.value)


# -- the property: install then uninstall gives the text back; install twice adds nothing -----

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
    {"type": st.just("command"), "command": st.text(min_size=1, max_size=40)},
    optional={"timeout": st.integers(1, 600)},
)
clawbackish = st.builds(
    lambda words, home, sub: " ".join([*words, "--home", home, "hook", sub]),
    st.lists(st.sampled_from(["clawback", "/usr/bin/clawback", "nice", "-n", "10"]), max_size=3),
    st.sampled_from(["/srv/team", "/home/u/.clawback", "x"]),
    st.sampled_from(list(EVENTS.values())),
).map(lambda command: {"type": "command", "command": command})
group = st.fixed_dictionaries(
    {"hooks": st.lists(other_hook | clawbackish, min_size=1, max_size=3)},
    optional={"matcher": st.sampled_from(["", "*", "Bash", "startup|resume"])},
)
event_name = st.sampled_from([*EVENTS, "PostToolUse", "Notification"])
hooks_table = st.dictionaries(event_name, st.lists(group, max_size=3), max_size=4)
settings_values = st.dictionaries(
    st.text(max_size=10).filter(lambda k: k != "hooks"), json_value, max_size=5
).flatmap(
    lambda other: st.one_of(
        st.just(other), hooks_table.map(lambda table: {**other, "hooks": table})
    )
)
settings_texts = st.tuples(settings_values, st.sampled_from([None, 2, 4, "\t"])).map(
    lambda pair: json.dumps(pair[0], indent=pair[1], ensure_ascii=pair[1] is None)
)


@settings(max_examples=200, deadline=None)
@given(settings_texts)
def test_install_uninstall_round_trips(original: str) -> None:
    merged = merge_hooks(original, COMMANDS)
    assert installed_events(json.loads(merged.text)) == COMMANDS
    assert merge_hooks(merged.text, COMMANDS).text == merged.text  # idempotent
    assert remove_hooks(merged.text, created=merged.created) == original  # byte for byte
    # every hook that was not clawback's is still there, in order, first
    before, after = json.loads(original), json.loads(merged.text)
    for event, groups in before.get("hooks", {}).items():
        assert after["hooks"][event][: len(groups)] == groups
