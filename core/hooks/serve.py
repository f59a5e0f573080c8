"""The hooks' part of the warm process (``clawback hook serve``): a whole hook event answered
there. The process itself (the vectors it holds, the nearest chunks it answers, when it stops)
is :func:`clawback.core.warm.program.serve_home`; this module gives it the hooks' answer.

A hook event (``{"hook": name, "event": the JSON Claude Code sent, "started": when the hook's
process started}``) is run by :func:`~.run.run_hook`, as the hook's own process would run it,
with the handlers' code already imported and the vectors loaded (:class:`~.run.WarmResources`);
it ends at the same deadline, counted from the hook process's start.
"""

from __future__ import annotations

import importlib
from typing import Any

from clawback.core.config import Config
from clawback.core.hooks.client import PASSED_ENV, remember_timeout
from clawback.core.hooks.run import HANDLERS, WarmResources, run_hook
from clawback.core.paths import Paths
from clawback.core.search import NearestChunks
from clawback.core.warm import serve_home


def _load_handlers() -> None:
    """Load what the first event would: every handler's code."""
    for target in HANDLERS.values():
        importlib.import_module(f"clawback.core.hooks.{target.partition(':')[0]}")
    importlib.import_module("clawback.core.hooks.recall_block")


def serve_hooks(paths: Paths, config: Config) -> str:
    """Run the warm process for this home, answering hook events, until it is idle; returns why
    it stopped."""
    remember_timeout(str(paths.hooks), float(config.hooks.timeout_s))

    def answer_event(request: dict[str, Any], nearest: NearestChunks | None) -> dict[str, Any]:
        name, event = request.get("hook"), request.get("event")
        if not isinstance(name, str) or name not in HANDLERS or not isinstance(event, str):
            return {"text": "", "detail": "not a request this process answers"}
        started, passed = request.get("started"), request.get("env")
        environ = {
            key: value
            for key, value in (passed.items() if isinstance(passed, dict) else ())
            if key in PASSED_ENV and isinstance(value, str)
        }  # the hook's own, not this process's (started with CLAWBACK_HOOKS=0)
        result = run_hook(
            name,
            event.encode("utf-8", "surrogatepass"),
            paths.home,
            started=float(started) if isinstance(started, int | float) else None,
            warm=WarmResources(nearest=nearest),
            budget=lambda timeout_s: remember_timeout(str(paths.hooks), timeout_s),
            environ=environ,
        )
        return {"output": result.output}

    return serve_home(paths, config, answer_event, warm_up=_load_handlers)
