"""config.toml: the app's persisted ui settings, their checks and how changes are written."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from clawback.core.config import Config, describe, load_config, update_setting, update_settings
from clawback.core.errors import ConfigError
from clawback.core.paths import Paths

UI_KEYS = {
    "ui.show_sessions": True,
    "ui.sessions_source": "",
    "ui.sessions_project": "",
    "ui.search_source": "",
    "ui.search_role": "",
    "ui.search_since": "",
    "ui.search_until": "",
    "ui.search_this_session": False,
}


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.resolve(tmp_path / "home")


def test_new_ui_settings_have_defaults_and_docs() -> None:
    rows = {key: (default, doc) for key, default, doc in describe()}
    for key, default in UI_KEYS.items():
        assert rows[key][0] == default
        assert rows[key][1].endswith(".") and len(rows[key][1]) <= 80
    assert rows["ui.show_sessions"][1] == "Show the sessions list beside the transcript."
    assert Config().ui.show_sessions is True


def test_ui_settings_load_from_the_file(paths: Paths) -> None:
    paths.config.parent.mkdir(parents=True)
    paths.config.write_text(
        '[ui]\nshow_sessions = false\nsessions_source = "claude-code"\n'
        'sessions_project = "/home/me/site"\nsearch_role = "assistant"\n'
        'search_source = "memory"\nsearch_since = "2026-01-31"\nsearch_this_session = true\n'
    )
    ui = load_config(paths.config).ui
    assert ui.show_sessions is False
    assert (ui.sessions_source, ui.sessions_project) == ("claude-code", "/home/me/site")
    assert (ui.search_source, ui.search_role) == ("memory", "assistant")
    assert (ui.search_since, ui.search_until, ui.search_this_session) == ("2026-01-31", "", True)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            'sessions_source = "memory"',
            "ui.sessions_source: must be empty or one of claude-code, openclaw, native",
        ),
        ('sessions_source = "claude"', "ui.sessions_source: must be empty or one of"),
        ('search_source = "slack"', "ui.search_source: must be empty or one of"),
        ('search_role = "me"', "ui.search_role: must be empty or one of user"),
        ('search_since = "last week"', "ui.search_since: must be empty or a date"),
        ('search_until = "2026-13-45"', "ui.search_until: must be empty or a date"),
        ('show_sessions = "yes"', "ui.show_sessions: must be true or false"),
        ("search_this_session = 1", "ui.search_this_session: must be true or false"),
        ("sessions_project = 3", "ui.sessions_project: must be a string"),
    ],
)
def test_a_bad_stored_value_is_one_clear_error(paths: Paths, line: str, message: str) -> None:
    paths.config.parent.mkdir(parents=True)
    paths.config.write_text(f'[ui]\ntheme = "clawback-dark"\n{line}\n')
    with pytest.raises(ConfigError) as raised:
        load_config(paths.config)
    assert str(raised.value).startswith(f"{paths.config}, line 3: {message}")
    assert "\n" not in str(raised.value)


def test_update_settings_writes_several_keys_at_once_and_keeps_the_rest(paths: Paths) -> None:
    paths.config.parent.mkdir(parents=True)
    paths.config.write_text('[chat]\nmodel = "haiku"\n\n[ui]\ntheme = "clawback-dusk"\n')
    saved = update_settings(
        paths, {"ui.sessions_source": "openclaw", "ui.sessions_project": "/home/demo"}
    )
    assert (saved.ui.sessions_source, saved.ui.sessions_project) == ("openclaw", "/home/demo")
    on_disk = tomllib.loads(paths.config.read_text())
    assert on_disk == {
        "chat": {"model": "haiku"},
        "ui": {
            "theme": "clawback-dusk",
            "sessions_source": "openclaw",
            "sessions_project": "/home/demo",
        },
    }
    update_setting(paths, "ui.sessions_source", "")  # back to the default: dropped from the file
    assert "sessions_source" not in tomllib.loads(paths.config.read_text())["ui"]


def test_update_settings_refuses_a_bad_value_and_writes_nothing(paths: Paths) -> None:
    paths.config.parent.mkdir(parents=True)
    paths.config.write_text('[ui]\nsearch_role = "user"\n')
    before = paths.config.read_bytes()
    with pytest.raises(ConfigError, match=r"ui\.search_since: must be empty or a date"):
        update_settings(paths, {"ui.search_role": "tool", "ui.search_since": "soon"})
    with pytest.raises(ConfigError, match=r"ui\.search_limt: unknown setting"):
        update_settings(paths, {"ui.search_limt": 5})
    assert paths.config.read_bytes() == before


def test_embeddings_are_on_unless_the_model_is_none(paths: Paths) -> None:
    assert Config().embeddings.enabled
    assert not update_setting(paths, "embeddings.model", " None ").embeddings.enabled
    assert not load_config(paths.config).embeddings.enabled
    assert update_setting(paths, "embeddings.model", "hash-16").embeddings.enabled
