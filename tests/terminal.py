"""A command run on a pseudo-terminal, as a person runs it: keys in, screen text out.

For what only a terminal shows (``clawback chat`` as a REPL: its prompt, Ctrl+C, Ctrl+D). The
command is the session leader with the terminal as its controlling one, so Ctrl+C is SIGINT
from the terminal, as in a shell.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import re
import select
import signal
import subprocess
import termios
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[=>]")
CTRL_C, CTRL_D = "\x03", "\x04"


class Terminal:
    """``argv`` on a fresh pseudo-terminal; :meth:`expect` waits for text on it."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None = None) -> None:
        master, slave = os.openpty()
        self._master = master

        def controlling_terminal() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
            # A shell runs a foreground command with Ctrl+C's signals at their defaults, even
            # when it was itself started in the background with them ignored (as CI may be).
            for sig in (signal.SIGINT, signal.SIGQUIT):
                signal.signal(sig, signal.SIG_DFL)

        self.proc = subprocess.Popen(
            list(argv), stdin=slave, stdout=slave, stderr=slave, env=dict(env), cwd=cwd,
            start_new_session=True, preexec_fn=controlling_terminal, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.seen = ""  # everything shown so far, escape sequences removed
        self._read_to = 0  # where the last expect() stopped
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # split chars

    def send(self, keys: str) -> None:
        os.write(self._master, keys.encode())

    def line(self, text: str) -> None:
        self.send(text + "\r")

    def _pump(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self._master, 65536)
        except OSError:  # the other end closed: the command ended
            return False
        self.seen += ANSI.sub("", self._decoder.decode(chunk)).replace("\r", "")
        return bool(chunk)

    def expect(self, text: str | Callable[[str], bool], timeout: float = 20.0) -> str:
        """Wait until ``text`` shows after what the last call saw; what came in between."""
        deadline = time.monotonic() + timeout
        found = (lambda s: text in s) if isinstance(text, str) else text
        while True:
            fresh = self.seen[self._read_to :]
            if found(fresh):
                at = fresh.find(text) + len(text) if isinstance(text, str) else len(fresh)
                self._read_to += at
                return fresh[:at]
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"not shown within {timeout:g} s: {text!r}; shown:\n{fresh}")
            self._pump(min(left, 0.2))

    def wait_until_reading(self, timeout: float = 20.0) -> None:
        """Wait until the command sleeps waiting for a key.

        CPython's readline sees a SIGINT only while it waits in select(): a Ctrl+C that lands
        while it is still echoing the last key is kept until the line ends. A person's Ctrl+C
        comes long after the echo; a test's comes right after it unless it waits here.
        """
        deadline = time.monotonic() + timeout
        asleep = 0
        while asleep < 3:  # three looks in a row, 50 ms apart
            if time.monotonic() > deadline:
                raise AssertionError(f"still busy after {timeout:g} s")
            self._pump(0.05)
            asleep = asleep + 1 if _waits_for_input(self.proc.pid) else 0

    def wait(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.05)
        while self._pump(0.05):
            pass
        return self.proc.wait(max(0.1, deadline - time.monotonic()))

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        with contextlib.suppress(OSError):
            os.close(self._master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _waits_for_input(pid: int) -> bool:
    """The process's main thread sleeps in select() or poll() (where the kernel says)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rpartition(")")[2].split()[0]
        with open(f"/proc/{pid}/wchan") as wchan:
            waiting_in = wchan.read()
    except OSError:
        return False
    if waiting_in in ("", "0"):  # the kernel hides it: sleeping is the best sign left
        return state == "S"
    return state == "S" and ("poll" in waiting_in or "select" in waiting_in)
