"""The warm process never lingers: it exits when idle, one runs per home, a question that
fails does not stop it, and a client never waits on one that is not there."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from clawback.core.paths import Paths
from clawback.core.warm.server import ask, running, serve, should_start, socket_path, stop

from ..helpers import wait_until


def start(paths: Paths, answer: Any, idle_s: float) -> tuple[threading.Thread, list[str]]:
    ended: list[str] = []
    paths.vectors.write_bytes(b"")  # the server stays up only while the home has vectors
    thread = threading.Thread(target=lambda: ended.append(serve(paths, answer, idle_s=idle_s)))
    thread.start()
    wait_until(lambda: socket_path(paths).exists(), "the socket")  # type: ignore[union-attr]
    return thread, ended


def test_it_answers_survives_a_failing_question_and_exits_when_idle(tmp_path: Path) -> None:
    paths = Paths.resolve(tmp_path / "h").ensure()

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request["prompt"] == "boom":
            raise RuntimeError("a bug")
        return {"text": request["prompt"].upper(), "detail": "ok"}

    thread, ended = start(paths, answer, idle_s=0.5)
    assert ask(paths, {"prompt": "hello"}, 2.0) == {"text": "HELLO", "detail": "ok"}
    assert ask(paths, {"prompt": "boom"}, 2.0) == {"text": "", "detail": "RuntimeError: a bug"}
    assert ask(paths, {"prompt": "again"}, 2.0)["text"] == "AGAIN"  # type: ignore[index]
    assert running(paths)
    assert serve(paths, answer, idle_s=5) == "another warm process runs for this home"
    thread.join(10)
    assert ended == ["idle for 0 s"] and not thread.is_alive()
    assert not running(paths) and not socket_path(paths).exists()  # type: ignore[union-attr]


def test_stop_and_no_server(tmp_path: Path) -> None:
    paths = Paths.resolve(tmp_path / "h").ensure()
    started = time.monotonic()
    assert ask(paths, {"prompt": "x"}, 2.0) is None and not stop(paths)
    assert time.monotonic() - started < 0.5
    thread, ended = start(paths, lambda r: {"text": "", "detail": ""}, idle_s=60)
    assert stop(paths)
    thread.join(10)
    assert ended == ["asked to stop"]


def test_a_socket_left_by_a_killed_server_is_not_waited_on(tmp_path: Path) -> None:
    import socket

    paths = Paths.resolve(tmp_path / "h").ensure()
    paths.hooks.mkdir()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(socket_path(paths)))
    stale.close()  # the file stays, nobody listens
    assert ask(paths, {"prompt": "x"}, 2.0) is None
    thread, _ = start(paths, lambda r: {"text": "up", "detail": ""}, idle_s=60)
    wait_until(lambda: ask(paths, {"prompt": "x"}, 2.0), "the new server, in the stale one's place")
    assert ask(paths, {"prompt": "x"}, 2.0) == {"text": "up", "detail": ""}
    stop(paths)
    thread.join(10)


def test_a_home_too_deep_for_a_socket_listens_in_a_private_temp_folder(tmp_path: Path) -> None:
    paths = Paths.resolve(tmp_path / ("deep-" * 20) / "home").ensure()
    path = socket_path(paths)
    assert path is not None and not path.is_relative_to(paths.home)
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert socket_path(paths) == path  # the same home, the same name
    thread, ended = start(paths, lambda r: {"text": "deep", "detail": ""}, idle_s=60)
    assert ask(paths, {"prompt": "x"}, 2.0) == {"text": "deep", "detail": ""}
    stop(paths)
    thread.join(10)
    assert ended == ["asked to stop"] and not path.exists()


def test_a_server_is_started_at_most_once_a_minute(tmp_path: Path) -> None:
    """A server that cannot come up (the model gone) is not started again on every prompt."""
    paths = Paths.resolve(tmp_path / "h").ensure()
    assert should_start(paths)
    assert not should_start(paths)
    marker = paths.hooks / "warm.started"
    old = time.time() - 61
    os.utime(marker, (old, old))
    assert should_start(paths)


def test_a_reinstalled_clawback_is_not_answered_by_the_old_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawback.core.warm import server

    paths = Paths.resolve(tmp_path / "h").ensure()
    assert should_start(paths)  # marks a start, as the client that started it did
    installed = [(1, 1)]
    monkeypatch.setattr(server, "code_stamp", lambda: installed[0])
    thread, ended = start(paths, lambda r: {"text": "old code", "detail": ""}, idle_s=60)
    assert ask(paths, {"prompt": "x"}, 2.0) == {"text": "old code", "detail": ""}
    installed[0] = (2, 2)  # pip install -U clawback replaced the files
    assert ask(paths, {"prompt": "x"}, 2.0) is None  # the client does the work itself
    thread.join(10)
    assert ended == ["clawback was reinstalled"] and not running(paths)
    assert should_start(paths)  # the next client starts the new code at once


# -- many clients at once (issue 31, item 14) -----------------------------------------------------


def test_a_client_sending_a_byte_every_few_seconds_blocks_nobody(tmp_path: Path) -> None:
    import socket

    from clawback.core.warm.server import READ_S

    paths = Paths.resolve(tmp_path / "h").ensure()
    thread, ended = start(paths, lambda r: {"text": r["prompt"], "detail": ""}, idle_s=60)
    path = socket_path(paths)
    assert path is not None
    try:
        slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        slow.connect(str(path))
        slow.sendall(b'{"prompt": ')  # and nothing more for now
        began = time.monotonic()
        assert ask(paths, {"prompt": "meanwhile"}, 2.0) == {"text": "meanwhile", "detail": ""}
        assert time.monotonic() - began < 1.0  # not after the slow one's timeout
        slow.settimeout(READ_S + 5)
        reply = json.loads(slow.recv(65536))  # dropped once its time is up, with why
        assert "did not arrive whole" in reply["detail"]
        slow.close()
    finally:
        stop(paths)
        thread.join(10)
    assert ended == ["asked to stop"]


def test_requests_are_answered_at_once_and_a_huge_one_is_refused(tmp_path: Path) -> None:
    from clawback.core.warm.server import MAX_REQUEST_BYTES

    paths = Paths.resolve(tmp_path / "h").ensure()
    release = threading.Event()

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request["prompt"] == "slow":
            release.wait(10)  # a question that takes long holds only its own thread
        return {"text": request["prompt"], "detail": ""}

    thread, _ = start(paths, answer, idle_s=60)
    try:
        slow = threading.Thread(target=lambda: ask(paths, {"prompt": "slow"}, 15.0))
        slow.start()
        assert ask(paths, {"prompt": "quick"}, 2.0) == {"text": "quick", "detail": ""}
        huge = ask(paths, {"prompt": "x" * MAX_REQUEST_BYTES}, 5.0)
        assert huge is not None and "larger than" in huge["detail"]
        release.set()
        slow.join(15)
    finally:
        stop(paths)
        thread.join(10)


def test_it_says_what_it_holds_and_a_status_keeps_nothing_alive(tmp_path: Path) -> None:
    from clawback.core.warm.server import status

    paths = Paths.resolve(tmp_path / "h").ensure()
    assert status(paths) is None
    thread, ended = start(paths, lambda r: {"text": "", "detail": ""}, idle_s=60)
    try:
        ask(paths, {"prompt": "x"}, 2.0)
        said = status(paths)
        assert said is not None and said["pid"] == os.getpid() and said["served"] == 1
        assert said["memory_kb"] > 0 and 0 < said["idle_left_s"] <= 60
        wait_until(
            lambda: status(paths)["idle_left_s"] < said["idle_left_s"],  # type: ignore[index]
            "the idle time to run down, statuses or not",
        )
    finally:
        stop(paths)
        thread.join(10)
    assert ended == ["asked to stop"]
