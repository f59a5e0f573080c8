"""The warm process: what a home's fresh processes would load, loaded once and asked over a
Unix socket.

Every Claude Code hook and every ``clawback search`` is a fresh process; loading the vectors of
a big archive takes 0.3-0.9 s, the model 0.2 s, and the hooks' own code a tenth of a second. So
one process per home (``clawback hook serve``, :mod:`.program`) holds them and
answers over a socket in the hooks folder (``warm.sock``, private to the user, at the address
:mod:`.address` gives): a hook's whole answer, or the chunks nearest a query (:mod:`.nearest`),
in milliseconds.

It serves clients at once, each on its own thread: a client that sends slowly, or a request
that takes long, never keeps the others waiting. Each request must arrive whole within
:data:`READ_S` and under :data:`MAX_REQUEST_BYTES`; at most :data:`MAX_CLIENTS` are served at
a time (one more is closed unanswered, and its client does the work itself).

It starts on demand and never lingers: the first client that finds none starts one apart (and
does its own work meanwhile); only one runs per home (a ``flock``); it exits after
``hooks.warm_minutes`` without a question, when asked to (``hooks uninstall``), when its socket
is taken away, when what it loaded no longer matches the home (``stop_when``), or when clawback
is reinstalled under it (the next client starts one running the new code). It only reads.
This module is the transport and the lifecycle; what the process answers is given to
:func:`serve`.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawback.core.locking import held, lock_free
from clawback.core.paths import Paths, ensure_private_dir, touch_private
from clawback.core.warm.address import SOCKET_NAME, socket_address

LOCK_NAME = "warm.lock"
STARTED_NAME = "warm.started"
RESTART_AFTER_S = 60.0
POLL_S = 0.01
ACCEPT_POLL_S = 0.25  # how often the accept loop looks at what would end it
TAKES_LOCK_S = 3.0  # a process started this long ago has taken the home's lock, or failed
MAX_REQUEST_BYTES = 4 * 1024 * 1024  # a hook event with a long prompt; nothing else is near it
READ_S = 2.0  # a client writes its request at once: one still sending after this is dropped
MAX_CLIENTS = 16
ASK_TIMEOUT_S = 2.0  # the warm process answers in milliseconds; more means it is stuck
STOP = {"stop": True}
STATUS = {"status": True}
SWITCH_ENV = "CLAWBACK_WARM"

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def allowed(warm_minutes: int) -> bool:
    """Whether this process may ask or start a warm process: ``hooks.warm_minutes`` above 0,
    and not ``CLAWBACK_WARM=0`` (one shell, a script, the test suite: nothing left running)."""
    return warm_minutes > 0 and os.environ.get(SWITCH_ENV, "").strip() != "0"


def start(paths: Paths) -> None:
    """Start this home's warm process apart (``clawback hook serve``); a client calls it once
    :func:`should_start` said yes."""
    from clawback.core.spawning import spawn  # only a client that starts one needs it

    spawn(paths, "hook", "serve")


def socket_path(paths: Paths) -> Path | None:
    """Where the server listens (:func:`.address.socket_address`)."""
    found = socket_address(str(paths.home))
    return None if found is None else Path(found)


def running(paths: Paths) -> bool:
    """Whether a warm process holds this home (it may still be loading, not yet listening)."""
    return not lock_free(paths.hooks / LOCK_NAME)


def should_start(paths: Paths) -> bool:
    """Whether a client should start a server now: none runs, and none was started in the last
    :data:`RESTART_AFTER_S` (a server that cannot start, say the model is gone, is then not
    started again on every prompt or search). Marks the start when it says yes."""
    if running(paths):
        return False
    if _started_within(paths, RESTART_AFTER_S):
        return False
    try:
        ensure_private_dir(paths.hooks)
        touch_private(paths.hooks / STARTED_NAME)
    except OSError:
        return False
    return True


def wait_listening(paths: Paths, timeout: float) -> bool:
    """Wait while this home's warm process loads, until it listens; ``False`` at once when none
    runs or is starting, as soon as it gives up (the model cannot load, say), or after
    ``timeout``. One started in the last :data:`TAKES_LOCK_S` (by the search before, a moment
    ago) counts as starting until it has taken the home's lock."""
    path = socket_path(paths)
    if path is None:
        return False
    began = time.monotonic()
    starting = _started_within(paths, TAKES_LOCK_S)
    seen = False
    while time.monotonic() - began < timeout:
        if path.exists():
            return True
        if running(paths):
            seen = True
        elif seen or not starting or time.monotonic() - began > TAKES_LOCK_S:
            return False
        time.sleep(POLL_S)
    return path.exists()


def _started_within(paths: Paths, seconds: float) -> bool:
    try:
        return time.time() - (paths.hooks / STARTED_NAME).stat().st_mtime < seconds
    except OSError:
        return False


class RequestRefused(Exception):
    """A request too large, or too slow to arrive."""


def read_line(conn: socket.socket, *, limit: int, within: float) -> bytes:
    """One newline-ended message from ``conn``, all of it within ``within`` seconds and under
    ``limit`` bytes; raises :class:`RequestRefused` otherwise (a connection closed early gives
    what arrived)."""
    deadline = time.monotonic() + within
    data = bytearray()
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise RequestRefused(f"the request did not arrive whole within {within:g} s")
        conn.settimeout(left)
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        data += chunk
        if len(data) > limit:
            raise RequestRefused(f"the request is larger than {limit // 1024 // 1024} MB")
    return bytes(data)


def ask(paths: Paths, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The server's answer to ``request`` (a JSON object), or ``None``: no server, too slow, or
    it failed. A question the server could not answer comes back as ``{"text": "", "detail":
    why}``."""
    path = socket_path(paths)
    if path is None or timeout <= 0 or not path.exists():
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
            answer = json.loads(read_line(conn, limit=MAX_REQUEST_BYTES, within=timeout))
    except (OSError, ValueError, RequestRefused):
        return None
    return answer if isinstance(answer, dict) else None


@dataclass
class _Serving:
    """What the accept loop and the client threads share."""

    idle_s: float
    last: float = field(default_factory=time.monotonic)
    busy: int = 0
    served: int = 0
    stopping: bool = False
    since: float = field(default_factory=time.time)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self) -> bool:
        with self.lock:
            if self.busy >= MAX_CLIENTS:
                return False
            self.busy += 1
            return True

    def answered(self) -> None:
        """A question (not a status or a stop) was answered: it keeps the process up."""
        with self.lock:
            self.served += 1
            self.last = time.monotonic()

    def end(self) -> None:
        with self.lock:
            self.busy -= 1

    def idle_for(self) -> float:
        with self.lock:
            return 0.0 if self.busy else time.monotonic() - self.last

    def status(self) -> dict[str, Any]:
        """What ``clawback health`` and the app show of the process."""
        with self.lock:
            idle_left = self.idle_s - (time.monotonic() - self.last)
            served = self.served
        return {
            "pid": os.getpid(),
            "since": self.since,
            "served": served,
            "memory_kb": memory_kb(),
            "idle_left_s": round(max(0.0, idle_left), 1),
        }


def memory_kb() -> int | None:
    """This process's resident memory in KiB (Linux), else its peak (``getrusage``)."""
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (ImportError, OSError):
        return None
    return peak // 1024 if os.uname().sysname == "Darwin" else peak


def serve(
    paths: Paths,
    answer: Answer,
    *,
    warm: Callable[[], object] | None = None,
    idle_s: float,
    stop_when: Callable[[], str | None] | None = None,
) -> str:
    """Answer requests until idle; returns why it stopped (for the log).

    ``answer(request) -> dict`` builds each reply, on the client's own thread (so it must be
    safe to call from several at once); ``warm()`` loads what is slow before the socket is
    bound, so a client never waits on a server that is still starting; ``stop_when()`` says
    why what was loaded no longer fits the home (checked between requests), or ``None``.
    """
    path = socket_path(paths)
    if path is None:
        return "no private place for its socket (the home's path is too long for one)"
    with held(paths.hooks / LOCK_NAME) as mine:
        if not mine:
            return "another warm process runs for this home"
        if warm is not None:
            warm()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # left by a server that was killed
        # Bound under another name and renamed once listening: a hook that finds the socket
        # can always connect to it.
        staging = path.with_name(f".{SOCKET_NAME}.{os.getpid()}")
        old_umask = os.umask(0o077)  # the socket is private to the user
        try:
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(str(staging))
        finally:
            os.umask(old_umask)
        try:
            server.listen(MAX_CLIENTS)
            os.replace(staging, path)
            return _accept_until_done(server, path, paths, answer, idle_s, stop_when)
        finally:
            server.close()
            for name in (staging, path):
                with contextlib.suppress(FileNotFoundError):
                    name.unlink()


def _accept_until_done(
    server: socket.socket,
    path: Path,
    paths: Paths,
    answer: Answer,
    idle_s: float,
    stop_when: Callable[[], str | None] | None,
) -> str:
    state = _Serving(idle_s)
    server.settimeout(ACCEPT_POLL_S)
    code = code_stamp()
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            conn = None
        if conn is not None:
            if code_stamp() != code:
                # Closed unanswered: the client does the work itself, and the next one
                # starts a warm process running the code now installed (at once: this
                # one's start does not count against RESTART_AFTER_S).
                conn.close()
                with contextlib.suppress(OSError):
                    (paths.hooks / STARTED_NAME).unlink()
                return "clawback was reinstalled"
            if state.begin():
                threading.Thread(
                    target=_serve_client, args=(conn, answer, state), daemon=True
                ).start()
            else:
                conn.close()  # every thread is busy: this client does its own work
        if state.stopping:
            return "asked to stop"
        if state.idle_for() >= idle_s:
            return f"idle for {idle_s:.0f} s"
        if not path.exists():
            return "its socket was removed"
        why = stop_when() if stop_when is not None else None
        if why:
            return why


def _serve_client(conn: socket.socket, answer: Answer, state: _Serving) -> None:
    """Read one request, answer it, close; never raises (one bad question never stops the
    server)."""
    try:
        with conn:
            question = False
            try:
                request = json.loads(read_line(conn, limit=MAX_REQUEST_BYTES, within=READ_S))
                question = request not in (STOP, STATUS)
                if request == STOP:
                    state.stopping = True
                    reply: dict[str, Any] = {"text": "", "detail": "stopping"}
                elif request == STATUS:
                    reply = state.status()
                elif isinstance(request, dict):
                    reply = answer(request)
                else:
                    reply = {"text": "", "detail": "not a request"}
            except Exception as exc:
                reply = {"text": "", "detail": _why(exc)}
            if question:
                state.answered()  # before the reply: its client may ask for the status next
            with contextlib.suppress(OSError):
                conn.settimeout(READ_S)
                conn.sendall(json.dumps(reply).encode("utf-8") + b"\n")
    finally:
        state.end()


def _why(exc: Exception) -> str:
    """What went wrong, on one line and masked as the index masks text: it may quote a
    request."""
    from clawback.core.text import seal

    return seal(" ".join(f"{type(exc).__name__}: {exc}".split()))[:500]


def code_stamp() -> tuple[int, int] | None:
    """What tells the installed clawback from the one this process started with: this
    module's file, which an upgrade (or any reinstall) replaces. Without it, the warm process
    would answer every prompt and search with the old code for up to ``hooks.warm_minutes``
    after ``pip install -U clawback``, and a newer client could ask it what it does not know."""
    try:
        st = os.stat(__file__)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def stop(paths: Paths, timeout: float = 5.0) -> bool:
    """Ask this home's warm process to stop (``hooks uninstall``, tests); whether it was up."""
    return ask(paths, STOP, timeout) is not None


def status(paths: Paths, timeout: float = 1.0) -> dict[str, Any] | None:
    """What the warm process says of itself (pid, memory held, idle time left, requests
    served), or ``None`` when none listens."""
    if not running(paths):
        return None
    return ask(paths, STATUS, timeout)


def summary(said: dict[str, Any]) -> str:
    """What :func:`status` said, for a person: ``holds 250 MB, leaves after 8 min idle``."""
    parts = []
    memory = said.get("memory_kb")
    if isinstance(memory, int | float):
        parts.append(f"holds {memory / 1024:.0f} MB")
    left = said.get("idle_left_s")
    if isinstance(left, int | float):
        parts.append(f"leaves after {max(1, round(left / 60))} min more idle")
    return ", ".join(parts) or "running"
