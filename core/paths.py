"""Every path clawback uses, derived from one home folder.

The home is ``--home``, else ``$CLAWBACK_HOME``, else ``~/.clawback``. Tests set
``CLAWBACK_HOME`` to a temporary folder so nothing ever touches a real home. Everything clawback
creates here is private to the user: folders 0700, files 0600.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

HOME_ENV = "CLAWBACK_HOME"
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def default_home() -> Path:
    env = os.environ.get(HOME_ENV)
    return Path(env).expanduser() if env else Path.home() / ".clawback"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and its missing parents, each 0700 whatever the umask) and make sure the
    leaf is 0700."""
    if not path.is_dir():
        make_private_dirs(path)
    if path.stat().st_mode & 0o777 != PRIVATE_DIR:
        path.chmod(PRIVATE_DIR)
    return path


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and whatever of its parents is missing, each 0700 (``mkdir(parents=True,
    mode=...)`` gives the parents the umask's mode); folders already there keep theirs."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(exist_ok=True, mode=PRIVATE_DIR)


def touch_private(path: Path) -> None:
    """Create ``path`` empty, or mark it as touched now, private whatever the umask
    (``Path.touch`` creates with the umask's mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
        os.utime(fd)
    finally:
        os.close(fd)


def ensure_private_file(path: Path) -> None:
    """Tighten an existing file to 0600 (SQLite and appenders create with the umask)."""
    if path.exists() and path.stat().st_mode & 0o777 != PRIVATE_FILE:
        path.chmod(PRIVATE_FILE)


@dataclass(frozen=True)
class Paths:
    """The layout of one clawback home."""

    home: Path

    @classmethod
    def resolve(cls, home: str | os.PathLike[str] | None = None) -> Paths:
        return cls(Path(home).expanduser().resolve() if home else default_home().resolve())

    @property
    def config(self) -> Path:
        return self.home / "config.toml"

    @property
    def database(self) -> Path:
        return self.home / "clawback.db"

    @property
    def sessions(self) -> Path:
        """Native transcripts written by clawback's own chat."""
        return self.home / "sessions"

    @property
    def workspace(self) -> Path:
        return self.home / "workspace"

    @property
    def kept(self) -> Path:
        """Kept copies of Claude Code transcripts (:mod:`clawback.core.archive.kept`)."""
        return self.home / "kept"

    @property
    def kept_rebuild(self) -> Path:
        """Where a reindex writes kept copies out to read them again (emptied as it goes)."""
        return self.home / "kept-rebuild"

    @property
    def lock(self) -> Path:
        return self.home / "ingest.lock"

    @property
    def vectors(self) -> Path:
        """The vector store for semantic search: rebuildable, so safe to delete."""
        return self.home / "embeddings.db"

    @property
    def embed_lock(self) -> Path:
        """Held by the one process that writes vectors."""
        return self.home / "embed.lock"

    @property
    def hooks(self) -> Path:
        """Claude Code hooks: their log (``log.jsonl``), locks and per-session state."""
        return self.home / "hooks"

    @property
    def gateway(self) -> Path:
        """Chat gateways' state (``gateway/telegram/``: offset, inbox, pairing codes, status)."""
        return self.home / "gateway"

    def ensure(self) -> Paths:
        """Create the home and its folders with private permissions."""
        ensure_private_dir(self.home)
        ensure_private_dir(self.sessions)
        return self
