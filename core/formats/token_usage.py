"""A model response's token counts as each format writes them -> :class:`TokenUsage`.

Claude Code's lines are read by the rules ccusage applies to them (``docs/usage.md``): a line
whose usage or identifying fields are malformed counts nothing rather than a guess, and a
sub-agent's messages relayed in the parent's ``progress`` lines count like its own file's
(the two are one response, counted once by the index). pi / OpenClaw and clawback's own
transcripts carry one usage per assistant message.

Every function here is pure and never raises: a line it cannot read gives ``None``.
"""

from __future__ import annotations

import math
import re
from typing import Any

from clawback.core.records import TokenUsage

# Counts are clamped to what SQLite's INTEGER holds with room to add them up.
MAX_COUNT = 2**53
_SEMVER_PREFIX = re.compile(r"\d+\.\d+\.\d")
_BAD: Any = object()  # a field the line does not have


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


def claude_code_usage(obj: dict[str, Any]) -> TokenUsage | None:
    """The usage of a Claude Code line: its own message's, or a relayed sub-agent message's."""
    message = obj.get("message")
    if type(message) is dict:
        return claude_code_message_usage(obj, message, top_level=True)
    if obj.get("type") == "progress":
        data = obj.get("data")
        relayed = data.get("message") if type(data) is dict else None
        inner = relayed.get("message") if type(relayed) is dict else None
        if type(relayed) is dict and type(inner) is dict:
            return claude_code_message_usage(relayed, inner, top_level=False)
    return None


def claude_code_message_usage(
    line: dict[str, Any], message: dict[str, Any], *, top_level: bool
) -> TokenUsage | None:
    """``message``'s usage, with ``line``'s time and ids, by ccusage's rules; ``None`` when a
    count or an identifying field is malformed (null, the wrong type, or empty)."""
    # Spelled out check by check, ``type(x) is int`` (no bool): this runs for every reply.
    raw = message.get("usage")
    if type(raw) is not dict:
        return None
    input_tokens = raw.get("input_tokens")
    output_tokens = raw.get("output_tokens")
    cache_read = raw.get("cache_read_input_tokens", 0)
    cache_write = raw.get("cache_creation_input_tokens", 0)
    if (
        type(input_tokens) is not int
        or type(output_tokens) is not int
        or type(cache_read) is not int
        or type(cache_write) is not int
        or input_tokens < 0
        or output_tokens < 0
        or cache_read < 0
        or cache_write < 0
    ):
        return None
    speed = raw.get("speed", _BAD)
    if speed is not _BAD and speed != "standard" and speed != "fast":
        return None
    write_1h = 0
    breakdown = raw.get("cache_creation")
    if breakdown is not None:
        if type(breakdown) is not dict:
            return None
        five = breakdown.get("ephemeral_5m_input_tokens", 0)
        write_1h = breakdown.get("ephemeral_1h_input_tokens", 0)
        if type(five) is not int or type(write_1h) is not int or five < 0 or write_1h < 0:
            return None
        cache_write = five + write_1h  # the breakdown, when given, is the count
    stamp = line.get("timestamp")
    request = line.get("requestId", _BAD)
    model = message.get("model", _BAD)
    message_id = message.get("id", _BAD)
    if (
        type(stamp) is not str
        or not stamp
        or not _text_or_absent(request)
        or not _text_or_absent(model)
        or not _text_or_absent(message_id)
    ):
        return None
    if top_level and not _line_fields_ok(line):
        return None
    cost = line.get("costUSD", _BAD)
    if cost is not _BAD and (type(cost) not in (float, int) or not math.isfinite(cost)):
        return None
    sidechain = line.get("isSidechain")
    if sidechain is not None and type(sidechain) is not bool:
        return None
    api_error = line.get("isApiErrorMessage", False)
    if type(api_error) is not bool:
        return None
    return TokenUsage(
        min(input_tokens, MAX_COUNT),
        min(output_tokens, MAX_COUNT),
        min(cache_read, MAX_COUNT),
        min(cache_write, MAX_COUNT),
        min(write_1h, MAX_COUNT),
        None if model is _BAD or model == "<synthetic>" else model,
        stamp,
        None if message_id is _BAD else message_id,
        None if request is _BAD else request,
        sidechain is True,
        speed == "fast",
        None if cost is _BAD else float(cost),
    )


def _text_or_absent(value: Any) -> bool:
    """An id or model: absent, or text that is not empty."""
    return value is _BAD or (type(value) is str and value != "")


def _line_fields_ok(line: dict[str, Any]) -> bool:
    """A line's own session id, version and working folder as ccusage accepts them."""
    session = line.get("sessionId", _BAD)
    if not _text_or_absent(session):
        return False
    version = line.get("version", _BAD)
    if version is not _BAD and (type(version) is not str or not _SEMVER_PREFIX.match(version)):
        return False
    return line.get("cwd", "") is not None


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
    if isinstance(total, int | float) and not isinstance(total, bool) and 0 <= total < math.inf:
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
    if isinstance(cost, int | float) and not isinstance(cost, bool) and 0 <= cost < math.inf:
        usage.cost_usd = float(cost)
    return usage
