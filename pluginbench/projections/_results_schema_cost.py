"""The typed schema of results.json ``costs`` (:mod:`._report_cost`): the price table used
and its date, and the dollars of every attempt, task × arm, arm and generating session."""

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

Num = float | int | None


class _Strict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class CostValue(_Strict, frozen=True):
    usd: Annotated[Num, Meta(description="Dollars, or null when unknown.")]
    lower_bound: Annotated[bool, Meta(description="True when some token count behind it is only a lower bound.")]
    basis: Annotated[str, Meta(description="Which price row and date, which token counts.")]
    reason: Annotated[str | None, Meta(description="Why the dollars are unknown.")]


class PriceRow(_Strict, frozen=True):
    input_per_million: Annotated[float, Meta(description="Dollars per million uncached input tokens.")]
    cached_input_per_million: Annotated[float, Meta(description="Dollars per million cached input tokens.")]
    output_per_million: Annotated[float, Meta(description="Dollars per million output tokens.")]
    cache_write_per_million: Annotated[float | None, Meta(description="Dollars per million cache-write input tokens as listed, or null; for reference only (token counts do not separate cache writes, so they are priced as uncached input).")]


class PriceTable(_Strict, frozen=True):
    as_of: Annotated[str, Meta(description="The date the prices were read.")]
    currency: Annotated[str, Meta(description="USD.")]
    models: Annotated[dict[str, PriceRow], Meta(description="Model → its prices.")]
    sources: Annotated[dict[str, str], Meta(description="Model → where its prices were read, or why a model is left out (its dollars then unknown).")]


class PriceTableUsed(_Strict, frozen=True):
    source: Annotated[Literal["run", "bundled", "none"], Meta(description="run: the run's own prices.json; bundled: the package's dated table (the run has none); none: the run's prices.json is invalid, so no dollars.")]
    file: Annotated[str, Meta(description="The table's file: prices.json in the run folder, or pluginbench/stats/prices.json.")]
    as_of: Annotated[str | None, Meta(description="The table's date, shown beside every dollar figure; null without a table.")]
    age_warning: Annotated[str | None, Meta(description="Set when the table is more than 90 days older than the run's run.created date (never the wall clock, so rebuilds are byte-identical).")]


class Costs(_Strict, frozen=True):
    prices: Annotated[PriceTable | None, Meta(description="The price table used: the run's prices.json, else the bundled table; null when the run's prices.json is invalid (then every dollar figure is absent).")]
    reason: Annotated[str | None, Meta(description="Why there are no dollars (an invalid prices.json).")]
    table: Annotated[PriceTableUsed, Meta(description="Which price table priced this run, and its date.")]
    attempts: Annotated[dict[str, CostValue], Meta(description="Attempt id → its dollars.")]
    per_task: Annotated[dict[str, dict[str, CostValue]], Meta(description="Task → arm → dollars summed over its attempts.")]
    arms: Annotated[dict[str, CostValue], Meta(description="Arm → dollars summed over its attempts (and, for a generated-guidance arm, its generating sessions).")]
    generation: Annotated[dict[str, CostValue] | None, Meta(description="Generated-guidance arm → dollars of its generating sessions, each at its own model's row (already counted in `per_task` and `arms`); absent when no arm generates.")] = None
    beside_coding: Annotated[dict[str, CostValue] | None, Meta(description="`review_calls` and `check_votes` (the llm checks' grader calls) → dollars of the run's model calls besides coding, each at its model's row (the reviewer's); counted in `cost_ceiling`, not in `per_task` or `arms`; a call a kill cut off has unknown dollars; absent when the run made none.")] = None
