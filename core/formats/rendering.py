"""How tool calls and content blocks become text: one-line displays for the transcript and
verbatim, searchable text for the index.

Shared by the Claude Code and OpenClaw parsers (both write tool calls as a name plus JSON
arguments, and results as strings or lists of blocks) and by the catalog's titles. Pure
functions that never raise: every parser calls them on untrusted JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

IMAGE_MARKER = "[image]"
DISPLAY_WIDTH = 120

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TAG = re.compile(r"</?([A-Za-z][\w:-]*)(?:\s[^<>]*)?>")

# Input fields that best summarise a tool call in one line, most telling first.
SUMMARY_FIELDS = (
    "command",
    "file_path",
    "path",
    "notebook_path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "skill",
    "subject",
    "task_id",
)


def one_line(text: str, width: int = DISPLAY_WIDTH) -> str:
    """Collapse whitespace and cut to ``width`` characters, looking only at the head of text."""
    head = " ".join(text[: width * 4].split())
    return head if len(head) <= width else head[: width - 1] + "…"


# Tools whose every call restates a whole state: Claude Code's todo list is written out in full
# at each step, so a session holds a dozen near-identical ``TodoWrite`` calls, versions of one
# list rather than different things said.
RESTATING_TOOLS = frozenset({"TodoWrite"})


def restated_tool(text: str) -> str | None:
    """The tool's name when ``text`` (a tool call as :func:`describe_tool_call` writes it) is a
    call of one of :data:`RESTATING_TOOLS`, else ``None``."""
    name = text.split("\n", 1)[0]
    return name if name in RESTATING_TOOLS else None


def describe_tool_call(name: Any, arguments: Any) -> tuple[str, str]:
    """Return ``(display, text)`` for a tool call.

    ``display`` is what the transcript shows (``Bash: ls -la``); ``text`` is the tool name and
    every argument with string values verbatim (not JSON-escaped), so a search finds any path,
    command or line of code the call carried.
    """
    tool = name if isinstance(name, str) and name else "tool"
    rendered = "" if arguments is None else render_value(arguments)
    summary = ""
    if isinstance(arguments, dict):
        for key in SUMMARY_FIELDS:
            value = arguments.get(key)
            if isinstance(value, str) and value.strip():
                summary = value
                break
    if not summary:
        summary = rendered
    display = f"{tool}: {one_line(summary)}" if summary.strip() else tool
    return display, f"{tool}\n{rendered}" if rendered else tool


def render_value(value: Any, depth: int = 0) -> str:
    """Render decoded JSON as ``key: value`` lines with every string leaf left verbatim."""
    if isinstance(value, str):
        return value
    if depth < 32:
        if isinstance(value, dict):
            return "\n".join(
                f"{key}: {render_value(item, depth + 1)}" for key, item in value.items()
            )
        if isinstance(value, list):
            return "\n".join(render_value(item, depth + 1) for item in value)
    return _to_json(value)


def flatten_content(content: Any) -> str:
    """Flatten a tool result's content (a string or a list of blocks) into plain text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else render_value(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
            elif block.get("type") == "image":
                parts.append(IMAGE_MARKER)
            elif isinstance(block.get("tool_name"), str):  # tool_reference blocks
                parts.append(block["tool_name"])
            elif isinstance(block.get("url"), str):  # web search results
                title = block.get("title")
                parts.append(f"{title} {block['url']}" if isinstance(title, str) else block["url"])
    return "\n".join(parts)


def _to_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def strip_markup(text: str) -> str:
    """Text without XML-ish tags and terminal escapes, whitespace collapsed (for one-liners).

    A tag is markup when it is closed somewhere in the text (``<div>...</div>``) or named the
    way the CLI names its tags (``<bash-stdout>``, ``<ide_selection>``); code such as
    ``List<String>`` or ``Vec<u8>`` stays as written.
    """
    head = ANSI_ESCAPE.sub("", text[:4000])
    closed = {name.lower() for name in re.findall(r"</([A-Za-z][\w:-]*)\s*>", head)}

    def drop(tag: re.Match[str]) -> str:
        name = tag.group(1)
        return " " if name.lower() in closed or "-" in name or "_" in name else tag.group(0)

    return " ".join(_TAG.sub(drop, head).split())
