"""The README's quick start runs as written, on the installed ``clawback``, in a fresh home.

Each command of the "Quick start" section runs in order as its own process, with HOME and
CLAWBACK_HOME in a temporary folder holding one Claude Code session. The two that open the
terminal app (``clawback demo`` and bare ``clawback``) run on a pseudo-terminal, draw their first
screen and are quit with Ctrl+Q once it is still, as a person would. Every other command shown anywhere in the
README must name a real command and real options.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shlex
import struct
import subprocess
import termios
import time
from pathlib import Path
from typing import Any

import click
import pytest
from clawback.cli.main import cli

from ..cli_runner import CLAWBACK

ROOT = Path(__file__).resolve().parents[2]
SESSION = "11111111-2222-3333-4444-555555555555"
#: what the planted session says, so that both searches of the quick start find it
SAID = [
    ("user", "which fts5 tokenizer should the index use?"),
    ("assistant", "Use the unicode61 fts5 tokenizer with remove_diacritics."),
    ("user", "the cache layer keeps going stale"),
    ("assistant", "We decided to drop the Redis cache layer and rely on SQLite's page cache."),
]
_ESCAPES = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07]*\x07|[@-Z\\-_])")


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README.md has no section '## {title}'"
    return match.group(1)


def commands(markdown: str) -> list[list[str]]:
    """Each ``clawback ...`` line of the fenced shell blocks, comment dropped, split as a shell
    would split it."""
    found = []
    for block in re.findall(r"^```sh\n(.*?)^```", markdown, re.M | re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "clawback":
                found.append(words)
    return found


def plant_session(home: Path) -> None:
    folder = home / ".claude" / "projects" / "-home-me-proj"
    folder.mkdir(parents=True)
    lines: list[dict[str, Any]] = []
    for n, (role, text) in enumerate(SAID):
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(
            {
                "type": role,
                "sessionId": SESSION,
                "uuid": f"{role[0]}{n}",
                "parentUuid": None,
                "timestamp": f"2026-11-1{n}T10:00:00Z",
                "cwd": "/home/me/proj",
                "message": {"role": role, "content": content},
            }
        )
    (folder / f"{SESSION}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def run_app_on_terminal(args: list[str], env: dict[str, str], timeout: float = 90) -> str:
    """Open the app on a 100x30 pseudo-terminal, wait for its first screen (the sessions list's
    count), quit with Ctrl+Q; the screen's text, escapes removed. Fails if it does not exit 0
    or prints a traceback."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen(
        [CLAWBACK, *args[1:]],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**env, "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(follower)
    output = bytearray()
    deadline = time.monotonic() + timeout
    last_output = quit_sent = 0.0
    try:
        while process.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"{args} did not quit: {_ESCAPES.sub('', output.decode())}")
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    output += os.read(leader, 65536)
                except OSError:  # the terminal closed: the app is gone
                    break
                last_output = time.monotonic()
            drawn = re.search(r"\d+ sessions?\b", _ESCAPES.sub("", output.decode(errors="replace")))
            # A person reads the screen before quitting: Ctrl+Q once it has been still for half
            # a second, again each second until it is taken.
            settled = time.monotonic() - last_output > 0.5
            if drawn and settled and time.monotonic() - quit_sent > 1:
                os.write(leader, b"\x11")
                quit_sent = time.monotonic()
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    screen = _ESCAPES.sub("", output.decode(errors="replace"))
    assert code == 0, f"{args} exited {code}: {screen[-2000:]}"
    assert "Traceback" not in screen
    return screen


def test_the_quick_start_runs_as_written(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the quick start embeds: pip install '.[embeddings]'")
    home = tmp_path / "person"
    plant_session(home)
    env = {
        **os.environ,
        "HOME": str(home),
        "CLAWBACK_HOME": str(home / ".clawback"),
        "CLAWBACK_WARM": "0",  # nothing left running after the test
    }
    steps = commands(readme_section("Quick start"))
    first = [words[1] for words in steps[:3]]
    assert first == ["demo", "ingest", "search"], "the demo first, then your own history"
    for words in steps:
        if len(words) == 1 or words[1] == "demo":
            screen = run_app_on_terminal(words, env)
            assert "sessions" in screen
            continue
        done = subprocess.run(
            [CLAWBACK, *words[1:]], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{shlex.join(words)}: {done.stderr}"
        assert "Traceback" not in done.stderr
        if words[1] == "ingest":
            assert "Ingested 1 files" in done.stderr + done.stdout
        if words[1] == "search":  # each search of the quick start finds the planted session
            assert "fts5 tokenizer" in done.stdout or "Redis cache layer" in done.stdout
    assert (home / ".clawback" / "demo" / "clawback.db").exists()
    assert (home / ".clawback" / "embeddings.db").exists()


def resolve(words: list[str]) -> tuple[click.Command, list[str]]:
    """The click command ``words`` name, and the options given to it."""
    command: click.Command = cli
    rest = words[1:]
    with click.Context(cli) as context:
        while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
            found = command.get_command(context, rest[0])
            if found is None:
                break
            command, rest = found, rest[1:]
    return command, [word.split("=")[0] for word in rest if word.startswith("-")]


def test_every_command_the_readme_shows_exists_with_its_options() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = commands(readme)
    assert len(shown) >= 8
    for words in shown:
        command, options = resolve(words)
        known = {opt for param in command.params for opt in param.opts + param.secondary_opts}
        known |= {"--help", "-h"}
        if command is cli:
            assert words == ["clawback"], f"{shlex.join(words)}: not a clawback command"
        unknown = [option for option in options if option not in known]
        assert unknown == [], f"{shlex.join(words)}: no option {unknown} on {command.name}"


def test_the_install_section_names_extras_that_exist() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    named = re.findall(r"\.\[([\w,-]+)\]", readme_section("Install"))
    assert named, "the install section shows how to add search by meaning"
    for group in named:
        assert set(group.split(",")) <= set(extras), f"no extra [{group}] in pyproject.toml"
