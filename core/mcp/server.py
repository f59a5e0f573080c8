"""The MCP stdio server: :class:`~.tools.MemoryTools` behind the official ``mcp`` SDK.

This is the only module that imports the SDK (about 0.7 s of imports, so callers import this
module only when they serve). The protocol owns stdout: nothing here prints, logs go to stderr,
and the SDK's stdio transport moves stray writes to stdout onto stderr while it runs.

Tools are async and run on the event loop one at a time, so the single SQLite connection is never
used from two threads; each call reads the index afresh (autocommit), which is how a running
server sees what ``clawback watch`` or an ingest wrote after it started.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import sys
from typing import Annotated, Any

from clawback.core import __version__
from clawback.core.db import Queryable
from clawback.core.errors import ClawbackError
from clawback.core.faults import explain
from clawback.core.mcp import answers
from clawback.core.mcp.texts import (
    GET_DESCRIPTION,
    INSTRUCTIONS,
    SEARCH_DESCRIPTION,
    SERVER_NAME,
    SINCE_DESCRIPTION,
    UNTIL_DESCRIPTION,
)
from clawback.core.mcp.tools import DEFAULT_RESULTS, KINDS, MAX_RESULTS, SOURCES, MemoryTools
from clawback.core.search import NearestChunks
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict


#: One hit as memory_search returns it: search's ``SearchHit`` on the wire. No docstring: the
#: SDK would put it in the output schema, which handshake.py repeats exactly.
class MemorySearchHit(TypedDict):
    ref: str
    session_id: str | None
    session_title: str | None
    source: str
    role: str | None
    kind: str
    timestamp: str | None
    snippet: str
    score: float
    found_by: str


class SearchAnswer(TypedDict):
    results: list[MemorySearchHit]


def build_server(db: Queryable, nearest: NearestChunks | None = None) -> MCPServer[Any]:
    """The server with both tools registered over ``db`` (opened by the caller); ``nearest``
    is the vector side of hybrid search, when the archive has embeddings."""
    tools = MemoryTools(db, nearest)
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        middleware=[_plain_argument_errors],
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(name="memory_search", description=SEARCH_DESCRIPTION, annotations=read_only)
    async def memory_search(
        query: Annotated[str, Field(description="Words to find (clawback search syntax).")],
        max_results: Annotated[
            int, Field(description=f"How many hits (1-{MAX_RESULTS}).")
        ] = DEFAULT_RESULTS,
        source: Annotated[
            str | None, Field(description=f"Only this source: {', '.join(SOURCES)}.")
        ] = None,
        session: Annotated[str | None, Field(description="Only this session (id).")] = None,
        since: Annotated[str | None, Field(description=SINCE_DESCRIPTION)] = None,
        until: Annotated[str | None, Field(description=UNTIL_DESCRIPTION)] = None,
        kind: Annotated[str | None, Field(description=f"{', '.join(KINDS)} (default all).")] = None,
        mode: Annotated[
            str | None,
            Field(
                description="keyword (exact words), semantic (meaning) or hybrid (both; the "
                "default when the archive has embeddings). Try semantic when words miss."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, SearchAnswer]:
        answer = _call(
            tools.search, query, max_results=max_results, source=source, session=session,
            since=since, until=until, kind=kind, mode=mode,
        )  # fmt: skip
        return _result(answer)

    @server.tool(name="memory_get", description=GET_DESCRIPTION, annotations=read_only)
    async def memory_get(
        ref: Annotated[str, Field(description="A ref from memory_search, or a session_id.")],
        context: Annotated[
            int, Field(description="Neighbouring turns to include on each side (0-10).")
        ] = 1,
    ) -> CallToolResult:
        return _result(_call(tools.get, ref, context=context))

    return server


_BAD_ARGUMENTS = re.compile(r"^(Error executing tool \w+: )\d+ validation errors? for \w+\n")
_FIELD_ERROR = re.compile(r"^(\w+)\n  (.+?) \[type=", re.MULTILINE)


async def _plain_argument_errors(ctx: Any, call_next: Any) -> Any:
    """Arguments of the wrong shape get one line naming each field, not pydantic's report.

    Middleware sees the answer in its wire form (a dict), after the SDK validated the arguments.
    """
    result = await call_next(ctx)
    if not isinstance(result, dict) or result.get("isError") is not True:
        return result
    content = result.get("content") or [{}]
    text = content[0].get("text") if isinstance(content[0], dict) else None
    found = _BAD_ARGUMENTS.match(text) if isinstance(text, str) else None
    if found is None or not isinstance(text, str):
        return result
    fields = "; ".join(f"{name}: {why}" for name, why in _FIELD_ERROR.findall(text))
    plain = f"{found.group(1)}bad arguments ({fields or 'see the input schema'})."
    return {**result, "content": [{"type": "text", "text": plain}]}


def _call(function: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """Run a tool; the model's mistakes become one-sentence tool errors, the server goes on."""
    try:
        return function(*args, **kwargs)
    except ClawbackError as exc:
        raise ToolError(" ".join(str(exc).split())) from None
    except sqlite3.Error as exc:  # a damaged or locked index: which, and what to do
        raise ToolError(explain(exc)) from None
    except Exception as exc:  # a bug: say so, keep serving
        logging.getLogger(__name__).exception("memory tool failed")
        raise ToolError(f"The archive could not answer ({type(exc).__name__}: {exc}).") from None


def _result(answer: dict[str, Any]) -> CallToolResult:
    text = answers.dumps(answer)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=answer)


def serve(db: Queryable, nearest: NearestChunks | None = None) -> None:
    """Serve on stdin/stdout until the client closes stdin (behind :mod:`.front`, which owns
    the real ones and hands the SDK pipes on fd 0 and fd 1)."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="clawback mcp: %(message)s"
    )
    build_server(db, nearest).run("stdio")
