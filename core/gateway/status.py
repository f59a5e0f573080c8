"""Whether a gateway runs for a home, and how it has been doing: for ``health`` and the app.

A running gateway holds the ``flock`` on ``gateway/<channel>/gateway.lock`` (so two cannot poll
one bot from one home, and a killed one leaves no stale claim) and rewrites ``status.json``: its
pid, when it started, the bot's name, the last update it received, counts, and its last errors.
:func:`read_status` only reads; it never imports the Telegram library.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clawback.core.locking import lock_free
from clawback.core.paths import PRIVATE_FILE

__all__ = ["GatewayStatus", "StatusFile", "read_status"]

ERRORS_KEPT = 5


@dataclass
class GatewayStatus:
    channel: str
    running: bool = False
    pid: int | None = None
    bot: str = ""
    started_at: float | None = None
    last_update_at: float | None = None
    answered: int = 0
    refused: int = 0
    duplicates: int = 0
    waiting: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)  # {"at", "what"}, newest last

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line: ``telegram: running as @bot, last update 12:03, 2 errors``."""
        if not self.running:
            return f"{self.channel}: not running"
        parts = [f"{self.channel}: running" + (f" as @{self.bot}" if self.bot else "")]
        if self.last_update_at:
            parts.append(
                "last update " + time.strftime("%H:%M", time.localtime(self.last_update_at))
            )
        if self.errors:
            parts.append(f"{len(self.errors)} recent error" + ("s" if len(self.errors) > 1 else ""))
        return ", ".join(parts)


def channel_folder(gateway_root: Path, channel: str) -> Path:
    return gateway_root / channel


def read_status(gateway_root: Path, channel: str = "telegram") -> GatewayStatus:
    """The status of ``channel``'s gateway for a home (``Paths.gateway``)."""
    folder = channel_folder(gateway_root, channel)
    status = GatewayStatus(channel)
    try:
        data = json.loads((folder / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict):
        for key in GatewayStatus.__dataclass_fields__:
            if key in data and key not in ("channel", "running"):
                setattr(status, key, data[key])
    lock = folder / "gateway.lock"
    status.running = lock.exists() and not lock_free(lock)
    return status


class StatusFile:
    """The running gateway's side of ``status.json``."""

    def __init__(self, folder: Path, channel: str) -> None:
        self.path = folder / "status.json"
        self.status = GatewayStatus(channel, running=True, pid=os.getpid(), started_at=time.time())

    def error(self, what: str) -> None:
        self.status.errors = [*self.status.errors, {"at": time.time(), "what": what}][-ERRORS_KEPT:]
        self.save()

    def save(self) -> None:
        """Replace the file whole, unsynced: a report, rewritten after every poll that brought
        news, that must cost the gateway nothing (nor stop it on a full disk)."""
        data = json.dumps(self.status.to_json(), ensure_ascii=False).encode("utf-8")
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        with contextlib.suppress(OSError):
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
