"""The dated price table and the config's overrides (item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawback.core.config import load_config
from clawback.core.errors import ConfigError
from clawback.core.usage import Tokens, load_prices, model_family

MILLION = 1_000_000


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-haiku-4-5@20251001", "claude-haiku-4-5"),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"),
        ("anthropic/claude-opus-4-6", "claude-opus-4-6"),
        ("claude-opus-4-6[1m]", "claude-opus-4-6"),
        ("Claude-Opus-5", "claude-opus-5"),
        ("claude-3-7-sonnet-20250219", "claude-3-7-sonnet"),
    ],
)
def test_a_providers_id_names_its_model(model: str, family: str) -> None:
    assert model_family(model) == family
    assert model in load_prices()


def test_each_kind_of_token_has_its_rate() -> None:
    prices = load_prices()
    tokens = Tokens(input=1_000, output=2_000, cache_read=50_000, cache_write=3_000,
                    cache_write_1h=1_000)  # fmt: skip
    # Sonnet 4.5: $3 in, $15 out, $3.75 5-minute writes, $6 1-hour writes, $0.30 reads.
    expected = (1_000 * 3 + 2_000 * 15 + 2_000 * 3.75 + 1_000 * 6 + 50_000 * 0.30) / MILLION
    assert prices.cost("claude-sonnet-4-5-20250929", tokens) == pytest.approx(expected)


def test_a_model_without_a_price_has_no_cost_never_a_guess() -> None:
    prices = load_prices()
    assert prices.cost("gpt-5.1-codex", Tokens(input=10)) is None
    assert prices.cost(None, Tokens(output=10)) is None
    assert prices.cost("claude-sonnet-4-5-but-not-really", Tokens(input=10)) is None
    assert prices.cost("gpt-5.1-codex", Tokens()) == 0.0  # nothing used, nothing owed


def test_a_price_applies_from_its_date() -> None:
    """Sonnet 5.5's cache reads went from $0.20 to $0.10 on 2026-10-07."""
    prices = load_prices()
    reads = Tokens(cache_read=MILLION)
    assert prices.cost("claude-sonnet-5-5", reads, day="2026-10-06") == pytest.approx(0.20)
    assert prices.cost("claude-sonnet-5-5", reads, day="2026-10-07") == pytest.approx(0.10)
    assert prices.cost("claude-sonnet-5-5", reads) == pytest.approx(0.10)  # the newest


def test_long_prompts_and_fast_mode() -> None:
    prices = load_prices()
    tokens = Tokens(input=MILLION, output=MILLION)
    assert prices.cost("claude-sonnet-4-5", tokens, band=1) == pytest.approx(3 + 15)
    assert prices.cost("claude-sonnet-4-5", tokens, band=2) == pytest.approx(6 + 22.5)
    assert prices.cost("claude-haiku-5-5", tokens, band=0) == pytest.approx(0.10 + 0.50)
    assert prices.cost("claude-haiku-5-5", tokens, band=1) == pytest.approx(0.50 + 2.50)
    assert prices.cost("claude-opus-4-6", tokens, fast=True) == pytest.approx(6 * (5 + 25))
    assert prices.cost("claude-opus-5-5", tokens, fast=True) == pytest.approx(2 * (4 + 20))
    assert prices.cost("claude-haiku-4-5", tokens, fast=True) is None  # no fast price known


def test_the_config_adds_and_replaces_prices(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[usage]\nprices = ["my-model=2,8", "claude-sonnet-4-5=1,2,3,4,0.5"]\n', "utf-8"
    )
    prices = load_prices(load_config(config).usage.prices)
    ones = Tokens(input=MILLION, output=MILLION, cache_read=MILLION, cache_write=MILLION)
    # Two prices: Anthropic's cache rates on the input price (1.25x writes, 0.1x reads).
    assert prices.cost("my-model", ones) == pytest.approx(2 + 8 + 2.5 + 0.2)
    assert prices.cost("claude-sonnet-4-5-20250929", ones) == pytest.approx(1 + 2 + 3 + 0.5)
    assert prices.cost("claude-haiku-4-5", ones) == pytest.approx(1 + 5 + 1.25 + 0.1)


@pytest.mark.parametrize(
    "entry", ["no-equals", "=1,2", "m=1", "m=1,2,3", "m=a,b", "m=-1,2", "m=1,nan", "m=1,inf"]
)
def test_a_bad_price_in_the_config_is_one_clear_error(tmp_path: Path, entry: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[usage]\nprices = ["{entry}"]\n', "utf-8")
    with pytest.raises(ConfigError, match=r"usage\.prices"):
        load_config(config)


def test_the_shipped_table_is_dated_and_whole() -> None:
    prices = load_prices()
    assert prices.checked is not None and prices.checked >= "2026-11-01"
    for model in prices.models():
        price = prices.find(model)
        assert price is not None
        rates = price.rates
        assert 0 < rates.cache_read < rates.input < rates.output, model
        assert rates.input < rates.cache_write_5m < rates.cache_write_1h, model
