"""The bundled demo archive: a few sessions in each format plus two memory files.

``build_demo_home()`` copies it into a fresh throwaway home whose config points the Claude Code
and OpenClaw sources at the copies (never at the user's real folders), then ingests it, so a new
user can try search, browsing and memory editing without any data of their own. The native
session is also a chat session with a compaction and knowledge facts (:mod:`.chat`), so the
compaction pane shows real content too.
"""

from __future__ import annotations

import shutil
import tempfile
from importlib.resources import files
from pathlib import Path

from clawback.core.config import Config, save_config
from clawback.core.demo.chat import seed_chat_session
from clawback.core.home import Home
from clawback.core.paths import Paths, ensure_private_dir


def demo_data() -> Path:
    return Path(str(files(__package__) / "data"))


def demo_home(home: Path | None = None, *, reset: bool = False) -> Path:
    """The one demo home, ``demo/`` inside the clawback home ``home`` (the default home when
    None): built the first time, reused after (whatever was tried in it stays), rebuilt from
    scratch with ``reset``. A new throwaway folder per run filled the temp folder, never
    removed."""
    path = Paths.resolve(home).home / "demo"
    if reset and path.exists():
        shutil.rmtree(path)
    if not Paths(path).database.exists():
        build_demo_home(path)
    return path


def build_demo_home(home: Path | None = None) -> Path:
    """Create (or refresh) a demo home and ingest it; returns its path."""
    home = home or Path(tempfile.mkdtemp(prefix="clawback-demo-"))
    paths = Paths(home).ensure()
    data = demo_data()
    sources = home / "demo-sources"
    shutil.copytree(data / "claude-code", sources / "claude-code", dirs_exist_ok=True)
    shutil.copytree(data / "openclaw", sources / "openclaw", dirs_exist_ok=True)
    shutil.copytree(data / "native", paths.sessions, dirs_exist_ok=True)
    if not paths.workspace.exists():
        shutil.copytree(data / "workspace", paths.workspace)
    ensure_private_dir(sources)
    config = Config()
    config.sources.claude_code_path = str(sources / "claude-code")
    config.sources.openclaw_path = str(sources / "openclaw")
    save_config(config, paths.config)
    app = Home.open(home)
    try:
        app.ingest_all()
        seed_chat_session(app)
    finally:
        app.close()
    return home
