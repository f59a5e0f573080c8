"""The app says when a Telegram gateway runs for its home, and which sessions came through one."""

from __future__ import annotations

import json
import time

from clawback.core.home import Home
from clawback.core.locking import held
from clawback.tui.app import make_app

from .conftest import SIZE
from .pilot import settle


async def test_the_title_says_a_gateway_runs_for_this_home(demo_home: Home) -> None:
    folder = demo_home.paths.gateway / "telegram"
    folder.mkdir(parents=True)
    status = {"bot": "memory_bot", "last_update_at": time.time(), "errors": []}
    (folder / "status.json").write_text(json.dumps(status))
    app = make_app(demo_home, watch=False)
    with held(folder / "gateway.lock") as mine:  # as a running `clawback gateway telegram`
        assert mine
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.title.startswith("clawback · telegram: running as @memory_bot")
    quiet = make_app(Home.open(demo_home.paths.home), watch=False)
    async with quiet.run_test(size=SIZE) as pilot:  # the lock is free: nothing runs
        await settle(pilot)
        assert quiet.title == "clawback"


async def test_the_title_says_a_warm_process_runs_and_what_it_holds(demo_home: Home) -> None:
    """Issue 32 item 4: the warm process is visible in the app, with memory and idle time."""
    import threading

    from clawback.core.warm.server import serve, socket_path, stop

    from ..helpers import wait_until

    paths = demo_home.paths
    server = threading.Thread(
        target=serve, args=(paths, lambda r: {"text": ""}), kwargs={"idle_s": 600}
    )
    server.start()
    try:
        wait_until(lambda: socket_path(paths).exists(), "the warm process")  # type: ignore[union-attr]
        app = make_app(demo_home, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "warm process: holds " in app.title and " MB, leaves after 10 min" in app.title
    finally:
        stop(paths)
        server.join(10)
