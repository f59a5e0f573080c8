"""The ``clawback`` console script's first step: what Claude Code runs skips the click app.

Claude Code runs ``clawback --home H hook <event>`` at every event, the ``user-prompt`` one on
every prompt, and ``clawback mcp`` with every session, waiting for its handshake; click with
the command table is a fifth of such a run. So exactly those shapes (what ``clawback hooks
install`` and ``clawback mcp install`` write), and ``clawback --version``, are answered here
with only what they need; anything else, including the same command with any other option,
goes to :func:`clawback.cli.main.main`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs a hook 5-10 ms
if TYPE_CHECKING:
    from pathlib import Path

    from clawback.core.hooks.client import HereFn


def _direct_call(args: list[str]) -> tuple[str | None, list[str]] | None:
    """``(home or None, the rest)`` when ``args`` is ``[--home H] hook <event>`` or
    ``[--home H] mcp``."""
    home: str | None = None
    if len(args) >= 2 and args[0] == "--home":
        home, args = args[1], args[2:]
    elif args and args[0].startswith("--home="):
        home, args = args[0].partition("=")[2], args[1:]
    if len(args) == 2 and args[0] == "hook" and not args[1].startswith("-"):
        return home, args
    if args == ["mcp"]:
        return home, args
    return None


def answer_event(name: str, home: str | Path | None, *, whole_process: bool = True) -> None:
    """Read the event on stdin, print the hook's answer (or nothing): the warm process's when
    it runs (:mod:`clawback.core.hooks.client`). ``whole_process``: this process exists for
    the hook (the console script's own path), see :func:`~clawback.core.hooks.client.answer`."""
    from clawback.core.hooks.client import answer

    def here() -> HereFn:
        from clawback.core.hooks.run import answer_here

        return answer_here

    answer(name, None if home is None else str(home), here, whole_process=whole_process)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):  # what click would print, without click
        from clawback.core import __version__

        sys.stdout.write(f"clawback, version {__version__}\n")
        return
    call = _direct_call(args)
    if call is not None:
        home, rest = call
        home = home or os.environ.get("CLAWBACK_HOME") or None
        if rest == ["mcp"]:
            from clawback.cli.mcp_serve import serve_mcp

            serve_mcp(home)
            return
        from clawback.core.hooks.client import HOOK_NAMES

        if rest[1] in HOOK_NAMES:
            answer_event(rest[1], home)
            return
    from clawback.cli.main import main as click_main

    click_main(argv)
