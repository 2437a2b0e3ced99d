"""Dollars from token counts and a dated price table: pure arithmetic, unknown never zero.

A run's ``prices.json`` sits beside its ``evaluation.json``::

    {"as_of": "2026-11-01",
     "models": {"claude-sonnet-4-5": {"input_per_million": 3.0,
                                      "cached_input_per_million": 0.3,
                                      "output_per_million": 15.0}}}

An attempt costs ``(uncached input × input + cached input × cached_input + output ×
output) / 1,000,000`` dollars at its model's row. Unknown tokens, or no row for the model,
give unknown dollars with a reason; a token count that is only a lower bound gives a
lower bound. A sum is unknown when any attempt it counts is unknown, and a lower bound
when any is.
"""

import datetime as _dt
import math
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

import msgspec

from ..errors import InputError

#: The one definition of the per-treatment dollar figures, shared by the tables, the
#: verdict and the gates: ``cost_ratio`` is the treatment's mean dollars per attempt over
#: the comparator's; ``cost_per_pass`` is an arm's total dollars over its passing attempts.
COST_RATIO_DEFINITION = "mean dollars per attempt of the treatment / mean dollars per attempt of the comparator"
COST_PER_PASS_DEFINITION = "total dollars / passing attempts"


def cost_ratio(usd: float | None, attempts: int, usd_against: float | None, attempts_against: int) -> float | None:
    """Mean dollars per attempt of one side over the other's; ``None`` when either total is
    unknown, a side has no attempts, or the comparator spent nothing (no ratio to take)."""
    if usd is None or usd_against is None or attempts <= 0 or attempts_against <= 0:
        return None
    against = usd_against / attempts_against
    return (usd / attempts) / against if against > 0 else None


def cost_per_pass(usd: float | None, passes: int) -> float | None:
    """Total dollars over passing attempts; ``None`` when the dollars are unknown or nothing passed."""
    if usd is None or passes <= 0:
        return None
    return usd / passes


class ModelPrice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Dollars per million tokens for one model."""

    input_per_million: Annotated[float, msgspec.Meta(ge=0, description="Uncached input tokens.")]
    cached_input_per_million: Annotated[float, msgspec.Meta(ge=0, description="Input tokens read from the prompt cache.")]
    output_per_million: Annotated[float, msgspec.Meta(ge=0, description="Output tokens (reasoning included).")]
    cache_write_per_million: Annotated[
        Annotated[float, msgspec.Meta(ge=0)] | None,
        msgspec.Meta(description="Input tokens written to the prompt cache, as listed; recorded for reference "
                     "only: results.json token counts do not separate cache writes, so they are priced as uncached input."),
    ] = None


class Prices(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A dated price table (``prices.json``)."""

    as_of: Annotated[str, msgspec.Meta(description="The date the prices were read, YYYY-MM-DD.")]
    models: Annotated[dict[str, ModelPrice], msgspec.Meta(description="Exact model id → its prices.")]
    currency: Annotated[str, msgspec.Meta(description="Always USD.")] = "USD"
    sources: Annotated[
        dict[str, str], msgspec.Meta(description="Model id → where its prices were read (or why a model is left out).")
    ] = {}


class Cost(msgspec.Struct, frozen=True, kw_only=True):
    """Dollars with their basis; ``usd`` is ``None`` (with ``reason``) when unknown."""

    usd: float | None
    lower_bound: bool
    basis: str
    reason: str | None = None


def _bad_model(raw: Any) -> str:
    """The first model id whose price row does not validate (msgspec names it ``[...]``)."""
    models = raw.get("models") if isinstance(raw, dict) else None
    for model, row in (models or {}).items():
        try:
            msgspec.convert(row, ModelPrice)
        except msgspec.ValidationError:
            return str(model)
    return "[...]"


def parse_prices(raw: Any, file: str) -> Prices:
    """A validated price table; errors name the file, the field and the fix."""
    try:
        prices = msgspec.convert(raw, Prices)
    except msgspec.ValidationError as exc:
        text = str(exc)
        field = text.rsplit("`$", 1)[-1].rstrip("`").lstrip(".") if "`$" in text else None
        if field is not None and field.startswith("models[...]"):
            field = f"models.{_bad_model(raw)}" + field[len("models[...]"):]
        raise InputError(
            f"invalid prices file: {text.split(' - at ')[0]}",
            file=file,
            field=field or None,
            fix='write {"as_of": "YYYY-MM-DD", "models": {"<model>": {"input_per_million": …, '
            '"cached_input_per_million": …, "output_per_million": …}}} (see docs/results.md#prices)',
        ) from None
    try:
        _dt.date.fromisoformat(prices.as_of)
    except ValueError:
        raise InputError(
            f"as_of must be a date, got {prices.as_of!r}",
            file=file,
            field="as_of",
            fix="write the date the prices were read, e.g. 2026-11-01",
        ) from None
    if prices.currency != "USD":
        raise InputError("only USD prices are supported", file=file, field="currency", fix='drop currency or write "USD"')
    return prices


def attempt_cost(tokens: Mapping[str, Any], model: str | None, prices: Prices, table: str = "prices.json") -> Cost:
    """One attempt's dollars from its results.json ``tokens`` at ``model``'s price row;
    ``table`` names the table in the basis (``prices.json`` or ``the bundled price table``)."""
    row = prices.models.get(model or "")
    basis = f"{table} as of {prices.as_of}, row {model}; uncached input, cached input and output tokens"
    if row is None:
        left_out = prices.sources.get(model or "")
        return Cost(usd=None, lower_bound=False, basis=basis,
                    reason=f"{table} has no row for model {model!r}" + (f" ({left_out})" if left_out else ""))
    status = tokens.get("status")
    if status not in ("exact", "lower_bound", "unvalidated"):
        return Cost(usd=None, lower_bound=False, basis=basis, reason=f"token usage unknown: {tokens.get('reason') or 'no reason recorded'}")
    inp, cached, out = tokens.get("input"), tokens.get("cached_input"), tokens.get("output")
    if inp is None or out is None:
        return Cost(usd=None, lower_bound=False, basis=basis, reason="input or output token count not reported")
    if cached is None:  # pricing all input as uncached would be a guess, not a measurement
        return Cost(usd=None, lower_bound=False, basis=basis, reason="cached input token count not reported")
    usd = ((inp - cached) * row.input_per_million + cached * row.cached_input_per_million
           + out * row.output_per_million) / 1_000_000
    return Cost(usd=usd, lower_bound=status == "lower_bound", basis=basis + (" (a lower bound)" if status == "lower_bound" else ""))


def total_cost(costs: Iterable[Cost], what: str) -> Cost:
    """The sum of ``costs``: unknown when any is unknown (naming how many), a lower bound when any is."""
    items = list(costs)
    unknown = [c for c in items if c.usd is None]
    basis = items[0].basis.split(";")[0] if items else "no attempts"
    if not items:
        return Cost(usd=None, lower_bound=False, basis=basis, reason=f"no attempts in {what}")
    if unknown:
        return Cost(usd=None, lower_bound=False, basis=basis,
                    reason=f"{len(unknown)} of {len(items)} attempts in {what} have unknown dollars ({unknown[0].reason})")
    lower = any(c.lower_bound for c in items)
    usd = math.fsum(c.usd for c in items if c.usd is not None)
    return Cost(usd=usd, lower_bound=lower, basis=basis + f"; sum over {len(items)} attempts" + (", a lower bound" if lower else ""))
