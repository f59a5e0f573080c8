"""The warm process: the vectors and the model loaded once per home, asked over a Unix socket.

A fresh process needs 0.3-0.9 s to load the vectors of a big archive and 0.2 s for the model
before its first query by meaning; the ``user-prompt`` hook and ``clawback search`` are fresh
processes each time. So a home with vectors keeps one warm process that holds them
(``clawback hook serve``): the hook asks it for a whole recall block, ``clawback search`` for
the chunks nearest a query (:mod:`.nearest`), over a socket in the hooks folder
(``warm.sock``, private to the user), and gets an answer in milliseconds.

It starts on demand and never lingers: the first client that finds none starts one apart (and
does its own work meanwhile); only one runs per home (a ``flock``); it exits after
``hooks.warm_minutes`` without a question, when asked to (``hooks uninstall``), when its socket
is taken away, when the home loses its vectors, or when clawback is reinstalled under it (the
next client starts one running the new code). It only reads. This module is the transport
and the lifecycle; what the process answers is given to :func:`serve`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from clawback.core.locking import held, lock_free
from clawback.core.paths import PRIVATE_DIR, Paths, ensure_private_dir, touch_private

SOCKET_NAME = "warm.sock"
LOCK_NAME = "warm.lock"
STARTED_NAME = "warm.started"
RESTART_AFTER_S = 60.0
POLL_S = 0.01
TAKES_LOCK_S = 3.0  # a process started this long ago has taken the home's lock, or failed
MAX_REQUEST_BYTES = 4 * 1024 * 1024
ASK_TIMEOUT_S = 2.0  # the warm process answers in milliseconds; more means it is stuck
STOP = {"stop": True}
#: a Unix socket's path is limited to about 104-108 bytes by the OS
MAX_SOCKET_PATH = 100
SWITCH_ENV = "CLAWBACK_WARM"


def allowed(warm_minutes: int) -> bool:
    """Whether this process may ask or start a warm process: ``hooks.warm_minutes`` above 0,
    and not ``CLAWBACK_WARM=0`` (one shell, a script, the test suite: nothing left running)."""
    return warm_minutes > 0 and os.environ.get(SWITCH_ENV, "").strip() != "0"


def start(paths: Paths) -> None:
    """Start this home's warm process apart (``clawback hook serve``); a client calls it once
    :func:`should_start` said yes."""
    from clawback.core.claude.mcp import spawn  # only a client that starts one needs it

    spawn(paths, "hook", "serve")


def socket_path(paths: Paths) -> Path | None:
    """Where the server listens: ``<home>/hooks/warm.sock``, or, for a home whose path is too
    long for a socket, a name made from it in a private folder of the temp dir (``None`` if that
    folder is not safely ours)."""
    path = paths.hooks / SOCKET_NAME
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    folder = Path(tempfile.gettempdir()) / f"clawback-{os.getuid()}"
    digest = hashlib.blake2b(os.fsencode(paths.home), digest_size=10).hexdigest()
    path = folder / f"{digest}.sock"
    if len(os.fsencode(path)) > MAX_SOCKET_PATH or not private_folder(folder):
        return None
    return path


def private_folder(folder: Path) -> bool:
    """Whether ``folder`` (in a folder other users can write, the temp dir) is a folder of this
    user's that nobody else can write, made so when missing.

    It is never followed or changed when it is anything else: a link another user planted
    there would otherwise make this process chmod the link's target, and a folder another
    user can write would let their server answer prompts in this one's place."""
    try:
        os.mkdir(folder, PRIVATE_DIR)  # never follows a link: one in its place is "exists"
        made = True
    except FileExistsError:
        made = False
    except OSError:
        return False
    try:
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return False
        if made and st.st_mode & 0o777 != PRIVATE_DIR:  # the umask took more than it should
            os.chmod(folder, PRIVATE_DIR)
            st = os.lstat(folder)
    except OSError:
        return False
    return st.st_mode & 0o777 == PRIVATE_DIR


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


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n") and len(data) <= MAX_REQUEST_BYTES:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


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
            answer = json.loads(_read_line(conn))
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def serve(paths: Paths, answer: Any, *, warm: Any = None, idle_s: float) -> str:
    """Answer requests until idle; returns why it stopped (for the log).

    ``answer(request) -> dict`` builds each reply; ``warm()`` loads what is slow before the
    socket is bound, so a client never waits on a server that is still starting.
    """
    path = socket_path(paths)
    if path is None:
        return "the home's path is too long for a socket"
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
            server.listen(8)
            os.replace(staging, path)
            server.settimeout(idle_s)
            code = code_stamp()
            while True:
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    return f"idle for {idle_s:.0f} s"
                with conn:
                    if code_stamp() != code:
                        # Closed unanswered: the client does the work itself, and the next one
                        # starts a warm process running the code now installed (at once: this
                        # one's start does not count against RESTART_AFTER_S).
                        with contextlib.suppress(OSError):
                            (paths.hooks / STARTED_NAME).unlink()
                        return "clawback was reinstalled"
                    if not _answer_one(conn, answer):
                        return "asked to stop"
                if not path.exists():
                    return "its socket was removed"
                if not paths.vectors.exists():
                    return "the home has no vectors any more"
        finally:
            server.close()
            for name in (staging, path):
                with contextlib.suppress(FileNotFoundError):
                    name.unlink()


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


def _answer_one(conn: socket.socket, answer: Any) -> bool:
    """Answer one request; ``False`` when it asked the server to stop."""
    conn.settimeout(5.0)
    going_on = True
    try:
        request = json.loads(_read_line(conn))
        if request == STOP:
            reply, going_on = {"text": "", "detail": "stopping"}, False
        elif isinstance(request, dict):
            reply = answer(request)
        else:
            reply = {"text": "", "detail": "not a request"}
    except Exception as exc:  # one bad question never stops the server
        reply = {"text": "", "detail": f"{type(exc).__name__}: {exc}"}
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(reply).encode("utf-8") + b"\n")
    return going_on


def stop(paths: Paths, timeout: float = 5.0) -> bool:
    """Ask this home's warm process to stop (``hooks uninstall``, tests); whether it was up."""
    return ask(paths, STOP, timeout) is not None
