"""The chunks nearest a query, from the warm process when one runs, else from this process.

``clawback search`` and a ``clawback chat`` turn each run in a process of their own, for one
search or one recall: reading the index is quick to start, loading the model and every vector is
not (0.5 s on the shared transcripts, about 1 s on a 200 MB archive). So only that vector side is
asked of the warm process (:mod:`.server`): :class:`WarmNearest` is the ``NearestChunks`` search
and recall take, and the warm process answers it with :func:`answer_nearest`. Everything else
(the keyword side, filters, fusion, the floor, snippets, the recall block) runs here, so the
results are the same warm or not: the warm process runs the same index over the same store, and
JSON carries the similarities (Python floats) exactly. :func:`one_shot_nearest` is the one
place such a process decides between asking and loading.

When no warm process runs, the neighbours come from ``local``: the model and the vectors loaded
in this process, as before the warm process existed; once the results are out,
:func:`start_for_next` starts one apart for the next search or turn. One that is still loading
is waited for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from clawback.core.config import Config
from clawback.core.errors import ClawbackError
from clawback.core.paths import Paths
from clawback.core.search import NearestChunks
from clawback.core.warm.server import (
    ASK_TIMEOUT_S,
    allowed,
    ask,
    should_start,
    start,
    wait_listening,
)

NEAREST = "nearest"  # the request's key: {"nearest": query, "limit": n}
DECLINED = "declined"  # the reply's key when the vector side declined: {"declined": why}
WAIT_S = 15.0  # for one still loading: about 1 s for 87,000 vectors, more on a busy machine
WARM, HERE = "warm", "here"


class WarmNearest:
    """A ``NearestChunks`` that asks the home's warm process first.

    ``local()`` builds the vector side in this process (raising ``ClawbackError`` when it
    cannot: search then answers by words, with that note); it is called at most once, and only
    when no warm process answered. ``start()`` starts one apart (:meth:`start_for_next`), when
    ``may_start()`` (if given) says this process may.
    ``answered_by`` says who answered the last query (:data:`WARM` or :data:`HERE`), for the
    person and the tests.
    """

    def __init__(
        self,
        paths: Paths,
        local: Callable[[], NearestChunks],
        *,
        start: Callable[[], None] | None = None,
        may_start: Callable[[], bool] | None = None,
        timeout: float = ASK_TIMEOUT_S,
        wait_s: float = WAIT_S,
    ) -> None:
        self.paths = paths
        self.local = local
        self.start = start
        self.may_start = may_start
        self.timeout = timeout
        self.wait_s = wait_s
        self.answered_by: str | None = None
        self._here: NearestChunks | None = None

    def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
        if self._here is None:
            request = {NEAREST: query, "limit": limit}
            found = neighbours(ask(self.paths, request, self.timeout))
            if found is None and wait_listening(self.paths, self.wait_s):
                # One is loading (started by a hook or the search before): waiting for it
                # beats loading the same vectors beside it on a small machine.
                found = neighbours(ask(self.paths, request, self.timeout))
            if found is not None:
                self.answered_by = WARM
                return found
            self._here = self.local()
        self.answered_by = HERE
        return self._here.nearest(query, limit)

    def start_for_next(self) -> bool:
        """After a search this process answered itself, start a warm process for the next one
        (at most once a minute, :func:`~.server.should_start`); whether it did.

        Called once the results are out, not when the search starts: two loads at once compete
        for the cores, and waiting for one costs a process start on top of the same load
        (measured: docs/benchmarks.md)."""
        if self._here is None or self.start is None:
            return False
        if self.may_start is not None and not self.may_start():
            return False
        if not should_start(self.paths):
            return False
        self.start()
        return True

    @property
    def warm(self) -> bool:
        """Whether the warm process answered the last query."""
        return self.answered_by == WARM


def one_shot_nearest(
    paths: Paths, config: Config, *, may_start: Callable[[], bool] | None = None
) -> tuple[NearestChunks | None, str | None]:
    """The vector side for a process that answers one question and ends (``clawback search``,
    a ``clawback chat`` turn), or ``None`` and why not when the home has vectors this process
    cannot search (the embeddings extra is missing).

    With the warm process allowed (:func:`~.server.allowed`) it is a :class:`WarmNearest`,
    which loads nothing unless no warm process answers; then, if ``may_start()`` says so (by
    default it does), it starts one apart once the answer is out (:func:`start_for_next`).
    Otherwise the vector side is loaded here, on the first query, as long-lived processes do.
    No vectors, or embeddings off: ``None``, and nothing loads. The long-lived processes (the
    app, the MCP server, the warm process itself) load their own instead
    (:func:`~clawback.core.embeddings.deferred_nearest`): they ask many times, and a socket
    round trip each time would buy them nothing.
    """
    settings = config.embeddings
    if not settings.enabled or not paths.vectors.exists():
        return None, None

    def here() -> NearestChunks:
        try:
            from clawback.core.embeddings.semantic import DeferredIndex
        except ImportError as exc:
            raise ClawbackError(
                f"semantic search needs {exc.name} (pip install 'clawback[embeddings]')"
            ) from None
        return DeferredIndex(settings, paths.vectors)

    if allowed(config.hooks.warm_minutes):
        return WarmNearest(paths, here, start=lambda: start(paths), may_start=may_start), None
    try:
        return here(), None
    except ClawbackError as exc:
        return None, str(exc)


def start_for_next(nearest: NearestChunks | None) -> bool:
    """Once a one-shot process's answer is out: start a warm process for the next one if this
    one loaded the vectors itself (:meth:`WarmNearest.start_for_next`); whether it did."""
    return isinstance(nearest, WarmNearest) and nearest.start_for_next()


def answer_nearest(nearest: NearestChunks, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The warm process's answer to a nearest-chunks request, or ``None`` when it is not one.

    A vector side that declines (``ClawbackError``: the store was found damaged and set aside,
    the vectors are another model's) says why, and the search shows that line: loading the
    same store in the search's own process would only meet the same reason, or, once the
    damaged store is set aside, a misleading "nothing is embedded yet"."""
    if NEAREST not in request:
        return None
    try:
        found = nearest.nearest(str(request[NEAREST]), int(request.get("limit", 0)))
    except ClawbackError as exc:
        return {DECLINED: str(exc)}
    return {"neighbours": [[int(chunk), int(digest), float(s)] for chunk, digest, s in found]}


def neighbours(reply: Mapping[str, Any] | None) -> list[tuple[int, int, float]] | None:
    """The neighbours in a reply, or ``None`` when it holds none (no server, or it failed);
    raises ``ClawbackError`` with the warm process's reason when its vector side declined."""
    if reply is not None and DECLINED in reply:
        raise ClawbackError(str(reply[DECLINED]))
    found = None if reply is None else reply.get("neighbours")
    if not isinstance(found, list):
        return None
    try:
        return [(int(chunk), int(digest), float(s)) for chunk, digest, s in found]
    except (TypeError, ValueError):
        return None
