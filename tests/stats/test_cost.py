"""Dollars from tokens and a dated price table: arithmetic, lower bounds, and unknown never zero."""

from __future__ import annotations

import pytest

from pluginbench.errors import InputError
from pluginbench.stats._cost import attempt_cost, parse_prices, total_cost

PRICES = parse_prices(
    {"as_of": "2026-11-01", "models": {"m": {"input_per_million": 3.0, "cached_input_per_million": 0.3, "output_per_million": 15.0}}},
    "prices.json",
)


def tokens(status: str = "exact", inp: int | None = 1_000_000, cached: int | None = 400_000, out: int | None = 100_000) -> dict:
    return {"status": status, "input": inp, "cached_input": cached, "output": out, "reason": "why" if status == "unknown" else None}


def test_attempt_cost_prices_uncached_cached_and_output() -> None:
    """600k uncached × $3 + 400k cached × $0.30 + 100k output × $15 per million = $3.42, with its basis."""
    c = attempt_cost(tokens(), "m", PRICES)
    assert c.usd == pytest.approx(1.8 + 0.12 + 1.5)
    assert not c.lower_bound and "2026-11-01" in c.basis and "row m" in c.basis


@pytest.mark.parametrize(
    ("tok", "model", "reason"),
    [
        (tokens("unknown", None, None, None), "m", "token usage unknown: why"),
        (tokens(inp=None), "m", "input or output token count not reported"),
        (tokens(cached=None), "m", "cached input token count not reported"),
        (tokens(), "other", "no row for model 'other'"),
    ],
)
def test_unknown_tokens_or_prices_give_unknown_dollars(tok, model, reason) -> None:
    """Unknown tokens, a missing cached share, or no price row give unknown dollars with the reason, never 0."""
    c = attempt_cost(tok, model, PRICES)
    assert c.usd is None and reason in (c.reason or "")


def test_lower_bound_tokens_give_lower_bound_dollars() -> None:
    """A token floor prices to a dollar floor, and any floor makes the sum a floor."""
    lb = attempt_cost(tokens("lower_bound"), "m", PRICES)
    assert lb.lower_bound and lb.usd == pytest.approx(3.42)
    total = total_cost([attempt_cost(tokens(), "m", PRICES), lb], "arm")
    assert total.usd == pytest.approx(6.84) and total.lower_bound


def test_a_sum_with_an_unknown_attempt_is_unknown() -> None:
    """One attempt without dollars makes its task and arm totals unknown, saying how many."""
    total = total_cost([attempt_cost(tokens(), "m", PRICES), attempt_cost(tokens("unknown", None, None, None), "m", PRICES)], "t × vanilla")
    assert total.usd is None and "1 of 2 attempts in t × vanilla" in (total.reason or "")


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"models": {}}, None),
        ({"as_of": "soon", "models": {}}, "as_of"),
        ({"as_of": "2026-11-01", "models": {"m": {"input_per_million": -1, "cached_input_per_million": 0, "output_per_million": 1}}}, "models.m.input_per_million"),
        ({"as_of": "2026-11-01", "models": {"m": {"input_per_million": 1, "output_per_million": 1}}}, "models.m"),
        ({"as_of": "2026-11-01", "models": {"ok": {"input_per_million": 1, "cached_input_per_million": 0, "output_per_million": 1},
                                            "bad": {"input_per_million": "3", "cached_input_per_million": 0, "output_per_million": 1}}},
         "models.bad.input_per_million"),
        ({"as_of": "2026-11-01", "currency": "EUR", "models": {}}, "currency"),
    ],
)
def test_bad_prices_name_the_file_the_field_and_the_fix(raw, field) -> None:
    """An invalid prices file is an InputError naming prices.json, the field (the model id, never msgspec's [...]) and how to write it."""
    with pytest.raises(InputError) as info:
        parse_prices(raw, "prices.json")
    assert info.value.file == "prices.json" and info.value.fix
    if field:
        assert info.value.field == field
