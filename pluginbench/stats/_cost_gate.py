"""Deciding a cost gate (``cost: cost_per_pass|cost_ratio``) for one candidate over one split.

The definitions are the ones the report's tables and the verdict use (:mod:`._cost`):

* ``cost_ratio`` = mean dollars per attempt of the candidate / of the comparator. The gate
  decides on the one-sided sign-flip test at the limit, like every bound gate: it passes when
  the test on the per-task differences ``candidate dollars − factor × comparator dollars``
  (each side's mean per attempt on that task) rejects "the candidate costs at least
  ``factor`` times as much" at the page's level, i.e. when the upper end of the inverted
  interval of the ratio lies at or below ``factor`` (default 1); otherwise it fails. With
  fewer tasks than the level needs it is undetermined. A point ratio below the factor is not
  enough: at factor 1, identical arms would pass half the time (A/A, ``bench/bench_aa_gates.py``);
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
from typing import Any

from ._bootstrap import LEVEL
from ._cost import COST_PER_PASS_DEFINITION, COST_RATIO_DEFINITION, cost_ratio
from ._decide import alpha_of, ratio_of_means_interval
from ._format import format_dollars, format_p, format_ratio
from ._gate_eval import FAILED, PASSED, UNDETERMINED, GateResult, _result
from ._gates import Gate
from ._permutation import sign_flip_test
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


def cost_gate(g: Gate, cand: Package, comp: Package, tasks: Sequence[str], overlap: bool,
              level: float = LEVEL) -> GateResult:
    """A ``cost`` gate of ``cand`` against ``comp`` over ``tasks`` at confidence ``level``
    (module docstring)."""
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
        return _ratio_gate(g, cand, comp, both, factor, level, prices, common)

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


def _mean_dollars(pkg: Package, task: str) -> float:
    rows = pkg.on(task)
    return math.fsum(a.metrics[DOLLARS] or 0.0 for a in rows) / len(rows)


def _ratio_gate(g: Gate, cand: Package, comp: Package, both: Sequence[str], factor: float, level: float,
                prices: str, common: dict[str, Any]) -> GateResult:
    """``cost_ratio``: the one-sided sign-flip test of the per-task dollars at the limit."""
    rows_c = [a for t in both for a in cand.on(t)]
    rows_p = [a for t in both for a in comp.on(t)]
    usd_c = math.fsum(a.metrics[DOLLARS] or 0.0 for a in rows_c)
    usd_p = math.fsum(a.metrics[DOLLARS] or 0.0 for a in rows_p)
    ratio = cost_ratio(usd_c, len(rows_c), usd_p, len(rows_p))
    if ratio is None:
        return _result(g, cand, comp, status=UNDETERMINED, comparator_value=usd_p / len(rows_p),
                       detail=f"{comp.name} spent $0 per attempt: no ratio to take ({prices})", **common)
    per_c = [_mean_dollars(cand, t) for t in both]
    per_p = [_mean_dollars(comp, t) for t in both]
    pct = f"{level * 100:g}%"
    shown = (f"{COST_RATIO_DEFINITION}: {format_dollars(usd_c / len(rows_c))} / "
             f"{format_dollars(usd_p / len(rows_p))} = {format_ratio(ratio)} over {len(both)} task(s)")
    free = [t for t, v in zip(both, per_p, strict=True) if v <= 0]
    if free:
        return _result(g, cand, comp, status=UNDETERMINED, candidate_value=ratio,
                       detail=f"{shown}: {comp.name} spent $0 on {', '.join(free)}, so the per-task ratio "
                              f"test has nothing to divide ({prices})", **common)
    iv = ratio_of_means_interval(per_c, per_p, level)
    if iv.status != "ok":
        return _result(g, cand, comp, status=UNDETERMINED, candidate_value=ratio,
                       detail=(f"{shown}: too few tasks for a {pct} bound: {iv.tasks} task pair(s), "
                               f"it needs at least {iv.min_tasks} ({prices})"), **common)
    p = sign_flip_test([c - factor * q for c, q in zip(per_c, per_p, strict=True)], alternative="less").p
    alpha = alpha_of(level)
    high = "unbounded" if iv.high is None else format_ratio(iv.high)
    low = "—" if iv.low is None else format_ratio(iv.low)
    return _result(
        g, cand, comp, status=PASSED if p <= alpha else FAILED, candidate_value=ratio,
        detail=(f"{shown}, {pct} interval [{low}, {high}]; one-sided sign-flip test at {format_ratio(factor)}: "
                f"p = {format_p(p)} ({'exact' if iv.exact else 'Monte Carlo'}), passes when p <= {format_p(alpha)} "
                f"({prices})"),
        **common,
    )
