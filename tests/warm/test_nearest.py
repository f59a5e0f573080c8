"""``WarmNearest``: the warm process answers when it listens, and is waited for while it loads;
without one the neighbours are loaded here (once), and a warm process is started for the next
search only after this one; every answer is the same neighbours either way."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from clawback.core.config import Config, load_config
from clawback.core.errors import ClawbackError
from clawback.core.paths import Paths
from clawback.core.warm import server
from clawback.core.warm.nearest import (
    HERE,
    WARM,
    WarmNearest,
    answer_nearest,
    neighbours,
    one_shot_nearest,
    start_for_next,
)
from clawback.core.warm.server import serve, stop

from ..helpers import wait_until

FOUND = [(3, -12345678901234, 0.8125), (1, 42, 0.3333333333333333)]


class Fixed:
    """A vector side that always finds :data:`FOUND` and counts its questions."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
        self.asked.append((query, limit))
        return FOUND[:limit]


@pytest.fixture
def paths(tmp_path: Path) -> Iterator[Paths]:
    paths = Paths.resolve(tmp_path / "h").ensure()
    paths.vectors.write_bytes(b"")  # a warm process stays up only while the home has vectors
    yield paths
    stop(paths)


def serve_apart(paths: Paths, side: Fixed) -> threading.Thread:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return answer_nearest(side, request) or {"text": "", "detail": "not for me"}

    thread = threading.Thread(target=serve, args=(paths, answer), kwargs={"idle_s": 30})
    thread.start()
    return thread


def test_the_warm_process_answers_with_the_same_neighbours(paths: Paths) -> None:
    warm_side, here_side = Fixed(), Fixed()
    thread = serve_apart(paths, warm_side)
    wait_until(lambda: server.socket_path(paths).exists(), "the socket")  # type: ignore[union-attr]
    nearest = WarmNearest(paths, lambda: here_side)
    assert list(nearest.nearest("tangerine", 2)) == FOUND and nearest.answered_by == WARM
    assert warm_side.asked == [("tangerine", 2)] and here_side.asked == []
    stop(paths)
    thread.join(10)


def test_none_running_means_loading_here_once_then_starting_one_for_next_time(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server, "TAKES_LOCK_S", 0.2)  # the one started below never comes
    here_side, loads, starts = Fixed(), [], []

    def load() -> Fixed:
        loads.append(1)
        return here_side

    nearest = WarmNearest(paths, load, start=lambda: starts.append(1))
    assert list(nearest.nearest("a", 2)) == FOUND and nearest.answered_by == HERE
    assert list(nearest.nearest("b", 1)) == FOUND[:1]
    assert (loads, here_side.asked) == ([1], [("a", 2), ("b", 1)])
    assert starts == []  # not while this search loads the same vectors
    assert nearest.start_for_next() and starts == [1]
    # The next search gives the one just started a moment to take the home, then loads here
    # when it never does; within the minute it does not start another.
    again = WarmNearest(paths, load, start=lambda: starts.append(1))
    again.nearest("c", 1)
    assert again.answered_by == HERE and loads == [1, 1]
    assert not again.start_for_next() and starts == [1]


def test_the_next_search_waits_for_the_one_just_started(paths: Paths) -> None:
    """A script's second search, a moment after the first started a warm process that has not
    yet taken the home: it waits for it instead of loading the vectors beside it."""
    warm_side, threads = Fixed(), []
    first = WarmNearest(paths, Fixed, start=lambda: None)
    first.nearest("a", 1)
    assert first.start_for_next()  # marks it started; the process itself comes a bit later
    threading.Timer(0.3, lambda: threads.append(serve_apart(paths, warm_side))).start()
    second = WarmNearest(paths, lambda: pytest.fail("loaded here too"))
    assert list(second.nearest("b", 2)) == FOUND and second.warm
    stop(paths)
    wait_until(lambda: threads, "the server thread")
    threads[0].join(10)


def test_one_still_loading_is_waited_for(paths: Paths) -> None:
    warm_side, loading = Fixed(), threading.Event()

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return answer_nearest(warm_side, request) or {}

    thread = threading.Thread(
        target=serve, args=(paths, answer), kwargs={"idle_s": 30, "warm": loading.wait}
    )
    thread.start()
    wait_until(lambda: server.running(paths), "the warm process to take the home")
    threading.Timer(0.3, loading.set).start()  # it loads for a while, then listens
    nearest = WarmNearest(paths, lambda: pytest.fail("loaded here too"), start=lambda: None)
    assert list(nearest.nearest("q", 5)) == FOUND and nearest.warm
    assert not nearest.start_for_next()  # it answered: nothing to start
    stop(paths)
    thread.join(10)


def test_nothing_is_started_when_nothing_was_loaded_here(paths: Paths) -> None:
    def cannot() -> Fixed:
        raise ClawbackError("semantic search unavailable (no model)")

    starts: list[int] = []
    nearest = WarmNearest(paths, cannot, start=lambda: starts.append(1))
    with pytest.raises(ClawbackError):
        nearest.nearest("q", 3)
    assert not nearest.start_for_next() and starts == []  # the same model would not load there


def test_a_side_that_cannot_load_here_declines_as_search_expects(paths: Paths) -> None:
    def cannot() -> Fixed:
        raise ClawbackError("semantic search needs numpy")

    with pytest.raises(ClawbackError, match="needs numpy"):
        WarmNearest(paths, cannot).nearest("q", 3)


def test_a_warm_vector_side_that_declines_says_why_and_nothing_loads_here(paths: Paths) -> None:
    class Damaged(Fixed):
        def nearest(self, query: str, limit: int) -> Sequence[tuple[int, int, float]]:
            raise ClawbackError("embeddings.db is damaged: set aside as embeddings.db.damaged-1")

    thread = serve_apart(paths, Damaged())
    wait_until(lambda: server.socket_path(paths).exists(), "the socket")  # type: ignore[union-attr]
    nearest = WarmNearest(paths, lambda: pytest.fail("loaded here"), start=lambda: None)
    with pytest.raises(ClawbackError, match="set aside as embeddings"):
        nearest.nearest("q", 3)
    assert not nearest.start_for_next()
    stop(paths)
    thread.join(10)


def test_replies_that_hold_no_neighbours_are_not_answers() -> None:
    assert neighbours(None) is None
    assert neighbours({"text": "", "detail": "EmbeddingsUnavailable: no model"}) is None
    assert neighbours({"neighbours": [["x", 1, 0.5]]}) is None
    assert neighbours({"neighbours": [[1, 2, 0.5]]}) == [(1, 2, 0.5)]
    assert answer_nearest(Fixed(), {"prompt": "recall this"}) is None


def config_for(tmp_path: Path, text: str) -> Config:
    (tmp_path / "config.toml").write_text(text)
    return load_config(tmp_path / "config.toml")


def test_a_one_shot_process_asks_the_warm_process_when_allowed(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one decision ``clawback search`` and a ``clawback chat`` turn share."""
    pytest.importorskip("numpy", reason="the vectors loaded here need the embeddings extra")
    monkeypatch.delenv("CLAWBACK_WARM")
    allowed = config_for(tmp_path, '[embeddings]\nmodel = "hash"\n[hooks]\nwarm_minutes = 1\n')
    nearest, why = one_shot_nearest(paths, allowed)
    assert isinstance(nearest, WarmNearest) and why is None
    off = config_for(tmp_path, '[embeddings]\nmodel = "hash"\n[hooks]\nwarm_minutes = 0\n')
    nearest, why = one_shot_nearest(paths, off)
    assert nearest is not None and not isinstance(nearest, WarmNearest) and why is None
    assert not start_for_next(nearest)  # loaded here by choice: nothing to start
    monkeypatch.setenv("CLAWBACK_WARM", "0")
    assert not isinstance(one_shot_nearest(paths, allowed)[0], WarmNearest)
    monkeypatch.delenv("CLAWBACK_WARM")
    assert one_shot_nearest(paths, config_for(tmp_path, '[embeddings]\nmodel = "none"\n')) == (
        None,
        None,
    )
    paths.vectors.unlink()
    assert one_shot_nearest(paths, allowed) == (None, None)  # nothing embedded: nothing loads
