"""Every way a ``claude`` call can fail, as exceptions whose messages are written for the user.

Each carries whatever reply text had streamed before the failure (``partial_text``), so the
chat keeps it. :func:`error_for_result` maps the CLI's own error results (``is_error: true``
on stdout, exit code 1) to the matching class.
"""

from __future__ import annotations

import asyncio
import signal

from clawback.core.claude.events import Result
from clawback.core.errors import ClawbackError

CLAUDE_ENV = "CLAWBACK_CLAUDE"
INSTALL_HINT = "npm install -g @anthropic-ai/claude-code"

__all__ = [
    "CLAUDE_ENV",
    "INSTALL_HINT",
    "ClaudeAPIError",
    "ClaudeAuthError",
    "ClaudeBadOutput",
    "ClaudeBareNotLoggedIn",
    "ClaudeCancelled",
    "ClaudeError",
    "ClaudeGone",
    "ClaudeKilled",
    "ClaudeNotFound",
    "ClaudeNotLoggedIn",
    "ClaudeOverloaded",
    "ClaudeRateLimited",
    "ClaudeTimeout",
    "error_for_result",
]


class ClaudeError(ClawbackError):
    """A ``claude`` call failed. ``partial_text`` is the reply text that streamed before it did."""

    def __init__(self, message: str, *, partial_text: str = "") -> None:
        super().__init__(message)
        self.partial_text = partial_text


class ClaudeNotFound(ClaudeError):
    """The ``claude`` executable is not installed, not on PATH, or not runnable."""

    def __init__(self, command: str, reason: str = "") -> None:
        self.command = command
        why = f" ({reason})" if reason else ""
        super().__init__(
            f"Could not run the claude CLI {command!r}{why}. clawback chats through Claude Code: "
            f"install it with `{INSTALL_HINT}`, or set {CLAUDE_ENV} to the full path of your "
            "claude executable."
        )


class ClaudeAPIError(ClaudeError):
    """The CLI answered, but with ``is_error: true`` (it exits 1): the API or the account failed.

    ``result_text`` is the CLI's own message; ``status`` the API's HTTP status, when there was one.
    """

    def __init__(self, result: Result, *, partial_text: str = "", message: str = "") -> None:
        self.result = result
        self.result_text = result.reply
        self.status = result.api_error_status
        super().__init__(
            message or f"claude reported an error: {result.reply or 'no details given'}",
            partial_text=partial_text,
        )


class ClaudeNotLoggedIn(ClaudeAPIError):
    """Claude Code has no login and no API key."""

    def __init__(self, result: Result, *, partial_text: str = "") -> None:
        super().__init__(
            result,
            partial_text=partial_text,
            message=(
                "Claude Code is not logged in. Run `claude /login` in a terminal (or set "
                f"ANTHROPIC_API_KEY), then try again. (claude said: {result.reply})"
            ),
        )


class ClaudeBareNotLoggedIn(ClaudeNotLoggedIn):
    """``claude -p`` said "Not logged in" although Claude Code is logged in (``claude auth
    status``): the call ran bare (``--bare``, or a Claude Code whose ``-p`` is bare by default),
    which reads only ``ANTHROPIC_API_KEY`` or an ``apiKeyHelper``, never the ``/login`` login."""

    def __init__(self, result: Result, method: str, *, partial_text: str = "") -> None:
        ClaudeAPIError.__init__(
            self,
            result,
            partial_text=partial_text,
            message=(
                f"claude ran bare and so ignored your Claude Code login ({method}): bare `claude"
                " -p` reads only ANTHROPIC_API_KEY or an apiKeyHelper. Set ANTHROPIC_API_KEY (or"
                " an apiKeyHelper in Claude Code's settings), or take --bare out of"
                " chat.extra_args."
            ),
        )
        self.method = method


class ClaudeAuthError(ClaudeAPIError):
    """The API refused the credentials (401)."""

    def __init__(self, result: Result, *, partial_text: str = "") -> None:
        super().__init__(
            result,
            partial_text=partial_text,
            message=(
                "The Anthropic API refused Claude Code's credentials (401). Run `claude /login` "
                f"again, or check ANTHROPIC_API_KEY. (claude said: {result.reply})"
            ),
        )


class ClaudeRateLimited(ClaudeAPIError):
    """The API is rate-limiting this account (429)."""

    def __init__(self, result: Result, *, partial_text: str = "") -> None:
        super().__init__(
            result,
            partial_text=partial_text,
            message=(
                "The Anthropic API is rate-limiting you (429); wait a little and try again. "
                f"(claude said: {result.reply})"
            ),
        )


class ClaudeOverloaded(ClaudeAPIError):
    """The API is overloaded (529)."""

    def __init__(self, result: Result, *, partial_text: str = "") -> None:
        super().__init__(
            result,
            partial_text=partial_text,
            message=(
                "The Anthropic API is overloaded right now (529); try again in a moment. "
                f"(claude said: {result.reply})"
            ),
        )


class ClaudeBadOutput(ClaudeError):
    """The executable printed something that is not Claude Code's JSON."""

    def __init__(self, line: str, *, partial_text: str = "", returncode: int | None = None) -> None:
        self.line = line
        self.returncode = returncode
        shown = line if len(line) <= 200 else line[:200] + "…"
        super().__init__(
            f"claude printed something that is not its JSON output: {shown!r}. Check that "
            f"chat.claude_command (or {CLAUDE_ENV}) runs Claude Code, and that it is up to date.",
            partial_text=partial_text,
        )


class ClaudeKilled(ClaudeError):
    """The process ended without its final ``result`` line: killed, crashed, or refused to start.

    ``returncode`` is the exit status (negative: killed by that signal), ``signal_name`` the
    signal's name if it was one, ``stderr_tail`` the end of what it printed on stderr.
    """

    def __init__(self, returncode: int | None, stderr_tail: str, *, partial_text: str = "") -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.signal_name: str | None = None
        if returncode is not None and returncode < 0:
            try:
                self.signal_name = signal.Signals(-returncode).name
            except ValueError:
                self.signal_name = f"signal {-returncode}"
            how = f"was killed by {self.signal_name}"
        else:
            how = f"exited with code {returncode}"
        said = f": {stderr_tail.strip()}" if stderr_tail.strip() else "."
        super().__init__(
            f"claude {how} before it finished the reply{said}", partial_text=partial_text
        )


class ClaudeGone(ClaudeKilled):
    """A live process had ended before it read anything of the turn: nothing was sent, so the
    turn may go to a fresh process instead."""


class ClaudeTimeout(ClaudeError):
    """The call did not finish within the configured time, so clawback stopped it."""

    def __init__(self, timeout: float, *, partial_text: str = "") -> None:
        self.timeout = timeout
        super().__init__(
            f"claude did not finish within {timeout:g} s, so clawback stopped it. The API may be "
            "slow, rate-limited or down (claude retries on its own for minutes); try again later "
            "or raise chat.timeout_seconds.",
            partial_text=partial_text,
        )


class ClaudeCancelled(ClaudeError, asyncio.CancelledError):
    """The caller cancelled the call; the process group was stopped.

    It is also an :class:`asyncio.CancelledError`, so task cancellation keeps working: catch it
    to keep ``partial_text``, then re-raise. (On Python 3.11, ``asyncio.timeout()`` lets a
    subclass through instead of turning it into ``TimeoutError``; use the runner's own
    ``timeout``, or ``asyncio.wait_for``, which both behave.)
    """

    def __init__(self, *, partial_text: str = "") -> None:
        super().__init__("The claude call was cancelled.", partial_text=partial_text)


def error_for_result(result: Result, partial_text: str = "") -> ClaudeAPIError:
    """The exception for a ``result`` line with ``is_error: true``."""
    text = result.reply
    status = result.api_error_status
    if status is None and ("Not logged in" in text or "/login" in text):
        return ClaudeNotLoggedIn(result, partial_text=partial_text)
    if status == 401 or result.api_error_type == "authentication_error":
        return ClaudeAuthError(result, partial_text=partial_text)
    if status == 429 or result.api_error_type == "rate_limit_error":
        return ClaudeRateLimited(result, partial_text=partial_text)
    if status == 529 or result.api_error_type == "overloaded_error":
        return ClaudeOverloaded(result, partial_text=partial_text)
    return ClaudeAPIError(result, partial_text=partial_text)


# --------------------------------------------------------------------------------------- result
