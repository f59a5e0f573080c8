"""A model response's token counts as each format writes them -> :class:`TokenUsage`.

Claude Code's lines are read by the rules ccusage applies to them (``docs/usage.md``): a line
whose usage or identifying fields are malformed counts nothing rather than a guess, and a
sub-agent's messages relayed in the parent's ``progress`` lines count like its own file's
(the two are one response, counted once by the index). pi / OpenClaw and clawback's own
transcripts carry one usage per assistant message.

Every function here is pure and never raises: a line it cannot read gives ``None``.
"""

from __future__ import annotations

import re
from typing import Any

from clawback.core.records import TokenUsage

# Counts are clamped to what SQLite's INTEGER holds with room to add them up.
MAX_COUNT = 2**53
_SEMVER_PREFIX = re.compile(r"\d+\.\d+\.\d")
_BAD = object()  # a field that is present with a value its type cannot be


def count(value: Any) -> int | None:
    """A token count (a non-negative whole number), or ``None`` if ``value`` is not one."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return min(value, MAX_COUNT)


def _lenient(value: Any) -> int:
    """A count where the format is loose about it (pi): anything else is 0."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    counted = count(value)
    return 0 if counted is None else counted


def _optional(obj: dict[str, Any], key: str, kind: type) -> Any:
    """``obj[key]`` if absent-or-of-``kind`` (``None`` when absent), else :data:`_BAD`.

    A JSON null counts as bad: ccusage rejects a line whose identifying fields are null.
    """
    if key not in obj:
        return None
    value = obj[key]
    if kind is int:
        ok = count(value) is not None
    elif kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind is bool:
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, str)
    if not ok:
        return _BAD
    return float(value) if kind is float else value


def claude_code_usage(obj: dict[str, Any]) -> TokenUsage | None:
    """The usage of a Claude Code line: its own message's, or a relayed sub-agent message's."""
    message = obj.get("message")
    if isinstance(message, dict):
        return _claude_code_message(obj, message, top_level=True)
    if obj.get("type") == "progress":
        data = obj.get("data")
        relayed = data.get("message") if isinstance(data, dict) else None
        inner = relayed.get("message") if isinstance(relayed, dict) else None
        if isinstance(relayed, dict) and isinstance(inner, dict):
            return _claude_code_message(relayed, inner, top_level=False)
    return None


def _claude_code_message(
    line: dict[str, Any], message: dict[str, Any], *, top_level: bool
) -> TokenUsage | None:
    raw = message.get("usage")
    if not isinstance(raw, dict):
        return None
    input_tokens = count(raw.get("input_tokens"))
    output_tokens = count(raw.get("output_tokens"))
    if input_tokens is None or output_tokens is None:
        return None
    cache_read = _optional(raw, "cache_read_input_tokens", int)
    cache_write = _optional(raw, "cache_creation_input_tokens", int)
    speed = _optional(raw, "speed", str)
    if _BAD in (cache_read, cache_write, speed) or speed not in (None, "standard", "fast"):
        return None
    breakdown = raw.get("cache_creation")
    write_1h = 0
    if isinstance(breakdown, dict):
        five = _optional(breakdown, "ephemeral_5m_input_tokens", int)
        hour = _optional(breakdown, "ephemeral_1h_input_tokens", int)
        if _BAD in (five, hour):
            return None
        write_1h = hour or 0
        cache_write = (five or 0) + write_1h  # the breakdown, when given, is the count
    elif breakdown is not None:
        return None
    stamp = line.get("timestamp")
    if not isinstance(stamp, str) or not stamp:
        return None
    session = _optional(line, "sessionId", str) if top_level else None
    version = _optional(line, "version", str) if top_level else None
    request = _optional(line, "requestId", str)
    cost = _optional(line, "costUSD", float)
    sidechain = _optional(line, "isSidechain", bool)
    api_error = _optional(line, "isApiErrorMessage", bool)
    model = _optional(message, "model", str)
    message_id = _optional(message, "id", str)
    fields = (session, version, request, cost, api_error, model, message_id)
    if _BAD in fields or sidechain is _BAD or (top_level and line.get("cwd", "") is None):
        return None
    if "" in (session, request, model, message_id):
        return None
    if version is not None and not _SEMVER_PREFIX.match(version):
        return None
    return TokenUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read or 0,
        cache_write_tokens=min(cache_write or 0, MAX_COUNT),
        cache_write_1h_tokens=write_1h,
        model=None if model == "<synthetic>" else model,
        timestamp=stamp,
        message_id=message_id,
        request_id=request,
        sidechain=sidechain is True,
        fast=speed == "fast",
        cost_usd=cost,
    )


def pi_usage(message: dict[str, Any], stamp: Any) -> TokenUsage | None:
    """The usage of a pi / OpenClaw assistant message (``input``, ``cacheRead``, ...).

    pi prices each message itself (``usage.cost.total``); a message that used no tokens (an
    aborted one) counts nothing.
    """
    raw = message.get("usage")
    if not isinstance(raw, dict):
        return None
    usage = TokenUsage(
        input_tokens=_lenient(raw.get("input")),
        output_tokens=_lenient(raw.get("output")),
        cache_read_tokens=_lenient(raw.get("cacheRead")),
        cache_write_tokens=_lenient(raw.get("cacheWrite")),
    )
    if usage.total_tokens == 0:
        return None
    model = message.get("model") or message.get("modelId")
    usage.model = model if isinstance(model, str) and model else None
    usage.timestamp = stamp
    cost = raw.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    if isinstance(total, int | float) and not isinstance(total, bool) and total >= 0:
        usage.cost_usd = float(total)
    return usage


def native_usage(line: dict[str, Any]) -> TokenUsage | None:
    """The usage of one of clawback's own assistant messages.

    Written with the names the chat agreed on (``cache_read_tokens``, ``cache_write_tokens``)
    or the API's (``cache_read_input_tokens``, ``cache_creation_input_tokens``); ``cost_usd``,
    when the line has it, is what the ``claude`` CLI reported for the turn.
    """
    raw = line.get("usage")
    if not isinstance(raw, dict):
        return None

    def first(*keys: str) -> int:
        for key in keys:
            value = count(raw.get(key))
            if value is not None:
                return value
        return 0

    usage = TokenUsage(
        input_tokens=first("input_tokens"),
        output_tokens=first("output_tokens"),
        cache_read_tokens=first("cache_read_tokens", "cache_read_input_tokens"),
        cache_write_tokens=first("cache_write_tokens", "cache_creation_input_tokens"),
        cache_write_1h_tokens=first("cache_write_1h_tokens"),
    )
    if usage.total_tokens == 0:
        return None
    model = line.get("model")
    usage.model = model if isinstance(model, str) and model else None
    usage.timestamp = line.get("timestamp") if isinstance(line.get("timestamp"), str) else None
    cost = raw.get("cost_usd", line.get("cost_usd"))
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
        usage.cost_usd = float(cost)
    return usage
