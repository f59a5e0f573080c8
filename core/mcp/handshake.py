"""What the memory server answers before its SDK has loaded: the handshake and the listings.

These are the SDK's own answers for :mod:`.server` as it registers the tools, written down so
the stdio front (:mod:`.front`) can give them in the first milliseconds: Claude Code waits for
them before a session's first request. Two eras of the protocol: the handshake versions
(``initialize``, then the listings, :func:`initialize` and :func:`listing`), and the modern
one, where every request carries its envelope in ``_meta`` and there is no handshake (what
Claude Code 2.1.328 speaks: ``server/discover``, ``subscriptions/listen``, then the listings,
:func:`modern`). ``tests/mcp/test_front.py`` runs the server with and without the front and
requires the same answers for every version; when a tool's description or arguments change in
:mod:`.server`, that test prints the new :data:`TOOLS`.
"""

from __future__ import annotations

from typing import Any

from clawback.core.mcp.texts import (
    GET_DESCRIPTION,
    INSTRUCTIONS,
    SEARCH_DESCRIPTION,
    SERVER_NAME,
    SINCE_DESCRIPTION,
    UNTIL_DESCRIPTION,
)

#: the versions the SDK negotiates (``mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS``)
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
#: the versions whose requests carry their envelope (``mcp_types.version.MODERN_PROTOCOL_VERSIONS``)
MODERN_VERSIONS = ("2026-07-28",)
MODERN_CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
    "tools": {"listChanged": True},
}
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
UNSUPPORTED_PROTOCOL_VERSION = -32022
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
EMPTY_LISTINGS: dict[str, dict[str, Any]] = {
    "prompts/list": {"prompts": []},
    "resources/list": {"resources": []},
    "resources/templates/list": {"resourceTemplates": []},
    "ping": {},
}


def initialize(params: object) -> dict[str, Any] | None:
    """The ``initialize`` result for a request with ``params``, or ``None`` when they are not
    a well-formed request (the SDK then answers, with what is wrong)."""
    if not isinstance(params, dict):
        return None
    info, version = params.get("clientInfo"), params.get("protocolVersion")
    if not isinstance(version, str) or not isinstance(params.get("capabilities"), dict):
        return None
    if not isinstance(info, dict) or not all(
        isinstance(info.get(k), str) for k in ("name", "version")
    ):
        return None
    from clawback.core import __version__

    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version if version in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }


def has_envelope(params: object) -> bool:
    """Whether a request claims the modern era: its ``_meta`` names a protocol version (the
    SDK's test; a legacy ``_meta`` holds only a ``progressToken``)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and VERSION_KEY in meta


def initialize_refused(params: object) -> dict[str, Any] | None:
    """The SDK's error for an ``initialize`` on a connection the modern era opened, or ``None``
    for params it would not read as a request."""
    if params is not None and not isinstance(params, dict):
        return None
    requested = (params or {}).get("protocolVersion")
    data: dict[str, Any] = {"supported": list(MODERN_VERSIONS)}
    if isinstance(requested, str):
        data["requested"] = requested
    return {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": "connection is serving the 2026-07-28 protocol; "
        "the initialize handshake is not accepted",
        "data": data,
    }


def modern_version(params: object) -> str | None:
    """The modern version a request's envelope names, if it is one answered here and the
    envelope is whole (else the SDK answers, with what is wrong)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get(CAPABILITIES_KEY), dict):
        return None
    version = meta.get(VERSION_KEY)
    return version if version in MODERN_VERSIONS else None


def modern(method: str, params: object) -> dict[str, Any] | None:
    """The result of a modern ``server/discover`` or listing, or ``None`` for one not answered
    here (``ping`` is not a modern method: the SDK says so)."""
    if not isinstance(params, dict) or modern_version(params) is None or set(params) - {"_meta"}:
        return None  # a page past the first (a cursor), or not an envelope this answers
    from clawback.core import __version__

    envelope: dict[str, Any] = {
        "cacheScope": "private",
        "resultType": "complete",
        "ttlMs": 0,
        "_meta": {
            "io.modelcontextprotocol/serverInfo": {"name": SERVER_NAME, "version": __version__}
        },
    }
    if method == "server/discover":
        return {
            **envelope,
            "capabilities": MODERN_CAPABILITIES,
            "instructions": INSTRUCTIONS,
            "supportedVersions": list(MODERN_VERSIONS),
        }
    if method == "tools/list":
        return {**envelope, "tools": TOOLS}
    if method in EMPTY_LISTINGS and method != "ping":
        return {**envelope, **EMPTY_LISTINGS[method]}
    return None


def listing(method: str, params: object) -> dict[str, Any] | None:
    """The result of ``tools/list`` and the other listings, or ``None`` for a method not
    answered here (or a page past the first, which there never is)."""
    if params is not None and (not isinstance(params, dict) or set(params) - {"_meta"}):
        return None
    if method == "tools/list":
        return {"tools": TOOLS}
    return EMPTY_LISTINGS.get(method)


TOOLS: list[dict[str, Any]] = [
    {
        "annotations": {"openWorldHint": False, "readOnlyHint": True},
        "description": SEARCH_DESCRIPTION,
        "inputSchema": {
            "properties": {
                "query": {
                    "description": "Words to find (clawback search syntax).",
                    "title": "Query",
                    "type": "string",
                },
                "max_results": {
                    "default": 8,
                    "description": "How many hits (1-50).",
                    "title": "Max Results",
                    "type": "integer",
                },
                "source": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "Only this source: claude-code, openclaw, native, memory, fact.",
                    "title": "Source",
                },
                "session": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "Only this session (id).",
                    "title": "Session",
                },
                "since": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": SINCE_DESCRIPTION,
                    "title": "Since",
                },
                "until": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": UNTIL_DESCRIPTION,
                    "title": "Until",
                },
                "kind": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "text, thinking, tool, output, hook, notice, all (default all).",
                    "title": "Kind",
                },
                "mode": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "keyword (exact words), semantic "
                    "(meaning) or hybrid (both; the "
                    "default when the archive has "
                    "embeddings). Try semantic when words "
                    "miss.",
                    "title": "Mode",
                },
            },
            "required": ["query"],
            "type": "object",
            "title": "memory_searchArguments",
        },
        "name": "memory_search",
        "outputSchema": {
            "properties": {
                "results": {
                    "items": {"$ref": "#/$defs/MemorySearchHit"},
                    "title": "Results",
                    "type": "array",
                }
            },
            "required": ["results"],
            "type": "object",
            "$defs": {
                "MemorySearchHit": {
                    "properties": {
                        "ref": {"title": "Ref", "type": "string"},
                        "session_id": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Session Id",
                        },
                        "session_title": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Session Title",
                        },
                        "source": {"title": "Source", "type": "string"},
                        "role": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Role"},
                        "kind": {"title": "Kind", "type": "string"},
                        "timestamp": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Timestamp",
                        },
                        "snippet": {"title": "Snippet", "type": "string"},
                        "score": {"title": "Score", "type": "number"},
                        "found_by": {"title": "Found By", "type": "string"},
                    },
                    "required": [
                        "ref",
                        "session_id",
                        "session_title",
                        "source",
                        "role",
                        "kind",
                        "timestamp",
                        "snippet",
                        "score",
                        "found_by",
                    ],
                    "title": "MemorySearchHit",
                    "type": "object",
                }
            },
            "title": "SearchAnswer",
        },
    },
    {
        "annotations": {"openWorldHint": False, "readOnlyHint": True},
        "description": GET_DESCRIPTION,
        "inputSchema": {
            "properties": {
                "ref": {
                    "description": "A ref from memory_search, or a session_id.",
                    "title": "Ref",
                    "type": "string",
                },
                "context": {
                    "default": 1,
                    "description": "Neighbouring turns to include on each side (0-10).",
                    "title": "Context",
                    "type": "integer",
                },
            },
            "required": ["ref"],
            "type": "object",
            "title": "memory_getArguments",
        },
        "name": "memory_get",
    },
]
