"""The settings file itself, as a person has it: every backup kept, a dotfiles symlink written
through, a read-only file refused, and files that are not settings (a FIFO, ``/dev/zero``, a
100,000-level nesting) refused in one line without waiting, reading for ever or writing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from clawback.core.hooks.settings import EVENTS, SettingsError, hook_command, install, uninstall

from ..cli_runner import CLAWBACK, run_cli

COMMANDS = {
    event: hook_command(["/opt/venv/bin/clawback"], Path("/h/cb"), event) for event in EVENTS
}
OTHER = {
    event: hook_command(["/opt/venv/bin/clawback"], Path("/h/other"), event) for event in EVENTS
}
ORIGINAL = '{\n  "model": "opus",\n  "cleanupPeriodDays": 30.0\n}\n'


def installed(path: Path) -> dict[str, str]:
    """Event -> the command of a clawback entry, read as plain JSON (not by the code tested)."""
    table = json.loads(path.read_text() or "{}").get("hooks", {})
    return {
        event: hook["command"]
        for event, groups in table.items()
        for group in groups
        for hook in group["hooks"]
        if "--home" in hook["command"]
    }


def backups(folder: Path) -> list[Path]:
    return sorted(folder.glob("settings.json.clawback-backup-*"))


def test_every_write_keeps_its_own_backup(tmp_path: Path) -> None:
    """Issue 31 item 3: one backup name was overwritten by every write, so after an install
    and an uninstall the original bytes were gone."""
    path = tmp_path / "settings.json"
    path.write_text(ORIGINAL)
    first = install(path, COMMANDS)
    second = install(path, OTHER)  # in the same second: a name of its own all the same
    third = uninstall(path)
    kept = [first.backup, second.backup, third.backup]
    assert backups(tmp_path) == sorted(kept)  # type: ignore[type-var]
    assert len(set(kept)) == 3
    assert first.backup.read_text() == ORIGINAL  # type: ignore[union-attr]
    assert installed(second.backup) == COMMANDS  # type: ignore[arg-type]
    assert installed(third.backup) == OTHER  # type: ignore[arg-type]
    assert all(stat.S_IMODE(b.stat().st_mode) == 0o600 for b in backups(tmp_path))
    assert path.read_text() == ORIGINAL
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_symlinked_settings_file_is_written_through_its_link(tmp_path: Path) -> None:
    """Issue 31 item 4: the link was replaced by a regular file, cutting the dotfiles off."""
    dotfiles = tmp_path / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    target = dotfiles / "settings.json"
    target.write_text(ORIGINAL)
    target.chmod(0o640)
    middle = tmp_path / "dotfiles" / "current.json"
    middle.symlink_to(target)  # a chain of two links
    claude = tmp_path / ".claude"
    claude.mkdir()
    link = claude / "settings.json"
    link.symlink_to(middle)

    written = install(link, COMMANDS)
    assert link.is_symlink() and os.readlink(link) == str(middle)
    assert middle.is_symlink() and os.readlink(middle) == str(target)
    assert installed(target) == COMMANDS and installed(link) == COMMANDS
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert written.backup is not None and written.backup.parent == claude
    assert written.backup.read_text() == ORIGINAL
    leftovers = [p for d in (claude, dotfiles) for p in d.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    uninstall(link)
    assert link.is_symlink() and target.read_text() == ORIGINAL


def test_a_read_only_settings_file_is_refused_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(ORIGINAL)
    path.chmod(0o444)
    inode = path.stat().st_ino
    with pytest.raises(SettingsError, match=r"is read-only; clawback left it unchanged"):
        install(path, COMMANDS)
    assert path.read_text() == ORIGINAL and path.stat().st_ino == inode
    assert list(tmp_path.iterdir()) == [path]  # no backup either


def test_a_new_file_is_private_and_its_folder_made(tmp_path: Path) -> None:
    path = tmp_path / "new" / "settings.json"
    written = install(path, COMMANDS)
    assert written.backup is None and written.changed
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert installed(path) == COMMANDS and path.read_text().endswith("}\n")


def test_an_empty_file_is_an_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("")
    assert installed(path) == {}
    install(path, COMMANDS)
    assert installed(path) == COMMANDS


def test_a_byte_order_mark_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b"\xef\xbb\xbf" + ORIGINAL.encode())
    install(path, COMMANDS)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf{")
    uninstall(path)
    assert path.read_bytes() == b"\xef\xbb\xbf" + ORIGINAL.encode()


# -- through the command, as a person runs it ---------------------------------------------------


@pytest.fixture
def user(claude_user: Path) -> Path:
    return claude_user


def test_an_uninstall_gives_back_an_empty_table_the_person_had(user: Path, tmp_path: Path) -> None:
    settings = user / ".claude" / "settings.json"
    had = '{\n    "hooks": {},\n    "cleanupPeriodDays": 1.50\n}\n'
    settings.write_text(had)
    assert run_cli("hooks", "install", home=tmp_path / "cb").returncode == 0
    assert json.loads(settings.read_text())["cleanupPeriodDays"] == 1.5
    assert "1.50" in settings.read_text()
    assert run_cli("hooks", "uninstall", home=tmp_path / "cb").returncode == 0
    assert settings.read_text() == had


def test_a_persons_own_clawback_commands_are_never_touched_by_the_real_command(
    user: Path, tmp_path: Path
) -> None:
    """Issue 31 item 2: any command with ``clawback`` before ``hook`` was taken for clawback's:
    these two were rewritten to this home's command and merged, and an uninstall left an empty
    list. Only entries clawback marked as its own are changed."""
    settings = user / ".claude" / "settings.json"
    theirs = [
        "nice -n 10 clawback --home /srv/team hook stop",
        "my-audit --tool clawback hook stop",
    ]
    had = json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": c}]} for c in theirs]}},
        indent=2,
    )
    settings.write_text(had)
    assert run_cli("hooks", "install", home=tmp_path / "cb").returncode == 0
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    commands = [hook["command"] for group in stop for hook in group["hooks"]]
    assert commands[:2] == theirs
    assert len(commands) == 3 and str(tmp_path / "cb") in commands[2]
    assert run_cli("hooks", "uninstall", home=tmp_path / "cb").returncode == 0
    assert settings.read_text() == had


def _planted(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "deep":
        path.write_text('{"a": ' * 100_000 + "1" + "}" * 100_000)
    elif kind == "huge":
        with path.open("wb") as file:
            file.truncate(17 << 20)  # sparse: refused by its size, never read


SAYS = {
    "fifo": "a named pipe (FIFO), not a regular file",
    "dev-zero": "a device, not a regular file",
    "folder": "a folder, not a regular file",
    "deep": "nested more than 64 levels deep",
    "huge": "more than the 16,777,216 clawback reads",
}


@pytest.mark.parametrize("kind", sorted(SAYS))
def test_a_file_that_is_not_settings_is_refused_in_one_line_by_the_real_command(
    kind: str, tmp_path: Path
) -> None:
    """Issue 31 item 12: a FIFO hung, ``/dev/zero`` was read until memory ran out, deep
    nesting raised RecursionError; each now gets one line, and nothing is written."""
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    settings = user / ".claude" / "settings.json"
    _planted(kind, settings)
    before = sorted(p.name for p in settings.parent.iterdir())
    env = {**os.environ, "HOME": str(user), "CLAWBACK_HOME": str(tmp_path / "cb")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    for args in (["install"], ["uninstall", "--scope", "user"], ["status"]):
        done = subprocess.run(
            [CLAWBACK, "hooks", *args], capture_output=True, text=True, timeout=60, env=env,
            cwd=tmp_path, check=False,
        )  # fmt: skip
        assert "Traceback" not in done.stderr
        assert SAYS[kind] in done.stdout + done.stderr, (args, done.stdout, done.stderr)
        if args[0] == "status":
            assert done.returncode == 0 and "cannot read" in done.stdout
        else:
            assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert sorted(p.name for p in settings.parent.iterdir()) == before
    if kind == "dev-zero":
        assert settings.is_symlink()


def test_a_lone_surrogate_escape_is_kept_as_it_was_written(user: Path, tmp_path: Path) -> None:
    """It raised a traceback after the backup was written: the escape is the person's text, and
    clawback never decodes what it does not change."""
    settings = user / ".claude" / "settings.json"
    text = '{\n  "env": {"NAME": "\\ud800 half an emoji"}\n}\n'
    settings.write_text(text)
    for args in (("install",), ("status",), ("uninstall",)):
        done = run_cli("hooks", *args, home=tmp_path / "cb")
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert settings.read_text() == text


def test_uninstall_everywhere_goes_on_past_a_broken_file(user: Path, tmp_path: Path) -> None:
    assert run_cli("hooks", "install", home=tmp_path / "cb").returncode == 0
    project = Path.cwd() / ".claude"
    project.mkdir()
    (project / "settings.json").write_text("{broken")
    done = run_cli("hooks", "uninstall", home=tmp_path / "cb")
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert "Removed clawback's hooks from" in done.stdout
    assert installed(user / ".claude" / "settings.json") == {}
    assert (project / "settings.json").read_text() == "{broken"
