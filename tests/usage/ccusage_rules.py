"""ccusage's rules for Claude Code usage, written out from its source to check clawback against.

Read from ryoppippi/ccusage (``rust/crates/ccusage/src/adapter/claude/{mod,daily,paths}.rs``,
``cost.rs``, ``date_utils.rs``; the 20.0.x loader) and written here independently, as a plain
reading of whole files with none of clawback's code:

- a line counts if it holds the text ``"usage":{`` and no null in the fields ccusage checks
  (``id``, ``model``, ``sessionId``, ``requestId``, ...; a text scan of the whole line), and
  decodes to an object with a ``timestamp`` (``YYYY-MM-DDTHH:MM:SS[.mmm]`` and ``Z`` or an
  offset) and a ``message.usage`` with whole ``input_tokens`` and ``output_tokens``; a
  ``progress`` line relaying a sub-agent's message counts that message (daily report);
- ``version`` must start ``N.N.N``; an empty ``sessionId``, ``requestId``, message ``id`` or
  ``model`` drops the line; ``<synthetic>`` is no model;
- files are read in path order; a line with the message id and request id of one kept before
  is the same response, as is one with that message id where either is a sidechain line; of a
  response's lines the kept one is the main-thread one, else the one with more tokens (then the
  dearer, then one with a ``speed``); a line without a message id is never a duplicate;
- cache writes are the ``cache_creation`` breakdown (5 minutes + 1 hour) when given, else
  ``cache_creation_input_tokens``; cost is the line's ``costUSD`` when it has one, else tokens
  times the model's rates, each token kind above 200,000 in one line at the model's long rate;
- a session is the file's name (``<project>/<session>.jsonl``) or its folder
  (``<project>/<session>/...``, sub-agents under ``subagents/`` included).

``text_rules=False`` reads every line as JSON is read (any spacing, any ISO 8601 time, nulls
judged by field): the two ways clawback reads deliberately differently (``docs/usage.md``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clawback.core.usage import PriceTable

MARKER = b'"usage":{'
NULL_CHECKED = {
    "id", "cwd", "model", "speed", "costUSD", "version", "sessionId", "requestId",
    "isApiErrorMessage", "cache_read_input_tokens", "cache_creation_input_tokens",
}  # fmt: skip
_NULL_FIELD = re.compile(rb'"([^"]*)"\s*:\s*null')
_STRICT_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{3})?(?:Z|[+-]\d\d:\d\d)$")
_SEMVER = re.compile(r"^\d+\.\d+\.\d")
THRESHOLD = 200_000


@dataclass
class Line:
    path: Path
    number: int
    seq: int  # which object of the line (Claude Code once in a while runs two together)
    day: str  # UTC date
    project: str
    session: str
    message_id: str | None
    request_id: str | None
    sidechain: bool
    input: int
    output: int
    cache_write: int
    cache_write_1h: int
    cache_read: int
    fast: bool
    model: str | None
    cost: float
    priced: bool  # False: a model without a price (its cost counted as 0)

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read


def read_lines(
    files: Iterable[Path], root: Path, prices: PriceTable, *, text_rules: bool = True
) -> list[Line]:
    """Every usage line of ``files`` ccusage reads, in its reading order (path order)."""
    lines: list[Line] = []
    for path in sorted(files, key=str):
        project, session = session_of(path.relative_to(root))
        for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
            for seq, (data, message) in enumerate(_usage_objects(raw, text_rules)):
                made = _made(data, message, path, number, project, session, prices, text_rules)
                if made is not None:
                    made.seq = seq
                    lines.append(made)
    return lines


def counted(lines: Iterable[Line]) -> list[Line]:
    """The lines that count, one per response, after ccusage's dedup."""
    kept: list[Line] = []
    by_exact: dict[tuple[str, str | None], list[int]] = {}
    by_message: dict[str, list[int]] = {}
    for line in lines:
        _push(line, kept, by_exact, by_message)
    return kept


def session_of(relative: Path) -> tuple[str, str]:
    """ccusage's (project, session) for a file below its projects folder."""
    parts = relative.parts
    stem = parts[-1].removesuffix(".jsonl")
    if len(parts) == 2:
        return parts[0], stem
    if len(parts) >= 4 and parts[-2] == "subagents":
        return "/".join(parts[:-3]) or "Unknown Project", parts[-3]
    session = parts[-2] if len(parts) >= 2 else "unknown"
    return ("/".join(parts[:-2]) if len(parts) > 2 else "Unknown Project"), session


def _usage_objects(raw: bytes, text_rules: bool) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    if text_rules:
        if MARKER not in raw:
            return []
        if any(name.decode(errors="replace") in NULL_CHECKED for name in _NULL_FIELD.findall(raw)):
            return []
        try:
            objects = [json.loads(raw)]  # a line holds one object, or counts nothing
        except ValueError:
            return []
    elif b'"usage"' not in raw:
        return []
    else:
        objects = _objects(raw.decode("utf-8", "replace"))
    found = []
    for obj in objects:
        pair = _usage_of(obj) if isinstance(obj, dict) else None
        if pair is not None:
            found.append(pair)
    return found


def _objects(text: str) -> list[Any]:
    """Every JSON value on a line (two objects run together are both read)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text):
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            break
        values.append(value)
    return values


def _usage_of(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    message = obj.get("message")
    if isinstance(message, dict) and isinstance(message.get("usage"), dict):
        return obj, message
    relayed = (obj.get("data") or {}).get("message") if isinstance(obj.get("data"), dict) else None
    if isinstance(relayed, dict) and isinstance(relayed.get("message"), dict):
        inner = relayed["message"]
        if isinstance(inner.get("usage"), dict):
            # ccusage takes the relayed message's own time, request id and flags only.
            keep = ("timestamp", "requestId", "isSidechain", "costUSD")
            return {k: relayed[k] for k in keep if k in relayed}, inner
    return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _made(
    data: dict[str, Any],
    message: dict[str, Any],
    path: Path,
    number: int,
    project: str,
    session: str,
    prices: PriceTable,
    text_rules: bool,
) -> Line | None:
    usage = message["usage"]
    inp, out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    if inp is None or out is None:
        return None
    fields: dict[str, Any] = {}
    for name, holder, kind in (
        ("cache_creation_input_tokens", usage, int), ("cache_read_input_tokens", usage, int),
        ("speed", usage, str), ("sessionId", data, str), ("version", data, str),
        ("requestId", data, str), ("costUSD", data, float), ("isSidechain", data, bool),
        ("isApiErrorMessage", data, bool), ("model", message, str), ("id", message, str),
    ):  # fmt: skip
        if name not in holder:
            fields[name] = None
            continue
        value = holder[name]
        ok = {
            int: _count(value) is not None,
            str: isinstance(value, str),
            bool: isinstance(value, bool),
            float: isinstance(value, int | float) and not isinstance(value, bool),
        }[kind]
        if not ok and not (value is None and name == "isSidechain"):
            return None
        fields[name] = value
    if fields["speed"] not in (None, "standard", "fast"):
        return None
    breakdown = usage.get("cache_creation")
    write_1h = 0
    cache_write = fields["cache_creation_input_tokens"] or 0
    if isinstance(breakdown, dict):
        five, hour = (
            breakdown.get("ephemeral_5m_input_tokens", 0),
            breakdown.get("ephemeral_1h_input_tokens", 0),
        )
        if _count(five) is None or _count(hour) is None:
            return None
        cache_write, write_1h = five + hour, hour
    elif breakdown is not None:
        return None
    stamp = data.get("timestamp")
    moment = _time(stamp, text_rules)
    if moment is None:
        return None
    if fields["version"] is not None and not _SEMVER.match(fields["version"]):
        return None
    if "" in (fields["sessionId"], fields["requestId"], fields["model"], fields["id"]):
        return None
    if not text_rules and data.get("cwd", "") is None:
        return None
    model = None if fields["model"] == "<synthetic>" else fields["model"]
    fast = fields["speed"] == "fast"
    line = Line(
        path, number, 0, moment.strftime("%Y-%m-%d"), project, session, fields["id"],
        fields["requestId"], fields["isSidechain"] is True, inp, out, cache_write, write_1h,
        fields["cache_read_input_tokens"] or 0, fast, model, 0.0, True,
    )  # fmt: skip
    if fields["costUSD"] is not None:
        line.cost = float(fields["costUSD"])
    else:
        line.cost, line.priced = _cost(line, prices)
    return line


def _time(stamp: Any, text_rules: bool) -> datetime | None:
    if not isinstance(stamp, str) or (text_rules and not _STRICT_TS.match(stamp)):
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def _cost(line: Line, prices: PriceTable) -> tuple[float, bool]:
    """ccusage's calculation: each token kind tiered on its own count in the line."""
    if line.total == 0:
        return 0.0, True
    price = prices.find(line.model, line.day) if line.model else None
    if price is None or (line.fast and price.fast is None):
        return 0.0, line.model is None
    base, long = price.rates, price.long if price.long_above == THRESHOLD else None

    def tiered(tokens: int, rate: float, above: float | None) -> float:
        if above is not None and tokens > THRESHOLD:
            return THRESHOLD * rate + (tokens - THRESHOLD) * above
        return tokens * rate

    five = line.cache_write - line.cache_write_1h
    cost = (
        tiered(line.input, base.input, long.input if long else None)
        + tiered(line.output, base.output, long.output if long else None)
        + tiered(five, base.cache_write_5m, long.cache_write_5m if long else None)
        + tiered(line.cache_write_1h, base.cache_write_1h, long.cache_write_1h if long else None)
        + tiered(line.cache_read, base.cache_read, long.cache_read if long else None)
    ) / 1_000_000
    return cost * (price.fast if line.fast and price.fast else 1.0), True


def _push(
    line: Line,
    kept: list[Line],
    by_exact: dict[tuple[str, str | None], list[int]],
    by_message: dict[str, list[int]],
) -> None:
    if line.message_id is None:
        kept.append(line)
        return
    key = (line.message_id, line.request_id)
    match = next((i for i in by_exact.get(key, []) if _same(kept[i], key)), None)
    if match is None:
        match = next(
            (
                i
                for i in by_message.get(line.message_id, [])
                if kept[i].message_id == line.message_id and (line.sidechain or kept[i].sidechain)
            ),
            None,
        )
    if match is not None:
        if _better(line, kept[match]):
            kept[match] = line
        return
    kept.append(line)
    by_exact.setdefault(key, []).append(len(kept) - 1)
    by_message.setdefault(line.message_id, []).append(len(kept) - 1)


def _same(line: Line, key: tuple[str, str | None]) -> bool:
    return (line.message_id, line.request_id) == key


def _better(candidate: Line, existing: Line) -> bool:
    if candidate.sidechain != existing.sidechain:
        return existing.sidechain
    if candidate.total != existing.total:
        return candidate.total > existing.total
    if candidate.cost != existing.cost:
        return candidate.cost > existing.cost
    return candidate.fast and not existing.fast
