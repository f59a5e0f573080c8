"""``clawback gateway telegram`` and its settings on the command line: the token, pairing, the
missing extra, one gateway per home, and ``clawback config`` / ``health``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.core.config import load_config
from clawback.core.gateway.access import PairingCodes
from clawback.core.gateway.inbound import Inbound
from clawback.core.locking import held
from clawback.core.paths import Paths

from tests.cli_runner import run_cli

from .telegram_standin import TOKEN, TelegramStandin, running_standin


@pytest.fixture
def standin() -> Iterator[TelegramStandin]:
    with running_standin() as running:
        yield running


def _home(tmp_path: Path, telegram: str = "") -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(f"[telegram]\n{telegram}")
    return home


def test_config_lists_every_telegram_setting_and_never_the_token(tmp_path: Path) -> None:
    home = _home(tmp_path, f'token = "{TOKEN}"\n')
    shown = run_cli("config", home=home)
    assert shown.returncode == 0, shown.stderr
    for key in (
        "token",
        "api_base",
        "allow",
        "groups",
        "group_open",
        "group_history",
        "dm_scope",
        "debounce_ms",
        "max_concurrent_turns",
        "unsupported",
    ):
        assert f"telegram.{key}" in shown.stdout
    assert TOKEN not in shown.stdout and "(set, not shown)" in shown.stdout
    rows = json.loads(run_cli("config", "--json", home=home).stdout)
    assert TOKEN not in json.dumps(rows)
    history = next(r for r in rows if r["key"] == "telegram.group_history")
    assert history["default"] == 50 and history["doc"]


def test_a_missing_token_is_one_line_and_exit_2(tmp_path: Path) -> None:
    ran = run_cli("gateway", "telegram", home=_home(tmp_path), env={"TELEGRAM_BOT_TOKEN": None})
    assert ran.returncode == 2
    assert ran.stderr.count("\n") == 1 and "TELEGRAM_BOT_TOKEN" in ran.stderr


def test_a_rejected_token_is_one_line_and_exit_2(tmp_path: Path, standin: TelegramStandin) -> None:
    home = _home(tmp_path, f'api_base = "{standin.url}"\n')
    wrong = "987654321:AAwrong_token_wrong_token_wrong_tok"
    ran = run_cli("gateway", "telegram", home=home, env={"TELEGRAM_BOT_TOKEN": wrong})
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("\n") == 1 and "rejected the bot token" in ran.stderr
    assert wrong not in ran.stderr + ran.stdout


def test_without_the_extra_the_command_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "telegram", None)  # as if python-telegram-bot were absent
    monkeypatch.delitem(sys.modules, "clawback.core.gateway.bot", raising=False)
    ran = run_cli("gateway", "telegram", home=_home(tmp_path), env={"TELEGRAM_BOT_TOKEN": TOKEN})
    assert ran.returncode == 2
    assert "pip install 'clawback[telegram]'" in ran.stderr


def test_one_gateway_per_home(tmp_path: Path) -> None:
    home = _home(tmp_path)
    folder = Paths.resolve(home).gateway / "telegram"
    with held(folder / "gateway.lock") as mine:
        assert mine
        ran = run_cli("gateway", "telegram", home=home, env={"TELEGRAM_BOT_TOKEN": TOKEN})
    assert ran.returncode == 1 and "already runs" in ran.stderr


def test_allow_code_admits_the_person_it_was_printed_for(tmp_path: Path) -> None:
    home = _home(tmp_path, 'allow = ["@carol"]\n')
    codes = PairingCodes(Paths.resolve(home).gateway / "telegram" / "pairing.json")
    stranger = Inbound(
        1,
        "text",
        chat_id=99,
        chat_type="private",
        sender_id=99,
        username="mallory",
        sender_name="Mallory",
    )
    asked = codes.request(stranger)
    assert asked is not None
    request, new = asked
    assert new and codes.request(stranger) == (request, False)  # the same code until it is used
    listed = run_cli("gateway", "telegram", "allow", home=home)
    assert request.code in listed.stdout and "Mallory" in listed.stdout
    ran = run_cli("gateway", "telegram", "allow", request.code.lower().replace("-", ""), home=home)
    assert ran.returncode == 0, ran.stderr
    assert "Allowed Mallory" in ran.stdout
    assert load_config(home / "config.toml").telegram.allow == ["@carol", "99"]
    again = run_cli("gateway", "telegram", "allow", request.code, home=home)
    assert again.returncode == 2 and "no open pairing code" in again.stderr
    assert (
        Paths.resolve(home).gateway / "telegram" / "pairing.json"
    ).stat().st_mode & 0o777 == 0o600


def test_codes_expire(tmp_path: Path) -> None:
    now = [1000.0]
    codes = PairingCodes(tmp_path / "pairing.json", clock=lambda: now[0])
    stranger = Inbound(1, "text", chat_id=5, chat_type="private", sender_id=5, sender_name="E")
    asked = codes.request(stranger)
    assert asked is not None
    now[0] += 3601
    with pytest.raises(Exception, match="no open pairing code"):
        codes.take(asked[0].code)
