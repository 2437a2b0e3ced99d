"""Deciding a cost gate (``cost: cost_per_pass|cost_ratio``) for one candidate over one split.

The definitions are the ones the report's tables and the verdict use (:mod:`._cost`):

* ``cost_ratio`` = mean dollars per attempt of the candidate / of the comparator; the gate
  passes when it is <= ``factor`` (default 1);
* ``cost_per_pass`` = total dollars / passing attempts; the gate passes when the
  candidate's is <= ``factor`` × the comparator's. Attempts of unknown correctness are
  counted both ways (as passes and as fails); when the two readings disagree the gate is
  undetermined, as a count gate is. A side with dollars spent and no pass costs without
  bound per pass.

Dollars are each attempt's :data:`DOLLARS` metric (results.json ``costs.attempts``). A
gate is undetermined, never passed, when any counted attempt has unknown dollars (no price
table, a model without a row, unknown or lower-bound tokens), when the two packages were
priced by different tables (a ratio of two price lists measures the prices, not the
package), or when a task has attempts from only one side. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ._cost import COST_PER_PASS_DEFINITION, COST_RATIO_DEFINITION, cost_ratio
from ._format import format_dollars, format_ratio
from ._gate_eval import FAILED, PASSED, UNDETERMINED, GateResult, _result
from ._gates import Gate
from ._records import DOLLARS, PASS, UNKNOWN, AttemptRecord, Package, correctness


def _limit(g: Gate, factor: float) -> str:
    if g.cost == "cost_ratio":
        return f"ratio <= {factor:g}"
    return f"<= {factor:g} × comparator"


def _unknown_dollars(pkg: Package, tasks: Sequence[str]) -> str | None:
    """Why some of ``pkg``'s attempts on ``tasks`` have no dollars, or ``None`` when all have."""
    rows = [a for t in tasks for a in pkg.on(t)]
    missing = [a for a in rows if a.metrics.get(DOLLARS) is None or not math.isfinite(a.metrics[DOLLARS] or 0.0)]
    if not missing:
        return None
    why = missing[0].reasons.get(DOLLARS) or "no dollars recorded"
    return f"{pkg.name}: {len(missing)} of {len(rows)} attempt(s) have unknown dollars ({why})"


def _per_pass(usd: float, passes: int) -> float:
    """Dollars per pass, infinite when dollars were spent and nothing passed (NaN for 0 / 0)."""
    if passes > 0:
        return usd / passes
    return math.inf if usd > 0 else math.nan


def cost_gate(g: Gate, cand: Package, comp: Package, tasks: Sequence[str], overlap: bool) -> GateResult:
    """A ``cost`` gate of ``cand`` against ``comp`` over ``tasks`` (module docstring)."""
    factor = 1.0 if g.factor is None else g.factor
    limit = _limit(g, factor)
    both = [t for t in tasks if cand.on(t) and comp.on(t)]
    one_sided = [t for t in tasks if bool(cand.on(t)) != bool(comp.on(t))]
    reasons = []
    if one_sided:
        reasons.append("attempts from only one of the two packages on: " + ", ".join(one_sided))
    if not both:
        reasons.append("no task with attempts from both packages to compare")
    for pkg in (cand, comp):
        why = _unknown_dollars(pkg, both)
        if why:
            reasons.append(why)
    if not reasons and (cand.prices is None or comp.prices is None or cand.prices != comp.prices
                        or cand.prices.startswith("mixed:")):
        reasons.append(f"the two packages were priced by different tables ({cand.name}: {cand.prices}; "
                       f"{comp.name}: {comp.prices}): rebuild both reports with the same prices.json")
    common = dict(limit=limit, tasks_compared=len(both))
    if reasons:
        return _result(g, cand, comp, status=UNDETERMINED, detail="; ".join(reasons), **common)
    rows_c = [a for t in both for a in cand.on(t)]
    rows_p = [a for t in both for a in comp.on(t)]
    usd_c = math.fsum(a.metrics[DOLLARS] or 0.0 for a in rows_c)
    usd_p = math.fsum(a.metrics[DOLLARS] or 0.0 for a in rows_p)
    prices = f"prices: {cand.prices}"
    if g.cost == "cost_ratio":
        ratio = cost_ratio(usd_c, len(rows_c), usd_p, len(rows_p))
        if ratio is None:
            return _result(g, cand, comp, status=UNDETERMINED, comparator_value=usd_p / len(rows_p),
                           detail=f"{comp.name} spent $0 per attempt: no ratio to take ({prices})", **common)
        return _result(
            g, cand, comp, status=PASSED if ratio <= factor else FAILED, candidate_value=ratio,
            detail=(f"{COST_RATIO_DEFINITION}: {format_dollars(usd_c / len(rows_c))} / "
                    f"{format_dollars(usd_p / len(rows_p))} = {format_ratio(ratio)} over {len(both)} task(s) ({prices})"),
            **common,
        )

    def passes(rows: Sequence[AttemptRecord]) -> tuple[int, int]:
        classes = [correctness(a.outcome, overlap) for a in rows]
        return sum(1 for c in classes if c == PASS), sum(1 for c in classes if c == UNKNOWN)

    (pc, uc), (pp, up) = passes(rows_c), passes(rows_p)
    readings = set()
    for extra_c in (0, uc):
        for extra_p in (0, up):
            a, b = _per_pass(usd_c, pc + extra_c), _per_pass(usd_p, pp + extra_p)
            readings.add(None if math.isnan(a) or math.isnan(b) or (math.isinf(a) and math.isinf(b))
                         else a <= factor * b)
    cv, pv = _per_pass(usd_c, pc), _per_pass(usd_p, pp)
    shown = (f"{COST_PER_PASS_DEFINITION}: {cand.name} {_money(cv)} ({format_dollars(usd_c)} / {pc}), "
             f"{comp.name} {_money(pv)} ({format_dollars(usd_p)} / {pp}) over {len(both)} task(s)")
    value = dict(candidate_value=cv if math.isfinite(cv) else None, comparator_value=pv if math.isfinite(pv) else None)
    if None in readings:
        return _result(g, cand, comp, status=UNDETERMINED, **value, **common,
                       detail=f"{shown}: no pass on either side, so no cost per pass to compare ({prices})")
    if len(readings) > 1:
        return _result(g, cand, comp, status=UNDETERMINED, **value, **common,
                       detail=(f"{shown}: unknown correctness decides the gate ({cand.name} {uc}, {comp.name} {up} "
                               f"unknown; counted as passes and as fails they disagree) ({prices})"))
    ok = readings.pop()
    note = f" (unknowns: {cand.name} {uc}, {comp.name} {up}; every way of counting them agrees)" if uc or up else ""
    return _result(g, cand, comp, status=PASSED if ok else FAILED, **value, **common,
                   detail=f"{shown}{note} ({prices})")


def _money(v: float) -> str:
    return "unbounded (no pass)" if math.isinf(v) else format_dollars(v)
