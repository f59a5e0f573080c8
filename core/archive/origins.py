"""Where a session came from, in words: its source, and for clawback's own chats the channel.

One wording for the CLI and the app, so a Telegram chat reads the same in `clawback sessions`
and the session list.
"""

from __future__ import annotations

from clawback.core.errors import SessionKeyError
from clawback.core.formats.session_keys import parse_session_key

SOURCES = {
    "native": "clawback",
    "claude-code": "Claude Code",
    "openclaw": "OpenClaw",
    "memory": "memory",
}
CHANNELS = {"telegram": "Telegram"}


def source_label(source: str) -> str:
    return SOURCES.get(source, source)


def session_channel(source: str, key: str | None) -> str | None:
    """The channel a clawback chat came through (``telegram``), ``gateway`` for the main
    session the gateways' direct messages share (``agent:<id>:main``), else None (a terminal
    chat, ``local:<user>``, and every other source)."""
    if source != "native" or not key or not key.startswith("agent:"):
        return None
    try:
        parsed = parse_session_key(key)
    except SessionKeyError:
        return None
    if parsed.channel:
        return parsed.channel
    return "gateway" if parsed.kind == "main" else None


def origin_label(source: str, key: str | None) -> str:
    """The source, and the channel where there is one: "clawback · Telegram", "clawback ·
    gateway"; a terminal chat is plain "clawback"."""
    label = source_label(source)
    channel = session_channel(source, key)
    return f"{label} · {CHANNELS.get(channel, channel)}" if channel else label
