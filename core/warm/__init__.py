"""The warm process: one per home, holding the model and the vectors, so that the fresh
processes Claude Code's hooks, ``clawback search`` and ``clawback chat`` turns start can ask it
instead of loading them (:mod:`.program`: what the process loads and answers; :mod:`.server`:
the socket and the lifecycle; :mod:`.nearest`: the chunks nearest a query, and the one decision
between asking and loading).

This is the room's door: other rooms import from here, never from the modules behind it (an
import-linter contract holds it). Names load on first use: a hook that only asks imports no more.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a door imports nothing until a name is asked for
if TYPE_CHECKING:
    from clawback.core.warm.address import home_folder, hooks_folder, socket_address
    from clawback.core.warm.nearest import one_shot_nearest, start_for_next
    from clawback.core.warm.program import serve_home
    from clawback.core.warm.server import (
        allowed,
        running,
        should_start,
        start,
        status,
        stop,
        summary,
    )

#: Each public name and the module behind the door that defines it.
_HOMES = {
    "home_folder": "address",
    "hooks_folder": "address",
    "socket_address": "address",
    "one_shot_nearest": "nearest",
    "start_for_next": "nearest",
    "serve_home": "program",
    "allowed": "server",
    "running": "server",
    "should_start": "server",
    "start": "server",
    "status": "server",
    "stop": "server",
    "summary": "server",
}

__all__ = [
    "allowed",
    "home_folder",
    "hooks_folder",
    "one_shot_nearest",
    "running",
    "serve_home",
    "should_start",
    "socket_address",
    "start",
    "start_for_next",
    "status",
    "stop",
    "summary",
]

if not TYPE_CHECKING:  # hidden from mypy, so a name the door does not export is an error there
    from clawback.core.doors import loader

    __getattr__ = loader(__name__, _HOMES)
    del loader  # the door's names are its own
