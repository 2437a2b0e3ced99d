"""The rate gate: a fixed threshold on a share of attempts (``activation:<component>``,
``activation_any``, ``check:<name>``), decided by the exact one-sided binomial test. Pure.

A rate gate asks "did the candidate use its skill (pass this check) in at least
``threshold`` of its attempts?" with ``direction: higher`` (at most, with ``lower``). Each
attempt is 1 (used / passed), 0 (not) or unknown. With ``k`` ones among ``n`` known
attempts the gate passes when the exact binomial tail at the threshold,
``P(X >= k | n, threshold)`` (``P(X <= k …)`` for lower), is at most ``alpha = (1 − level) /
2`` — equivalently, when the one-sided Clopper–Pearson bound at that alpha lies at or beyond the
threshold; the bound is shown beside the observed rate. It fails otherwise (the data do not
show the rate is beyond the threshold).

Calibration: for any true rate at or short of the threshold the false-pass probability is at
most alpha. The gate is about the compared task set: given the tasks, attempts are
independent (a fresh sandbox each) with per-task rates that may differ, so the count is
Poisson-binomial, whose tail beyond its mean is no heavier than the binomial's with the same
mean (Hoeffding 1956, theorem 4), and the exact binomial tail stays conservative.
``bench/bench_rate_gate.py`` checks it by simulation (equal and heterogeneous task rates).

Unknown attempts are never zero: the gate is decided with every unknown counted against the
candidate and then for it; when the two disagree the gate is undetermined, naming how many
attempts were unknown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ._decide import alpha_of
from ._format import format_p
from ._gate_eval import FAILED, PASSED, UNDETERMINED, GateResult, _result
from ._gates import Gate
from ._records import Package, metric_value, missing_reason


def binomial_tail(k: int, n: int, p: float, upper: bool = True) -> float:
    """``P(X >= k)`` (``upper``) or ``P(X <= k)`` for ``X ~ Binomial(n, p)``, exact by summation."""
    if not 0 <= k <= n:
        return 0.0 if (upper and k > n) or (not upper and k < 0) else 1.0
    if p <= 0.0:
        return 1.0 if (k == 0 if upper else True) else 0.0
    if p >= 1.0:
        return 1.0 if (True if upper else k == n) else 0.0
    ks = range(k, n + 1) if upper else range(0, k + 1)
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq for i in ks]
    top = max(terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in terms))


def clopper_pearson(k: int, n: int, alpha: float, lower: bool = True) -> float:
    """The one-sided Clopper–Pearson bound at ``alpha``: the smallest ``p`` with
    ``P(X >= k | p) > alpha`` (lower) or the largest with ``P(X <= k | p) > alpha`` (upper)."""
    if lower and k == 0:
        return 0.0
    if not lower and k == n:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):  # bisection to ~1e-18
        mid = (lo + hi) / 2
        tail = binomial_tail(k, n, mid, upper=lower)
        if lower:
            lo, hi = (lo, mid) if tail > alpha else (mid, hi)
        else:
            lo, hi = (mid, hi) if tail > alpha else (lo, mid)
    return lo if not lower else hi


def rate_decision(k: int, n: int, threshold: float, direction: str, level: float) -> tuple[bool, float]:
    """(passes, the exact one-sided p at the threshold) for ``k`` ones of ``n`` attempts."""
    p = binomial_tail(k, n, threshold, upper=direction == "higher")
    return p <= alpha_of(level), p


def _ones(values: Sequence[float | None]) -> tuple[int, int, int, list[float]]:
    known = [v for v in values if v is not None]
    odd = sorted({v for v in known if v not in (0.0, 1.0)})
    return sum(1 for v in known if v == 1.0), len(known), len(values) - len(known), odd


def rate_gate(g: Gate, cand: Package, comp: Package, tasks: Sequence[str], level: float) -> GateResult:
    """A ``rate`` gate for ``cand`` (the comparator's rate is shown for context only)."""
    assert g.rate is not None and g.threshold is not None
    metric = [g.rate]
    sign = ">=" if g.direction == "higher" else "<="
    pct = f"{level * 100:g}%"
    limit = f"rate {sign} {g.threshold:g} ({pct} one-sided exact binomial)"
    attempts = [a for t in tasks for a in cand.on(t)]
    values = [metric_value(a, metric) for a in attempts]
    ones, known, unknown, odd = _ones(values)
    cvals = [metric_value(a, metric) for t in tasks for a in comp.on(t)]
    c_ones, c_known, _, _ = _ones(cvals)
    comp_rate = c_ones / c_known if c_known else None
    common = dict(limit=limit, tasks_compared=len({a.task for a in attempts}), comparator_value=comp_rate)
    if not attempts:
        return _result(g, cand, comp, status=UNDETERMINED, detail="the candidate has no attempts in the split", **common)
    if odd:
        return _result(g, cand, comp, status=UNDETERMINED,
                       detail=f"{g.rate} is not a 0/1 value per attempt (saw {odd[0]:g}): a rate gate reads shares only",
                       **common)
    missing = sorted({missing_reason(a, metric) for a, v in zip(attempts, values, strict=True) if v is None})
    if not known:
        return _result(g, cand, comp, status=UNDETERMINED, missing_values=missing,
                       detail=f"no attempt of the candidate has a known {g.rate}", **common)
    n = known + unknown
    worst = rate_decision(ones if g.direction == "higher" else ones + unknown, n, g.threshold, g.direction, level)
    best = rate_decision(ones + unknown if g.direction == "higher" else ones, n, g.threshold, g.direction, level)
    rate = ones / known
    shown = f"{ones} of {known} known attempt(s) (rate {rate:.3g})"
    if worst[0] != best[0]:
        return _result(g, cand, comp, status=UNDETERMINED, candidate_value=rate,
                       detail=f"{shown}; {unknown} attempt(s) unknown decide it either way", missing_values=missing,
                       **common)
    ok, p = worst
    side = "lower" if g.direction == "higher" else "upper"
    bound = clopper_pearson(ones if g.direction == "higher" else ones + unknown, n, alpha_of(level),
                            lower=g.direction == "higher")
    return _result(
        g, cand, comp, status=PASSED if ok else FAILED, candidate_value=rate,
        detail=(f"{shown}" + (f", {unknown} unknown counted against it" if unknown else "")
                + f"; one-sided {pct} Clopper–Pearson {side} bound {bound:.3g}; exact binomial p = {format_p(p)} at "
                f"{g.threshold:g}, passes when p <= {format_p(alpha_of(level))}"),
        missing_values=missing, **common,
    )
