"""The chunks nearest a query, from the warm process when one runs, else from this process.

``clawback search`` runs the one search (:func:`~clawback.core.search.front.find`) in its own
process: reading the index is quick to start, loading the model and every vector is not (0.5 s
on the shared transcripts, about 1 s on a 200 MB archive). So only that vector side is asked of
the warm process (:mod:`.server`): :class:`WarmNearest` is the ``NearestChunks`` search takes,
and the warm process answers it with :func:`answer_nearest`. Everything else (the keyword side,
filters, fusion, the floor, snippets) runs here, so a search's results are the same warm or not:
the warm process runs the same index over the same store, and JSON carries the similarities
(Python floats) exactly.

When no warm process listens, ``start`` starts one apart (at most once a minute,
:func:`~.server.should_start`) and the search waits for it to load, as it would have waited for
its own loading; it then answers this search and the next ones. When none can come up (the model
cannot load, starting is off), the neighbours come from ``local``: the model and vectors loaded
in this process, as before the warm process existed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from clawback.core.paths import Paths
from clawback.core.search.engine import NearestChunks
from clawback.core.warm.server import ask, should_start, wait_listening

NEAREST = "nearest"  # the request's key: {"nearest": query, "limit": n}
ASK_TIMEOUT_S = 2.0  # the warm process answers in milliseconds; more means it is stuck
WAIT_S = 15.0  # for one that is loading: about 1 s for 87,000 vectors, more on a busy machine
WARM, HERE = "warm", "here"


class WarmNearest:
    """A ``NearestChunks`` that asks the home's warm process first.

    ``local()`` builds the vector side in this process (raising ``ClawbackError`` when it
    cannot: search then answers by words, with that note); it is called at most once, and only
    when the warm process did not answer. ``answered_by`` says who answered the last query
    (:data:`WARM` or :data:`HERE`), for the person and the tests.
    """

    def __init__(
        self,
        paths: Paths,
        local: Callable[[], NearestChunks],
        *,
        start: Callable[[], None] | None = None,
        timeout: float = ASK_TIMEOUT_S,
        wait_s: float = WAIT_S,
    ) -> None:
        self.paths = paths
        self.local = local
        self.start = start
        self.timeout = timeout
        self.wait_s = wait_s
        self.answered_by: str | None = None
        self._here: NearestChunks | None = None

    def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
        if self._here is None:
            request = {NEAREST: query, "limit": limit}
            found = neighbours(ask(self.paths, request, self.timeout))
            if found is None and self._came_up():
                found = neighbours(ask(self.paths, request, self.timeout))
            if found is not None:
                self.answered_by = WARM
                return found
            self._here = self.local()
        self.answered_by = HERE
        return self._here.nearest(query, limit)

    def _came_up(self) -> bool:
        """Start a warm process (unless one is loading already) and wait until it listens.

        Waiting beats loading here as well: two processes loading the same vectors at once on
        the 2-core machine took longer than one (1.4-2.9 s against 1.0-1.2 s for the 87,000
        vectors of the 200 MB bench archive)."""
        if self.start is None:
            return False
        started = should_start(self.paths)
        if started:
            self.start()
        return wait_listening(self.paths, just_started=started, timeout=self.wait_s)

    @property
    def warm(self) -> bool:
        """Whether the warm process answered the last query."""
        return self.answered_by == WARM


def answer_nearest(nearest: NearestChunks, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The warm process's answer to a nearest-chunks request, or ``None`` when it is not one."""
    if NEAREST not in request:
        return None
    found = nearest.nearest(str(request[NEAREST]), int(request.get("limit", 0)))
    return {"neighbours": [[int(chunk), int(digest), float(s)] for chunk, digest, s in found]}


def neighbours(reply: Mapping[str, Any] | None) -> list[tuple[int, int, float]] | None:
    """The neighbours in a reply, or ``None`` when it holds none (no server, or it declined)."""
    found = None if reply is None else reply.get("neighbours")
    if not isinstance(found, list):
        return None
    try:
        return [(int(chunk), int(digest), float(s)) for chunk, digest, s in found]
    except (TypeError, ValueError):
        return None
