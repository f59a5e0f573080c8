"""The warm process's program (``clawback hook serve``): what it loads, what it answers and when
the home has changed under it. :mod:`.server` is the transport and the lifecycle it runs on.

It loads the vector side once and shares it among its client threads (:class:`SharedNearest`),
answers a nearest-chunks request itself (:func:`~.nearest.answer_nearest`) and hands every other
request to the answer it was given (the hooks give theirs: a whole hook event, run as the hook's
own process would run it). A home without vectors has a warm process too, when its hooks start
one: it answers by words, and leaves as soon as the home has vectors (the next event starts one
that loads them); one with vectors leaves when they are gone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from clawback.core.config import Config
from clawback.core.embeddings import deferred_nearest
from clawback.core.paths import Paths
from clawback.core.search import NearestChunks
from clawback.core.warm.nearest import NEAREST, answer_nearest
from clawback.core.warm.server import serve

NO_VECTORS = {"text": "", "detail": "this warm process holds no vectors"}

#: What the process answers besides the nearest chunks: ``(request, the shared vector side or
#: None) -> reply``.
OtherRequests = Callable[[dict[str, Any], NearestChunks | None], dict[str, Any]]


class SharedNearest:
    """A vector side several client threads may ask: one query at a time (each takes
    milliseconds; the model and the store are not meant to be shared across threads)."""

    def __init__(self, nearest: NearestChunks) -> None:
        self._nearest = nearest
        self._lock = threading.Lock()

    def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
        with self._lock:
            return self._nearest.nearest(query, limit)


def serve_home(
    paths: Paths,
    config: Config,
    answer: OtherRequests,
    *,
    warm_up: Callable[[], None] = lambda: None,
) -> str:
    """Run the warm process for this home until it is idle; returns why it stopped.
    ``warm_up`` loads what the first request would (then the model and the vectors load)."""
    had_vectors = paths.vectors.exists()
    loaded = deferred_nearest(paths.vectors, config.embeddings)
    shared = None if loaded is None else SharedNearest(loaded)

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        if NEAREST in request:
            found = answer_nearest(shared, request) if shared is not None else None
            return found or NO_VECTORS
        return answer(request, shared)

    def load() -> None:
        warm_up()
        if shared is not None:
            shared.nearest("warm up", 1)

    def what_changed() -> str | None:
        if not had_vectors and paths.vectors.exists():
            return "the home has vectors now"
        if had_vectors and not paths.vectors.exists():
            return "the home has no vectors any more"
        return None

    return serve(
        paths,
        reply,
        warm=load,
        idle_s=config.hooks.warm_minutes * 60.0,
        stop_when=what_changed,
    )
