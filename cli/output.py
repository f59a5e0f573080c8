"""How the CLI speaks: rich text for people, stable JSON for programs, one line per error.

Building a rich console costs more than a whole ``clawback search``, so the consoles here are
made on first use; commands on the fast path (search) print with click alone.
"""

from __future__ import annotations

import sys
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
