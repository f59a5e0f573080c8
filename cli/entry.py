"""The ``clawback`` console script's first step: what Claude Code runs skips the click app.

Claude Code runs ``clawback --home H hook <event>`` at every event, the ``user-prompt`` one on
every prompt, and ``clawback mcp`` with every session, waiting for its handshake; click with
the command table is a fifth of such a run. So exactly those shapes (what ``clawback hooks
install`` and ``clawback mcp install`` write), ``clawback --version``, and ``clawback ingest``
(``--json``) when nothing changed (what a scheduled run mostly finds), are answered here with
only what they need; anything else, including the same command with any other option, goes to
:func:`clawback.cli.main.main`.
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
    if args == ["mcp"] or args in (["ingest"], ["ingest", "--json"]):
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


def unchanged_ingest(home: str | None, *, as_json: bool) -> bool:
    """Print what ``clawback ingest`` prints when no configured source changed, and say so;
    ``False`` (nothing printed) when something did or the quick look cannot tell: then the
    full command runs, and says what is wrong if anything is."""
    try:
        from clawback.core.ingest.unchanged import unchanged_rescan
        from clawback.core.paths import Paths

        stats = unchanged_rescan(Paths.resolve(home))
    except Exception:  # the full command meets it again, and reports it
        return False
    if stats is None or (stats.known_skips and not as_json and sys.stderr.isatty()):
        return False  # a terminal gets the note in the full command's dim style
    if as_json:
        import json

        sys.stdout.write(json.dumps(stats.to_dict(), ensure_ascii=False, indent=2) + "\n")
        return True
    sys.stdout.write(stats.summary() + "\n")
    if stats.known_skips:
        sys.stderr.write(stats.known_skips_note() + "\n")
    return True


def main(argv: list[str] | None = None) -> None:
    from clawback.core.startup import prepare_process

    prepare_process()
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
        if rest[0] == "ingest":
            if unchanged_ingest(home, as_json=rest[1:] == ["--json"]):
                return
        else:
            from clawback.core.hooks.client import HOOK_NAMES

            if rest[1] in HOOK_NAMES:
                answer_event(rest[1], home)
                return
    from clawback.cli.main import main as click_main

    click_main(argv)
