"""What the warm process of a home answers (``clawback hook serve``): whole hook events, and the
chunks nearest a query for ``clawback search`` and ``clawback chat`` turns.

A hook event (``{"hook": name, "event": the JSON Claude Code sent, "started": when the hook's
process started}``) is run by :func:`~.run.run_hook`, as the hook's own process would run it,
with the handlers' code already imported and the vectors loaded (:class:`~.run.WarmResources`);
it ends at the same deadline, counted from the hook process's start. A nearest-chunks request
(:func:`~clawback.core.warm.nearest.answer_nearest`) is answered from the same vectors.

A home without vectors has a warm process too, when its hooks start one: it answers events by
words, and leaves as soon as the home has vectors (the next event starts one that loads them);
one with vectors leaves when they are gone.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from typing import Any

from clawback.core.config import Config
from clawback.core.embeddings import deferred_nearest
from clawback.core.hooks.client import PASSED_ENV, remember_timeout
from clawback.core.hooks.run import HANDLERS, WarmResources, run_hook
from clawback.core.paths import Paths
from clawback.core.search import NearestChunks
from clawback.core.warm.nearest import NEAREST, answer_nearest
from clawback.core.warm.server import serve

NO_VECTORS = {"text": "", "detail": "this warm process holds no vectors"}


class SharedNearest:
    """A vector side several client threads may ask: one query at a time (each takes
    milliseconds; the model and the store are not meant to be shared across threads)."""

    def __init__(self, nearest: NearestChunks) -> None:
        self._nearest = nearest
        self._lock = threading.Lock()

    def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
        with self._lock:
            return self._nearest.nearest(query, limit)


def _warm_up(nearest: NearestChunks | None) -> None:
    """Load what the first question would: every handler's code, and the model and vectors."""
    for target in HANDLERS.values():
        importlib.import_module(f"clawback.core.hooks.{target.partition(':')[0]}")
    importlib.import_module("clawback.core.hooks.recall_block")
    if nearest is not None:
        nearest.nearest("warm up", 1)


def serve_hooks(paths: Paths, config: Config) -> str:
    """Run the warm process for this home until it is idle; returns why it stopped."""
    had_vectors = paths.vectors.exists()
    loaded = deferred_nearest(paths.vectors, config.embeddings)
    shared = None if loaded is None else SharedNearest(loaded)
    resources = WarmResources(nearest=shared)
    remember_timeout(str(paths.hooks), float(config.hooks.timeout_s))

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        if NEAREST in request:
            found = answer_nearest(shared, request) if shared is not None else None
            return found or NO_VECTORS
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
            warm=resources,
            budget=lambda timeout_s: remember_timeout(str(paths.hooks), timeout_s),
            environ=environ,
        )
        return {"output": result.output}

    def what_changed() -> str | None:
        if not had_vectors and paths.vectors.exists():
            return "the home has vectors now"
        if had_vectors and not paths.vectors.exists():
            return "the home has no vectors any more"
        return None

    return serve(
        paths,
        reply,
        warm=lambda: _warm_up(shared),
        idle_s=config.hooks.warm_minutes * 60.0,
        stop_when=what_changed,
    )
