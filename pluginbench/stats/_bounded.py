"""A test and interval for the mean of bounded per-task values that needs no symmetry. Pure.

Why: the sign-flip test (:mod:`._permutation`) is exact when each task's value is symmetric
about the hypothesised centre — true at 0 when the two arms are exchangeable (A/A), false
at any other centre for pass-rate differences, which are bounded, discrete and mostly tied
at 0. Shifted by a margin of −5 pp every tied task becomes +5 pp of "evidence", and a
treatment truly 5 pp worse passed the non-inferiority gate in up to 62% of simulated runs
at 6 tasks (nominal 5%; ``bench/bench_aa_stats.py``). A claim about the mean at a limit
other than the exchangeable 0 (a non-inferiority margin, "no difference larger than X") is
decided here instead.

Method: the one-sided betting test of Waudby-Smith & Ramdas (2023, "Estimating means of
bounded random variables by betting", JRSS-B), fixed-size form. Values in ``[low, high]``
are mapped to ``y`` in [0, 1]; to test "the mean is at most ``m``" a gambler starts with
capital 1 and, task by task in the given order, multiplies it by ``1 + λ_t (y_t − m)``
(``1 − λ_t (y_t − m)`` for "at least"). The bet ``λ_t`` is predictable (from the tasks
before ``t``): the plug-in ``√(2 log(1/α) / (n σ̂²_{t−1}))`` for ``n`` tasks, with the
regularised running variance of :mod:`._betting` (prior 1/4, one pseudo-observation),
truncated at :data:`TRUNCATION` ``/ m`` (``/ (1 − m)``) so the capital stays positive.
Under the null, with tasks independent draws sharing the mean, the capital is a nonnegative
supermartingale, so by Ville's inequality its running maximum reaches ``1/α`` with
probability at most α whatever the distribution of the values in the range: ``p = min(1,
1 / max_t capital_t)`` is a valid p-value. The interval is the test inverted (bisection;
the capital is monotone in ``m``). It is wider than the sign-flip interval: that is the
price of not assuming symmetry, and at 6 to 30 tasks it rarely supports a non-inferiority
or equivalence claim within 5–10 pp — honestly so, since a few tasks where the treatment
always fails cannot be ruled out by a handful of ties.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ._permutation import Alternative

#: The bet is truncated at this share of the largest bet that keeps the capital positive.
TRUNCATION = 0.75
METHOD = "betting test for a bounded mean (Waudby-Smith & Ramdas 2023), no symmetry assumed"


def _unit(values: Sequence[float], low: float, high: float) -> list[float]:
    if not high > low:
        raise ValueError(f"need low < high, got {low}, {high}")
    out = []
    for v in values:
        if not (math.isfinite(v) and low - 1e-12 <= v <= high + 1e-12):
            raise ValueError(f"values must lie in [{low:g}, {high:g}], got {v!r}")
        out.append(min(1.0, max(0.0, (v - low) / (high - low))))
    return out


def _max_capital(ys: Sequence[float], m: float, up: bool, alpha: float) -> float:
    """The running maximum of the gambler's capital betting that the mean is above ``m``
    (``up``) or below it, over ``ys`` in [0, 1] (module docstring)."""
    n = len(ys)
    scale = 2.0 * math.log(1.0 / alpha) / n
    room = m if up else 1.0 - m  # the largest loss per unit bet
    cap = math.inf if room <= 0 else TRUNCATION / room
    capital = best = 1.0
    s_x = s_sq = 0.0
    sigma2 = 0.25
    for t, y in enumerate(ys, start=1):
        lam = min(math.sqrt(scale / sigma2), cap)
        capital *= 1.0 + lam * ((y - m) if up else (m - y))
        best = max(best, capital)
        s_x += y
        mu = min((0.5 + s_x) / (t + 1), 1.0)
        s_sq += (y - mu) ** 2
        sigma2 = (0.25 + s_sq) / (t + 1)
    return best


def bounded_p(values: Sequence[float], centre: float, alternative: Alternative, alpha: float,
              low: float = -1.0, high: float = 1.0) -> float:
    """The p-value of "the mean of ``values`` (each in [``low``, ``high``]) is ``centre`` or on
    the other side" against ``greater`` (the mean is above ``centre``) or ``less``; the bets are
    sized for one-sided ``alpha``. No values give 1."""
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be greater or less, got {alternative!r}")
    ys = _unit(values, low, high)
    if not ys:
        return 1.0
    m = (centre - low) / (high - low)
    if (alternative == "greater" and m >= 1.0) or (alternative == "less" and m <= 0.0):
        return 1.0  # nothing in the range lies beyond the centre
    m = min(1.0, max(0.0, m))
    return min(1.0, 1.0 / _max_capital(ys, m, alternative == "greater", alpha))


def bounded_interval(values: Sequence[float], alpha: float, low: float = -1.0,
                     high: float = 1.0) -> tuple[float, float] | None:
    """``(lower, upper)``: each end the one-sided ``1 − alpha`` bound of the mean from
    :func:`bounded_p` inverted (to 1e-9 of the range); ``None`` without values. An end the data
    cannot move stays at the range's edge."""
    ys = _unit(values, low, high)
    if not ys:
        return None

    def edge(up: bool) -> float:
        # up: the largest m the "greater" test rejects (it rejects every m below it)
        def rejects(m: float) -> bool:
            return 1.0 / _max_capital(ys, m, up, alpha) <= alpha

        a, b = (0.0, 1.0) if up else (1.0, 0.0)  # a: the side that may reject, b: never
        if not rejects(a):
            return a
        for _ in range(40):
            mid = (a + b) / 2
            if rejects(mid):
                a = mid
            else:
                b = mid
        return a

    lo_u, hi_u = edge(True), edge(False)
    width = high - low
    return low + width * lo_u, low + width * max(lo_u, hi_u)
