"""What a model's tokens cost: the dated price table shipped with clawback, and the config's
overrides.

``prices.toml`` (package data) lists Anthropic's rates per million tokens; ``[usage] prices``
in ``config.toml`` adds models or replaces a model's rates. A model found in neither has no
price: reports show its tokens and say its cost is unknown, never a guess.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from clawback.core.config import parse_price
from clawback.core.usage.index import BANDS

MILLION = 1_000_000
PRICES_FILE = Path(__file__).with_name("prices.toml")  # package data, beside this module
RATE_NAMES = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
# Anthropic's cache rates against the input rate, for an override that gives only input and
# output: 5-minute writes 1.25x, 1-hour writes 2x, reads 0.1x.
CACHE_MULTIPLIERS = (1.25, 2.0, 0.1)

_PROVIDER = re.compile(r"^(?:[a-z]+\.)?(?:anthropic[./]|vertex_ai/|bedrock/)")
_DATED = re.compile(r"(?:-|@)\d{8}$")
_VERSIONED = re.compile(r"-v\d+(?::\d+)?$")
_CONTEXT = re.compile(r"\[[^\]]*\]$")


@dataclass(frozen=True, slots=True)
class Rates:
    """Dollars per million tokens of each kind."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float

    def scaled(self, factor: float) -> Rates:
        return Rates(*(getattr(self, name) * factor for name in RATE_NAMES))


@dataclass(frozen=True, slots=True)
class Price:
    """A model's rates from ``since`` on (``None``: from the start)."""

    rates: Rates
    since: date | None = None
    fast: float | None = None  # fast mode multiplies every rate by this
    long_above: int | None = None  # a prompt above this many tokens pays ``long``
    long: Rates | None = None

    def rates_for(self, *, band: int, fast: bool) -> Rates | None:
        """The rates of a response of prompt size ``band`` (see ``index.BANDS``); ``None``
        for a fast one when fast mode's price is not known."""
        rates = self.rates
        if (
            self.long is not None
            and self.long_above is not None
            and band > BANDS.index(self.long_above)
        ):
            rates = self.long
        if fast:
            return None if self.fast is None else rates.scaled(self.fast)
        return rates


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token counts to price (``cache_write_1h`` is the part of ``cache_write`` kept an hour)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0


class PriceTable:
    """Prices by model name; :meth:`cost` is the one place tokens become dollars."""

    def __init__(self, prices: dict[str, list[Price]], checked: str | None = None) -> None:
        # Each model's rows, oldest first.
        self._prices = {
            name: sorted(rows, key=lambda p: p.since or date.min) for name, rows in prices.items()
        }
        self.checked = checked

    def __contains__(self, model: str) -> bool:
        return self.find(model) is not None

    def models(self) -> list[str]:
        return sorted(self._prices)

    def find(self, model: str | None, day: str | None = None) -> Price | None:
        """``model``'s price on ``day`` (``YYYY-MM-DD``, UTC; ``None``: the newest)."""
        if not model:
            return None
        rows = self._prices.get(model) or self._prices.get(model_family(model))
        if not rows:
            return None
        if day is None:
            return rows[-1]
        when = _day(day)
        chosen = rows[0]
        for row in rows:
            if row.since is None or when is None or row.since <= when:
                chosen = row
        return chosen

    def cost(
        self,
        model: str | None,
        tokens: Tokens,
        *,
        day: str | None = None,
        band: int = 0,
        fast: bool = False,
    ) -> float | None:
        """Dollars for ``tokens`` of ``model``; ``None`` when its price is not known (and 0
        for no tokens at all, whatever the model)."""
        if not (tokens.input or tokens.output or tokens.cache_read or tokens.cache_write):
            return 0.0
        price = self.find(model, day)
        rates = price.rates_for(band=band, fast=fast) if price else None
        if rates is None:
            return None
        five_minute = tokens.cache_write - tokens.cache_write_1h
        return (
            tokens.input * rates.input
            + tokens.output * rates.output
            + five_minute * rates.cache_write_5m
            + tokens.cache_write_1h * rates.cache_write_1h
            + tokens.cache_read * rates.cache_read
        ) / MILLION


def model_family(model: str) -> str:
    """The undated model a provider's id names: ``claude-sonnet-4-20250514``,
    ``anthropic.claude-sonnet-4-5-20250929-v1:0``, ``claude-haiku-4-5@20251001`` and
    ``claude-opus-4-6[1m]`` name ``claude-sonnet-4``, ``claude-sonnet-4-5``, ... ."""
    name = model.strip().lower()
    name = _CONTEXT.sub("", _PROVIDER.sub("", name))
    name = _VERSIONED.sub("", name)
    return _DATED.sub("", name)


def override(text: str) -> tuple[str, Price]:
    """A ``usage.prices`` entry as the model and its price; two prices (input and output)
    get Anthropic's cache rates (:data:`CACHE_MULTIPLIERS`)."""
    model, values = parse_price(text)
    if len(values) == 2:
        values += [values[0] * factor for factor in CACHE_MULTIPLIERS]
    return model, Price(Rates(*values))


def load_prices(overrides: list[str] | tuple[str, ...] = ()) -> PriceTable:
    """The shipped table with ``overrides`` (``[usage] prices``, checked when the config was
    read) replacing or adding models."""
    shipped = _shipped()
    prices = {name: list(rows) for name, rows in shipped._prices.items()}
    for text in overrides:
        model, price = override(text)
        prices[model] = [price]
        prices[model_family(model)] = [price]
    return PriceTable(prices, shipped.checked)


@cache
def _shipped() -> PriceTable:
    data = tomllib.loads(PRICES_FILE.read_text("utf-8"))
    prices: dict[str, list[Price]] = {}
    for row in data.get("price", []):
        price = _price(row)
        for name in row["models"]:
            prices.setdefault(name, []).append(price)
    checked = data.get("checked")
    return PriceTable(prices, str(checked) if checked else None)


def _price(row: dict[str, Any]) -> Price:
    rates = Rates(*(float(row[name]) for name in RATE_NAMES))
    long = row.get("long")
    price = Price(rates, since=row.get("since"), fast=row.get("fast"))
    if long:
        if long["above"] not in BANDS:
            raise ValueError(f"prices.toml: long.above must be one of {BANDS}")
        price = replace(
            price,
            long_above=int(long["above"]),
            long=Rates(*(float(long[name]) for name in RATE_NAMES)),
        )
    return price


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None
