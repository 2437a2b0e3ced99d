"""The cost ceiling: how many of the attempts ``schedule`` wants to start may start.

A pure function of the folded state and the run's price table (no I/O, no clock), so the
Supervisor only records the stop it returns. What counts:

* **Spent**: every attempt this run coded and whose agent exited (live or discarded),
  priced with :func:`pluginbench.stats._cost.attempt_cost`. Reused vanilla attempts were
  paid by the run that coded them and count nothing here. Every generating session of a
  generated-guidance arm counts too, priced at its own model's row (one killed mid-generation
  has unknown dollars). So does every ended review call (each revision's reviewer model) and
  every llm-check vote (the run's reviewer model), including calls a kill cut off (unknown
  dollars), summed per model by the fold (``RunState.review_tally``, ``check_votes.tally``),
  so the check costs O(models) for them. A call still in flight counts once it ends. A call
  that used no tokens (the simulated reviewer) costs nothing without a price row; any other
  needs its model's row, else its dollars are unknown. An attempt whose llm-check tokens were
  logged before ``check_vote`` events (a total without the split) has unknown grader dollars.
* **Worst case of one attempt**: ``runner.max_tokens_per_attempt`` tokens at the dearest
  price of the model's row. An attempt whose dollars are unknown, and an attempt still
  running, are counted at that worst case.
* Without ``max_tokens_per_attempt`` the worst case is unknown: the ceiling is checked
  on the spend so far only (running attempts may take it over by what they spend), and an
  attempt with unknown dollars stops the run, because the spend can no longer be checked.

An attempt may start when spent + worst cases already committed + its own worst case is
within the ceiling; otherwise the run stops (``run.stopping``, not a failure) and a resume
with ``--cost-ceiling`` continues it.
"""

import functools
from typing import NamedTuple

from ..events import Usage
from ..projections import (
    RunState,
    generation_sessions,
    legacy_grader_attempts,
    tokens_dict,
)
from ..stats import ModelPrice, Prices, attempt_cost

RESUME_FIX = "resume with a higher ceiling: pluginbench run <run dir> --cost-ceiling <dollars>"


class CeilingCheck(NamedTuple):
    """``allowed`` of the wanted starts may go; ``reason`` is the stop when fewer may."""

    allowed: int
    reason: str | None = None


def worst_case_per_attempt(row: ModelPrice, max_tokens: int | None) -> float | None:
    """Dollars of one attempt that uses ``max_tokens`` tokens, all at the row's dearest price."""
    if max_tokens is None:
        return None
    dearest = max(row.input_per_million, row.cached_input_per_million, row.output_per_million)
    return max_tokens * dearest / 1_000_000


@functools.lru_cache(maxsize=1 << 16)
def _dollars(usage: Usage | None, model: str, row: ModelPrice) -> tuple[float | None, str | None]:
    """One attempt's dollars (the report's arithmetic), memoized: the check runs before
    every start and would otherwise price every finished attempt again each time."""
    cost = attempt_cost(tokens_dict(usage), model, Prices(as_of="", models={model: row}))
    return cost.usd, cost.reason


def _sums_dollars(model: str, inp: int, cached: int, out: int, lower: bool,
                  prices: Prices) -> tuple[float | None, str | None]:
    """Dollars of review calls or llm-check votes summed at one model's row (the report's arithmetic)."""
    cost = attempt_cost({"status": "lower_bound" if lower else "exact", "input": inp, "cached_input": cached,
                         "output": out}, model, prices)
    return cost.usd, cost.reason


def within_ceiling(state: RunState, prices: Prices | None, prices_reason: str | None, wanted: int) -> CeilingCheck:
    """How many of ``wanted`` starts keep the run within ``state.cost_ceiling``."""
    ceiling = state.cost_ceiling
    if ceiling is None or wanted <= 0 or state.created is None:
        return CeilingCheck(wanted)
    model = state.created.model
    if prices is None:
        return CeilingCheck(0, f"cost_ceiling ${ceiling:g} cannot be checked: {prices_reason or 'no prices.json'}; "
                               f"put a valid prices.json in the run folder, then {RESUME_FIX}")
    row = prices.models.get(model)
    if row is None:
        return CeilingCheck(0, f"cost_ceiling ${ceiling:g} cannot be checked: prices.json has no row for model "
                               f"{model!r}; add it to the run's prices.json, then resume")
    worst = worst_case_per_attempt(row, state.created.max_tokens_per_attempt)
    spent = 0.0
    unknown: list[str] = []
    live = [state.attempts[aid] for aid in state.live.values()]  # order is irrelevant to a sum; no sort
    paid = [(a.attempt_id, a.usage) for a in live if not a.reused and a.exited]
    paid += [(d.attempt_id, d.usage) for d in state.discarded]
    for attempt_id, usage in paid:
        usd, reason = _dollars(usage, model, row)
        if usd is None:
            unknown.append(f"{attempt_id} ({reason})")
        else:
            spent += usd
    for _arm, _task, gid, gen_model, usage in generation_sessions(state.generations):
        gen_row = prices.models.get(gen_model or model)
        if gen_row is None:
            unknown.append(f"{gid} (prices.json has no row for model {gen_model!r})")
            continue
        usd, reason = _dollars(usage, gen_model or model, gen_row)
        if usd is None:
            unknown.append(f"{gid} ({reason})")
        else:
            spent += usd
    reviewer_model = state.reviewer.model if state.reviewer is not None else None
    for tally in (state.review_tally, state.check_votes.tally):  # O(models), not O(calls): folded sums
        unknown += [f"{label} ({why})" for label, why in tally.unpriced]
        for call_model, (inp, cached, out, lower) in tally.priced.items():
            usd, reason = _sums_dollars(call_model or reviewer_model or model, inp, cached, out, bool(lower), prices)
            if usd is None:
                unknown.append(f"calls at model {call_model or reviewer_model!r} ({reason})")
            else:
                spent += usd
    unknown += [f"{aid}'s llm-check grader calls (logged before check_vote events: a token total without the "
                "input/output split, which cannot be priced)" for aid in legacy_grader_attempts(state)]
    running = sum(1 for a in live if a.state == "running" and not a.reused and not a.exited)
    if worst is None:
        if unknown:
            return CeilingCheck(0, f"cost_ceiling ${ceiling:g} cannot be checked: {len(unknown)} attempt(s) or "
                                   f"call(s) have unknown dollars, e.g. {unknown[0]}, and runner.max_tokens_per_attempt is not set")
        if spent >= ceiling:
            return CeilingCheck(0, f"cost_ceiling ${ceiling:g} reached: ${spent:.4f} spent so far; {RESUME_FIX}")
        return CeilingCheck(wanted)
    committed = spent + (len(unknown) + running) * worst
    allowed = 0
    while allowed < wanted and committed + (allowed + 1) * worst <= ceiling * (1 + 1e-12):
        allowed += 1
    if allowed == wanted:
        return CeilingCheck(wanted)
    return CeilingCheck(allowed, (
        f"cost_ceiling ${ceiling:g}: the next attempt could cross it (${spent:.4f} spent so far"
        + (f", {len(unknown)} attempt(s) or call(s) with unknown dollars counted at the worst case" if unknown else "")
        + f", {running + allowed} running at up to ${worst:.4f} each, the next up to ${worst:.4f}); {RESUME_FIX}"
    ))
