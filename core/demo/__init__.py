"""The bundled demo archive: a few sessions in each format plus two memory files.

``build_demo_home()`` copies it into a fresh throwaway home whose config points the Claude Code
and OpenClaw sources at the copies (never at the user's real folders), then ingests it, so a new
user can try search, browsing and memory editing without any data of their own. The native
session is also a chat session with a compaction and knowledge facts (:mod:`.chat`), so the
compaction pane shows real content too.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from importlib.resources import files
from pathlib import Path

from clawback.core.config import Config, save_config
from clawback.core.demo.chat import seed_chat_session
from clawback.core.home import Home
from clawback.core.paths import Paths, ensure_private_dir, ensure_private_file


def demo_data() -> Path:
    return Path(str(files(__package__) / "data"))


def demo_home(home: Path | None = None, *, reset: bool = False) -> Path:
    """The one demo home, ``demo/`` inside the clawback home ``home`` (the default home when
    None): built the first time, reused after (whatever was tried in it stays), rebuilt from
    scratch with ``reset``. A new throwaway folder per run filled the temp folder, never
    removed."""
    parent = Paths.resolve(home).home
    ensure_private_dir(parent)  # a home is private (0700), also one the demo creates
    path = parent / "demo"
    if reset and path.exists():
        shutil.rmtree(path)
    if not Paths(path).database.exists():
        build_demo_home(path)
    return path


def _copy_private(source: Path, target: Path) -> None:
    """Copy the bundled files as a home keeps its own: folders 0700, files 0600 (the package's
    files are world-readable)."""
    shutil.copytree(source, target, dirs_exist_ok=True)
    ensure_private_dir(target)
    for folder, dirs, names in os.walk(target):
        for name in dirs:
            ensure_private_dir(Path(folder, name))
        for name in names:
            ensure_private_file(Path(folder, name))


def build_demo_home(home: Path | None = None) -> Path:
    """Create (or refresh) a demo home and ingest it; returns its path."""
    home = home or Path(tempfile.mkdtemp(prefix="clawback-demo-"))
    paths = Paths(home).ensure()
    data = demo_data()
    sources = ensure_private_dir(home / "demo-sources")
    _copy_private(data / "claude-code", sources / "claude-code")
    _copy_private(data / "openclaw", sources / "openclaw")
    _copy_private(data / "native", paths.sessions)
    if not paths.workspace.exists():
        _copy_private(data / "workspace", paths.workspace)
    config = Config()
    config.sources.claude_code_path = str(sources / "claude-code")
    config.sources.openclaw_path = str(sources / "openclaw")
    save_config(config, paths.config)
    opened = Home.open(home)
    try:
        opened.ingest_all()
        seed_chat_session(opened)
    finally:
        opened.close()
    return home
