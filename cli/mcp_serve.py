"""``clawback mcp`` serving: the stdio front first, then the index and the SDK.

Kept apart from the command group (:mod:`clawback.cli.mcp`, which imports click) so that the
console script (:mod:`clawback.cli.entry`) reaches the front with nothing else loaded: Claude
Code waits for the handshake before a session's first request.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: everything here waits until the front answers
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from clawback.core.paths import Paths
    from clawback.core.search import NearestChunks


def serve_mcp(home: str | Path | None) -> None:
    """``clawback mcp``: the front answers the handshake while the rest loads."""
    from clawback.core.mcp.front import serve

    def load() -> Callable[[], None]:
        return load_server(home)

    def log(line: str) -> None:
        from clawback.cli.output import error_line

        error_line(line)

    serve(load, log)


def load_server(home: str | Path | None) -> Callable[[], None]:
    """Open the index (creating or migrating it first if it must) and import the SDK; returns
    what serves. Whatever keeps the index from opening is one ``ClawbackError``."""
    import sqlite3

    from clawback.core.db import connect_reader
    from clawback.core.db_guard import FollowingReader, guard_bus_errors
    from clawback.core.errors import ClawbackError
    from clawback.core.faults import explain
    from clawback.core.paths import Paths

    paths = Paths.resolve(home)
    try:
        conn = connect_reader(paths.database)
        if conn is None:
            from clawback.core.home import Home

            Home.open(paths.home).close()  # creates or migrates it
            conn = connect_reader(paths.database)
        if conn is None:
            raise ClawbackError(f"{paths.database}: the index cannot be opened")
        conn.execute("PRAGMA query_only = ON")  # the server only reads; SQLite enforces it
        nearest = _nearest(paths)
    except (sqlite3.Error, OSError) as exc:
        raise ClawbackError(explain(exc, paths.database)) from None
    from clawback.core.mcp.server import serve

    guard_bus_errors()  # a cut clawback.db-shm is mended, never a silent SIGBUS
    reader = FollowingReader(paths.database, conn)
    return lambda: serve(reader, nearest)


def _nearest(paths: Paths) -> NearestChunks | None:
    """The vector side for hybrid memory_search, when this home has vectors."""
    from clawback.core.config import load_config
    from clawback.core.embeddings import deferred_nearest

    return deferred_nearest(paths.vectors, load_config(paths.config).embeddings)
