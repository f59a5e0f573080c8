"""The chat: sessions, turns through the user's ``claude``, and live conversations.

The API every host uses (the app, ``clawback chat``, a gateway)::

    engine = home.chat_engine(live=True)   # one per host; live: a claude process per session
    turn = engine.turn(text, key="local:alice")        # or session_id=...; nothing runs yet
    async for event in turn:                # SessionChanged, Notice, PromptAssembled,
        ...                                 # ReplyDelta, ToolCalled, then TurnFinished
    turn.cancel()                           # from any thread: stops the reply, keeps what came
    await engine.aclose()                   # the host ends: no claude process is left

A host with a loop of its own to keep free (the app, the gateway) runs the engine on a thread
of its own: ``host = EngineHost(home.paths.home)``, then ``await host.submit(work)``.

A failed turn raises a :class:`~clawback.core.claude.errors.ClaudeError` after it recorded the
user's message (sending the same text again retries it, stored and sent once). A one-shot host
(``clawback chat MESSAGE``) leaves ``live`` off: each turn is its own ``claude -p``. The names
below are imported on first use, so importing this package costs nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ChatEngine": "engine",
    "ChatTarget": "engine",
    "ChatTurn": "turn",
    "ChatEvent": "events",
    "Notice": "events",
    "ApiRetrying": "events",
    "PromptAssembled": "events",
    "ReplyDelta": "events",
    "SessionChanged": "events",
    "ThresholdHooks": "events",
    "ToolCalled": "events",
    "TurnFinished": "events",
    "TurnOutcome": "events",
    "LiveConversations": "live",
    "EngineHost": "host",
    "ChatSession": "sessions",
    "SessionStore": "sessions",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
