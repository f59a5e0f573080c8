"""Typed events from the output of ``claude -p`` (Claude Code print mode).

``claude -p --output-format stream-json --verbose --include-partial-messages`` prints one JSON
object per line: ``system`` lines (``init``, ``status``, ``api_retry``, and others that come and go
between versions), ``stream_event`` lines wrapping the Messages API's server-sent events, whole
``assistant`` (and ``user``) messages, and one final ``result``. ``--output-format json`` prints
only the ``result`` object. This module turns those lines into small frozen dataclasses; the
shapes it accepts are the captures of the real CLI in ``shared/claude-cli/``.

It only parses text. It never starts a process, never does IO, and never raises on a line it does
not know: unknown line types and unknown fields are ignored, because every CLI release adds some.
The one error it raises is :class:`UnparseableOutput`, for text that is not a JSON object at all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clawback.core import safejson

__all__ = [
    "ApiRetry",
    "AssistantMessage",
    "Event",
    "Result",
    "SystemInit",
    "TextDelta",
    "ToolCall",
    "UnparseableOutput",
    "Usage",
    "parse_json_result",
    "parse_stream_line",
]


class UnparseableOutput(ValueError):
    """Output that is not claude's JSON; the runner turns it into an error for the user."""

    def __init__(self, text: str) -> None:
        self.text = text
        first = text.strip().splitlines()[0] if text.strip() else ""
        super().__init__(f"not claude's JSON output: {first[:200]!r}")


@dataclass(frozen=True)
class Usage:
    """Token counts of one call, as the API reports them.

    ``input`` counts only the uncached part of the prompt; the prompt's real size is
    :attr:`total_tokens`, which is what fills the context window.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total_tokens(self) -> int:
        """The size of the prompt: fresh input plus what was read from and written to the cache."""
        return self.input + self.cache_read + self.cache_write

    @property
    def cache_read_share(self) -> float:
        """The share of the prompt read from the cache (0 to 1): what the cache saved."""
        total = self.total_tokens
        return self.cache_read / total if total else 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    @classmethod
    def from_api(cls, raw: object) -> Usage:
        """Read the API's ``usage`` object (``input_tokens``, ``cache_read_input_tokens``, ...)."""
        if not isinstance(raw, Mapping):
            return cls()
        return cls(
            input=_int(raw.get("input_tokens")),
            output=_int(raw.get("output_tokens")),
            cache_read=_int(raw.get("cache_read_input_tokens")),
            cache_write=_int(raw.get("cache_creation_input_tokens")),
        )


@dataclass(frozen=True)
class SystemInit:
    """The first line of a stream: which session, model and CLI version answer."""

    session_id: str
    model: str
    cwd: str = ""
    claude_code_version: str = ""
    api_key_source: str = ""
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class ApiRetry:
    """The CLI is retrying a failed API call on its own (``system/api_retry``)."""

    attempt: int
    max_retries: int
    retry_delay_ms: int
    error_status: int | None
    error: str


@dataclass(frozen=True)
class TextDelta:
    """A piece of reply text, as it streams (needs ``--include-partial-messages``)."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """A tool the model called in an assistant message (``mcp__clawback__memory_search``...)."""

    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class AssistantMessage:
    """One whole assistant message.

    When the API call failed, the CLI still prints one, with a ``<synthetic>`` model and the error
    text as its content: :attr:`is_api_error` tells them apart from a real reply. A message that
    calls tools lists them in :attr:`tool_calls` (the CLI runs them and the turn goes on).
    """

    text: str
    model: str
    usage: Usage | None = None
    is_api_error: bool = False
    error: str | None = None
    api_error_status: int | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    aborted: bool = False  # cut short by an interrupt: the text is all the CLI keeps of it


@dataclass(frozen=True)
class Result:
    """The last line of every call: the reply (or the error text), usage, cost and model."""

    reply: str
    is_error: bool
    usage: Usage
    total_cost_usd: float = 0.0
    session_id: str | None = None
    model: str | None = None
    context_window: int | None = None
    api_error_status: int | None = None
    api_error_type: str | None = None
    num_turns: int = 0
    structured_output: Any = None
    duration_ms: int | None = None
    stop_reason: str | None = None
    terminal_reason: str | None = None
    subtype: str | None = None  # "success", or "error_during_execution" (an interrupt, ...)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def interrupted(self) -> bool:
        """The turn was stopped by an interrupt (a live process goes on to the next turn)."""
        aborted = (self.terminal_reason or "").startswith("aborted")
        return aborted or (self.is_error and self.subtype == "error_during_execution")


Event = SystemInit | ApiRetry | TextDelta | AssistantMessage | Result


# Counts are clamped to what SQLite's INTEGER holds with room to add them up: a usage of 1e30
# from a broken CLI must not overflow the session's counters.
_MAX_COUNT = 2**53


def _int(value: object, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return max(-_MAX_COUNT, min(value, _MAX_COUNT))
    if isinstance(value, float) and value.is_integer():
        return int(max(-_MAX_COUNT, min(value, _MAX_COUNT)))
    return default


def _opt_int(value: object) -> int | None:
    return _int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _str(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _float(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(min(max(value, -1e15), 1e15))
        return number if math.isfinite(number) else 0.0
    return 0.0


def _main_model(model_usage: object) -> tuple[str | None, int | None]:
    """The model that answered, and its context window, from ``modelUsage``.

    ``modelUsage`` is keyed by the resolved model name. If the CLI used more than one model (a
    small one for side tasks), the one that read the biggest prompt is the one that answered.
    """
    if not isinstance(model_usage, Mapping) or not model_usage:
        return None, None
    best: tuple[int, str, int | None] | None = None
    for name, entry in model_usage.items():
        if not isinstance(name, str):
            continue
        stats = entry if isinstance(entry, Mapping) else {}
        prompt = (
            _int(stats.get("inputTokens"))
            + _int(stats.get("cacheReadInputTokens"))
            + _int(stats.get("cacheCreationInputTokens"))
        )
        window = _opt_int(stats.get("contextWindow"))
        if best is None or prompt > best[0]:
            best = (prompt, name, window)
    if best is None:
        return None, None
    return best[1], best[2]


def _message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        _str(block.get("text"))
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "text"
    )


def _tool_calls(message: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    content = message.get("content")
    if not isinstance(content, list):
        return ()
    return tuple(
        ToolCall(_str(block.get("id")), _str(block.get("name")), block.get("input") or {})
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") == "tool_use"
        and isinstance(block.get("input") or {}, Mapping)
    )


def result_from_dict(obj: Mapping[str, Any]) -> Result:
    """Build a :class:`Result` from a ``result`` object (stream line or ``json`` output)."""
    model, window = _main_model(obj.get("modelUsage"))
    reply = obj.get("result")
    return Result(
        reply=reply if isinstance(reply, str) else "",
        is_error=obj.get("is_error") is True,
        usage=Usage.from_api(obj.get("usage")),
        total_cost_usd=_float(obj.get("total_cost_usd")),
        session_id=_opt_str(obj.get("session_id")),
        model=model,
        context_window=window,
        api_error_status=_opt_int(obj.get("api_error_status")),
        api_error_type=_opt_str(obj.get("api_error_type")),
        num_turns=_int(obj.get("num_turns")),
        structured_output=obj.get("structured_output"),
        duration_ms=_opt_int(obj.get("duration_ms")),
        stop_reason=_opt_str(obj.get("stop_reason")),
        terminal_reason=_opt_str(obj.get("terminal_reason")),
        subtype=_opt_str(obj.get("subtype")),
        raw=obj,
    )


def _system_event(obj: Mapping[str, Any]) -> Event | None:
    subtype = obj.get("subtype")
    if subtype == "init":
        tools = obj.get("tools")
        return SystemInit(
            session_id=_str(obj.get("session_id")),
            model=_str(obj.get("model")),
            cwd=_str(obj.get("cwd")),
            claude_code_version=_str(obj.get("claude_code_version")),
            api_key_source=_str(obj.get("apiKeySource")),
            tools=tuple(t for t in tools if isinstance(t, str)) if isinstance(tools, list) else (),
        )
    if subtype == "api_retry":
        return ApiRetry(
            attempt=_int(obj.get("attempt")),
            max_retries=_int(obj.get("max_retries")),
            retry_delay_ms=_int(obj.get("retry_delay_ms")),
            error_status=_opt_int(obj.get("error_status")),
            error=_str(obj.get("error")),
        )
    return None


def _stream_event(obj: Mapping[str, Any]) -> Event | None:
    if obj.get("parent_tool_use_id"):  # a sub-agent's stream, not the reply
        return None
    event = obj.get("event")
    if not isinstance(event, Mapping) or event.get("type") != "content_block_delta":
        return None
    delta = event.get("delta")
    if isinstance(delta, Mapping) and delta.get("type") == "text_delta":
        text = delta.get("text")
        if isinstance(text, str) and text:
            return TextDelta(text)
    return None


def _assistant_event(obj: Mapping[str, Any]) -> Event | None:
    if obj.get("parent_tool_use_id"):
        return None
    message = obj.get("message")
    if not isinstance(message, Mapping):
        return None
    usage = message.get("usage")
    return AssistantMessage(
        text=_message_text(message),
        model=_str(message.get("model")),
        usage=Usage.from_api(usage) if isinstance(usage, Mapping) else None,
        is_api_error=obj.get("is_api_error_message") is True,
        error=_opt_str(obj.get("error")),
        api_error_status=_opt_int(obj.get("api_error_status")),
        tool_calls=_tool_calls(message),
        aborted=obj.get("aborted") is True,
    )


def event_from_dict(obj: Mapping[str, Any]) -> Event | None:
    """The event one decoded line stands for, or ``None`` if it is not one clawback uses."""
    kind = obj.get("type")
    if kind == "stream_event":
        return _stream_event(obj)
    if kind == "assistant":
        return _assistant_event(obj)
    if kind == "result":
        return result_from_dict(obj)
    if kind == "system":
        return _system_event(obj)
    return None


def _decode(text: str, original: str) -> Any:
    """The JSON of ``text``; its strings are encodable (lone surrogates replaced)."""
    try:
        return safejson.loads(text)
    except ValueError:
        raise UnparseableOutput(original) from None


def parse_stream_line(line: str | bytes) -> Event | None:
    """Parse one line of ``--output-format stream-json``.

    Blank lines and line types clawback does not use give ``None``; text that is not a JSON
    object raises :class:`UnparseableOutput`.
    """
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    text = line.strip()
    if not text:
        return None
    try:
        obj = safejson.loads(text)
    except safejson.NestedTooDeep:
        return None  # valid JSON, just deeper than Python follows: not a line clawback uses
    except ValueError:
        raise UnparseableOutput(line) from None
    if not isinstance(obj, dict):
        raise UnparseableOutput(line)
    return event_from_dict(obj)


def parse_json_result(text: str | bytes) -> Result:
    """Parse the whole output of ``--output-format json``.

    That is one ``result`` object, or with ``--verbose`` an array of every message with the
    ``result`` last. Anything else raises :class:`UnparseableOutput`.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    obj = _decode(text.strip(), text)
    if isinstance(obj, list):
        results = [o for o in obj if isinstance(o, dict) and o.get("type") == "result"]
        if results:
            return result_from_dict(results[-1])
        raise UnparseableOutput(text)
    if isinstance(obj, dict) and obj.get("type") == "result":
        return result_from_dict(obj)
    raise UnparseableOutput(text)
