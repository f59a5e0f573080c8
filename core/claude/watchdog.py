"""A guard that stops this process's long-lived ``claude`` groups if this process dies.

A live conversation (:mod:`clawback.core.claude.live`) keeps a ``claude`` process, and the MCP
server it started, in a process group of their own. Closing it stops that group; but a parent
killed with SIGKILL runs no cleanup, and ``claude`` ends on its stdin's end only once the turn
in flight is done (a hung API call keeps it going). So the first live process starts a small
guard: a Python process in a session of its own that reads, on a pipe only this process
holds, the groups to look after (``+PGID`` / ``-PGID``). When the pipe ends (this process
closed it, or died), the guard stops every group still listed (SIGTERM, then SIGKILL) and exits.

It must never outlive the pipe, never signal a group it was not told about, and never be in
this process's group (a Ctrl-C in the terminal must not reach it before it can act).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys

__all__ = ["GUARD_SCRIPT", "Watchdog"]

GUARD_GRACE_SECONDS = 1.0

GUARD_SCRIPT = f"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups = set()
def alive(group):
    try:
        os.killpg(group, 0)
        return True
    except OSError:
        return False
def stop(*_):
    for group in list(groups):
        try:
            os.killpg(group, signal.SIGTERM)
        except OSError:
            groups.discard(group)
    deadline = time.monotonic() + {GUARD_GRACE_SECONDS}
    while groups and time.monotonic() < deadline:
        groups.difference_update([g for g in list(groups) if not alive(g)])
        time.sleep(0.02)
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
for line in sys.stdin.buffer:
    line = line.strip()
    if line[:1] in (b"+", b"-") and line[1:].isdigit():
        (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
stop()
"""


class Watchdog:
    """Started on the first :meth:`watch`; :meth:`aclose` ends it once nothing is watched."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._groups: set[int] = set()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def groups(self) -> frozenset[int]:
        return frozenset(self._groups)

    def watch(self, pgid: int) -> None:
        """Look after the group ``pgid`` (a live ``claude`` and whatever it started)."""
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", GUARD_SCRIPT],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
            for known in self._groups:
                self._send(f"+{known}")
        self._groups.add(pgid)
        self._send(f"+{pgid}")

    def release(self, pgid: int) -> None:
        """The group ``pgid`` was stopped by its owner: forget it."""
        self._groups.discard(pgid)
        self._send(f"-{pgid}")

    def _send(self, line: str) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()

    async def aclose(self) -> None:
        """End the guard (it stops whatever is still listed) and reap it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.close()
        for _ in range(int((GUARD_GRACE_SECONDS + 2) / 0.01)):
            if proc.poll() is not None:
                return
            await asyncio.sleep(0.01)
        proc.kill()
        await asyncio.to_thread(proc.wait)
