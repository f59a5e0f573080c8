"""Run the ``clawback`` CLI in this process, as a user's shell would run the installed command.

Starting a Python process per call costs a fraction of a second of imports; the CLI tests make
hundreds of calls. :func:`run_cli` runs :func:`clawback.cli.main.main` (the same entry point and
error boundary as the console script) inside click's :meth:`CliRunner.isolation`, which swaps
stdin, stdout, stderr and environment variables for the call, as simonw/llm and sqlite-utils
test their CLIs. It returns a :class:`subprocess.CompletedProcess`, so assertions written for
the subprocess (``returncode``, ``stdout``, ``stderr``) hold unchanged.

What only a real process can show (exit by signal, Ctrl-C, the installed script itself) is tested
through :data:`CLAWBACK` in a handful of subprocess tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

#: The installed console script, for the tests that need a real process.
CLAWBACK = shutil.which("clawback", path=str(Path(sys.executable).parent)) or "clawback"


def _exit_code(code: object) -> int:
    """What the interpreter makes of ``sys.exit(code)``: None is 0, text is printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_cli(
    *args: str,
    home: Path | None = None,
    input: str | None = None,
    env: Mapping[str, str | None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``clawback ARGS`` in-process: ``home`` is ``$CLAWBACK_HOME``, ``input`` its stdin.

    ``env`` overrides variables for this call only (``None`` unsets one). The fake claude's
    ``FAKE_CLAUDE_*`` switches are unset unless given, so one call's mode never leaks into the
    next. An exception that escapes ``main`` is printed as the interpreter would (a traceback on
    stderr, exit code 1), so "no traceback" assertions see it.
    """
    from clawback.cli.main import main

    with contextlib.suppress(RuntimeError):
        asyncio.get_running_loop()
        raise AssertionError(
            "run_cli runs commands that start their own event loop (asyncio.run): call it from "
            "a sync test, or through asyncio.to_thread from an async one"
        )
    overrides: dict[str, str | None] = {k: None for k in os.environ if k.startswith("FAKE_CLAUDE_")}
    if home is not None:
        overrides["CLAWBACK_HOME"] = str(home)
    overrides.update(env or {})
    with CliRunner().isolation(input=input, env=overrides) as streams:
        stdout, stderr = streams[0], streams[1]
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except Exception:
            traceback.print_exc(file=sys.stderr)
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        out = stdout.getvalue().decode("utf-8", errors="replace")
        err = stderr.getvalue().decode("utf-8", errors="replace")
    return subprocess.CompletedProcess(["clawback", *args], code, out, err)
