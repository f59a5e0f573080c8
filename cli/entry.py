"""The ``clawback`` console script's first step: Claude Code's hook events skip the click app.

Claude Code runs ``clawback --home H hook <event>`` at every event, the ``user-prompt`` one on
every prompt, and click with the command table is a fifth of such a run. So exactly that shape
(what ``clawback hooks install`` writes) is answered here, with the hook runner alone; anything
else, including a hook command with any other option, goes to :func:`clawback.cli.main.main`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _hook_call(args: list[str]) -> tuple[str | None, str] | None:
    """``(home or None, event)`` when ``args`` is ``[--home H] hook <event>``."""
    home: str | None = None
    if len(args) == 4 and args[0] == "--home":
        home, args = args[1], args[2:]
    elif len(args) == 3 and args[0].startswith("--home="):
        home, args = args[0].partition("=")[2], args[1:]
    if len(args) == 2 and args[0] == "hook" and not args[1].startswith("-"):
        return home, args[1]
    return None


def answer_event(name: str, home: str | Path | None) -> None:
    """Read the event on stdin, print the hook's answer (or nothing), and exit 0."""
    from clawback.core.hooks.events import MAX_EVENT_BYTES
    from clawback.core.hooks.run import run_hook

    stdin = sys.stdin
    raw = b"" if stdin is None or stdin.isatty() else stdin.buffer.read(MAX_EVENT_BYTES + 1)
    result = run_hook(name, raw, home)
    if result.output:
        sys.stdout.write(result.output + "\n")
        sys.stdout.flush()
    if result.abandoned:  # a handler still runs past hooks.timeout_s: end now, without it
        os._exit(0)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    call = _hook_call(args)
    if call is not None:
        from clawback.core.hooks.run import HANDLERS

        home, name = call
        if name in HANDLERS:
            answer_event(name, home or os.environ.get("CLAWBACK_HOME") or None)
            return
    from clawback.cli.main import main as click_main

    click_main(argv)
