"""The first thing every hook does: hand the event to the warm process, which answers it.

Claude Code starts ``clawback hook <event>`` at every event, four or five times per ``claude
-p``, and waits for each. With the home's warm process up (:mod:`.serve`), the hook needs no
more than this module, ``os``, ``json`` and ``socket``: it sends the event and prints the
answer, about a bare Python start all told. When no warm process answers, :func:`answer` runs
the hook here (:func:`~.run.answer_here`), which starts one for the next event.

Either way the whole hook, from the process's start (:func:`process_started`) and its imports
to its answer, stays within ``hooks.timeout_s``: the warm process gives up on a handler at the
deadline, and here a :class:`Watchdog` ends the process at it, whatever it is doing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator

from clawback.core.warm import home_folder, hooks_folder, socket_address

SWITCH_ENV = "CLAWBACK_HOOKS"
WARM_ENV = "CLAWBACK_WARM"
#: what of the hook's environment the warm process answers by: the plugin's mark and where
#: Claude Code's settings are (:mod:`.plugin`)
PASSED_ENV = ("CLAWBACK_VIA_PLUGIN", "CLAUDE_CONFIG_DIR", "HOME")
MAX_EVENT_BYTES = 4 * 1024 * 1024  # a prompt can be long; an event bigger than this is refused
#: the hook names ``clawback hook`` answers (the keys of :data:`.run.HANDLERS`)
HOOK_NAMES = ("session-start", "user-prompt", "pre-compact", "stop", "session-end")
#: ``{"timeout_s": hooks.timeout_s}`` as the last hook that read the settings saw it, so the
#: next one keeps to it from its first moment, before it could read them itself
BUDGET_FILE = "budget.json"
DEFAULT_TIMEOUT_S = 5.0  # ``hooks.timeout_s``'s default, until a hook read the settings
LOG_NAME, LOG_LOCK = "log.jsonl", "log.lock"  # the hooks log (:mod:`.log`)

#: what answers in this process when the warm process did not: ``(name, raw, home, started,
#: set_budget) -> (output, abandoned)`` (:func:`~.run.answer_here`)
HereFn = Callable[[str, bytes, str, float, Callable[[float], None]], tuple[str, bool]]


def process_started() -> float:
    """``time.monotonic()`` as it was when this process started (Linux: from ``/proc``), so a
    budget counts the interpreter's start and the imports too; elsewhere, now."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as handle:
            uptime = float(handle.read().split()[0])
        ticks = int(fields[19])  # field 22 of stat: the start, in clock ticks after boot
        return now - max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return now


def read_event() -> bytes:
    """The event Claude Code wrote on stdin (at most one byte over :data:`MAX_EVENT_BYTES`)."""
    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        return b""
    return stdin.buffer.read(MAX_EVENT_BYTES + 1)


def known_timeout(hooks: str) -> float:
    """``hooks.timeout_s`` as the last hook that read the settings saw it."""
    try:
        with open(os.path.join(hooks, BUDGET_FILE), "rb") as handle:
            value = json.loads(handle.read(4096)).get("timeout_s")
    except (OSError, ValueError, AttributeError):
        return DEFAULT_TIMEOUT_S
    return float(value) if isinstance(value, int | float) and value > 0 else DEFAULT_TIMEOUT_S


def remember_timeout(hooks: str, timeout_s: float) -> None:
    """Write :data:`BUDGET_FILE` when ``timeout_s`` is not what it holds (never raises)."""
    if known_timeout(hooks) == timeout_s and os.path.exists(os.path.join(hooks, BUDGET_FILE)):
        return
    staging = os.path.join(hooks, f".{BUDGET_FILE}.{os.getpid()}.{threading.get_ident()}")
    try:
        os.makedirs(hooks, mode=0o700, exist_ok=True)
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, json.dumps({"timeout_s": timeout_s}).encode())
        finally:
            os.close(fd)
        os.replace(staging, os.path.join(hooks, BUDGET_FILE))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(staging)


def ask_warm(name: str, raw: bytes, home: str, started: float) -> str | None:
    """The warm process's answer to the event (what to print, maybe ``""``), or ``None`` when
    none answered (none runs, it is switched off, or it failed)."""
    if os.environ.get(WARM_ENV, "").strip() == "0":
        return None
    path = socket_address(home)
    if path is None or not os.path.exists(path):
        return None
    left = started + known_timeout(hooks_folder(home)) - time.monotonic()
    if left <= 0:
        return None
    request = {
        "hook": name,
        "event": raw.decode("utf-8", "replace"),
        "started": started,
        "env": {key: os.environ[key] for key in PASSED_ENV if key in os.environ},
    }
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(left)
            conn.connect(path)
            conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
            data = bytearray()
            while not data.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        reply = json.loads(data)
    except (OSError, ValueError):
        return None
    output = reply.get("output") if isinstance(reply, dict) else None
    return output if isinstance(output, str) else None


class Watchdog:
    """Ends this process at its deadline, whatever it is doing (importing, waiting on a lock,
    deep in SQLite), after logging a ``timeout`` run: nothing it does imports anything.

    The budget is the one the last hook saw (:func:`known_timeout`) until this one has read
    the settings (:meth:`set_deadline`). :meth:`finishing` holds it off while the answer is
    written, so Claude Code never reads half an answer."""

    def __init__(self, name: str, hooks: str, started: float) -> None:
        self.name, self.hooks, self.started = name, hooks, started
        self.budget = known_timeout(hooks)
        self.deadline = started + self.budget
        self._writing = threading.Lock()
        self._moved = threading.Event()
        threading.Thread(target=self._watch, name="clawback-hook-watchdog", daemon=True).start()

    def set_deadline(self, budget_s: float) -> None:
        """The settings were read: keep to ``hooks.timeout_s``, and tell the next hook."""
        self.budget = budget_s
        self.deadline = self.started + budget_s
        self._moved.set()
        remember_timeout(self.hooks, budget_s)

    def _watch(self) -> None:
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                break
            self._moved.wait(left)
            self._moved.clear()
        if not self._writing.acquire(blocking=False):
            return  # the answer is being written: the process ends right after
        with contextlib.suppress(Exception):
            self._log_timeout()
        os._exit(0)

    def _log_timeout(self) -> None:
        ms = round((time.monotonic() - self.started) * 1000, 1)
        detail = f"gave up after hooks.timeout_s = {self.budget:g} s (from the process's start)"
        run = {"event": self.name, "outcome": "timeout", "ms": ms, "chars": 0,
               "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "session_id": "",
               "cwd": "", "detail": detail}  # fmt: skip
        append_run(self.hooks, (json.dumps(run) + "\n").encode())

    @contextlib.contextmanager
    def finishing(self) -> Iterator[None]:
        with self._writing:
            yield


def append_run(hooks: str, line: bytes) -> None:
    """Append one line to the hooks log under its lock (:func:`.log.record` trims it later)."""
    os.makedirs(hooks, mode=0o700, exist_ok=True)
    lock = os.open(os.path.join(hooks, LOG_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fd = os.open(os.path.join(hooks, LOG_NAME), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    finally:
        os.close(lock)


def _print(output: str) -> None:
    if output:
        sys.stdout.write(output + "\n")
        sys.stdout.flush()


def answer(
    name: str, home: str | None, here: Callable[[], HereFn], *, whole_process: bool = True
) -> None:
    """Answer Claude Code's ``name`` event: print the hook JSON (or nothing); never raises.

    ``home`` is ``--home`` as given (``None``: ``$CLAWBACK_HOME``, else ``~/.clawback``);
    ``here`` answers in this process when the warm process did not
    (:func:`~.run.answer_here`, imported by the caller only then). ``whole_process``: this
    process exists for this hook (the console script), so its budget counts from the process's
    start and a :class:`Watchdog` ends it at the deadline; otherwise (a caller in a process of
    its own, the tests) the budget starts now and only the handler is bounded."""
    started = process_started() if whole_process else time.monotonic()
    if os.environ.get(SWITCH_ENV, "").strip() == "0":
        return
    folder = home_folder(home)
    raw = read_event()
    output = ask_warm(name, raw, folder, started)
    if output is not None:
        _print(output)
        return
    if not whole_process:
        output, _ = here()(name, raw, folder, started, lambda _: None)
        _print(output)
        return
    watchdog = Watchdog(name, hooks_folder(folder), started)
    output, abandoned = here()(name, raw, folder, started, watchdog.set_deadline)
    with watchdog.finishing():
        _print(output)
    if abandoned:  # a handler still runs past hooks.timeout_s: end now, without it
        os._exit(0)
