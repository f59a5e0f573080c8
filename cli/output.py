"""How the CLI speaks: rich text for people, stable JSON for programs, one line per error.

Building a rich console costs more than a whole ``clawback search``, so the consoles here are
made on first use; commands on the fast path (search) print with click alone.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:  # rich is imported on first use, not to break a cycle
    from rich.console import Console


class _LazyConsole:
    """A rich ``Console`` built on first attribute access.

    Hand rich itself :attr:`console`, never this proxy: rich uses the console as a context
    manager (a progress bar's every refresh does), which a proxy's ``__getattr__`` cannot serve.
    """

    def __init__(self, *, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=True)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


_LOADED = time.monotonic()  # the command line's first module: the fallback start of a run

out: Any = _LazyConsole(stderr=False)
err: Any = _LazyConsole(stderr=True)


def escape(text: str) -> str:
    """Text made safe to embed in rich markup (rich's own ``escape``, imported when needed)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def print_json(data: Any) -> None:
    import json  # only for --json output; most runs print text

    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def note(text: str) -> None:
    """A dim line on stderr: what happened besides the command's own output."""
    click.secho(text, err=True, dim=True)


def error_line(message: str) -> None:
    """The one line a failure prints: ``error: ...`` on stderr, never wrapped."""
    click.echo(click.style("error:", fg="red") + " " + " ".join(message.split()), err=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print the one error line and exit with ``code``."""
    error_line(message)
    sys.exit(code)


def on_a_terminal() -> bool:
    """A person at both ends: a question can be asked on stdin and its answer seen on stdout."""
    return bool(sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty())


def waited() -> float:
    """Seconds since this process started: what a person waits for a command, Python's own
    start-up included. Linux says when the process began; elsewhere it counts from when the
    command line was loaded, a few tens of milliseconds later."""
    try:
        with open("/proc/self/stat", "rb") as stat, open("/proc/uptime", "rb") as uptime:
            began = int(stat.read().rsplit(b")", 1)[1].split()[19])  # field 22: starttime
            now = float(uptime.read().split()[0])
        seconds = now - began / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        seconds = -1.0
    loaded = time.monotonic() - _LOADED
    return seconds if loaded <= seconds < loaded + 60 else loaded  # a clock that disagrees


def duration(seconds: float) -> str:
    """``450 ms`` under a second, ``1.7 s`` from there."""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"
