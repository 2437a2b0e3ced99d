"""Power before spending: the smallest effect a planned run can detect, and the tasks an effect needs.

Contract: the decision is the one-sided sign-flip test at ``alpha`` on per-task pass-rate
differences. Given the values' sizes the test compares ``Σx`` with the spread of
``Σ±|x|``, whose variance is ``Σx²`` — about ``n(σ² + δ²)`` when the true mean difference
is ``δ``, not ``nσ²``: the test's critical value grows with the effect itself. So its power
is taken as ``power = Φ(δ·√n / σ − t₁₋α,ₙ₋₁ · √(1 + δ²/σ²))``, where ``σ`` is the
standard deviation of one task's difference and ``t`` Student's quantile with ``n − 1``
degrees of freedom (the small-sample tail of a studentised mean; Hill's 1970 expansion).
The plain normal formula ``Φ(δ·√n / σ − z₁₋α)`` it replaces promised 80% where the test
had 40% at 6 tasks, 62% at 10, 71% at 20 and 69% at 30 (3 repeats, Beta(2, 2); simulated
through the test, ``bench/bench_aa_stats.py --only power``); this one is within a few
points of the simulated power at 6–30 tasks and tends to the normal formula as ``n`` grows.
The stated assumption for ``σ`` when no data is at hand: every task has its own
pass probability ``p ~ Beta(a, b)`` (default Beta(2, 2): tasks spread over the whole range),
the same for both arms, and each arm runs ``repeats`` attempts, so
``σ² = 2·E[p(1 − p)] / repeats`` with ``E[p(1 − p)] = ab / ((a + b)(a + b + 1))``.
``bench/bench_aa_gates.py`` and ``bench/bench_aa_stats.py`` check these numbers against
simulated runs.
"""

import math
from collections.abc import Mapping
from statistics import NormalDist
from typing import Any

import msgspec

from ._permutation import min_tasks

POWER = 0.80
BETA_A = 2.0
BETA_B = 2.0
EFFECTS = (0.10, 0.05)


class PowerPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What a run of ``tasks × repeats`` can detect, and what the standard effects need."""

    tasks: int
    repeats: int
    alpha: float
    power: float
    sd: float
    assumption: str
    mde: float | None  # smallest true pass-rate difference detected with ``power``; None: too few tasks
    tasks_needed: dict[str, int]  # "+10 pp" → tasks


def assumed_sd(repeats: int, a: float = BETA_A, b: float = BETA_B) -> float:
    """σ of one task's pass-rate difference under the Beta(a, b) assumption (module docstring)."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    e_var = a * b / ((a + b) * (a + b + 1))
    return math.sqrt(2.0 * e_var / repeats)


def _t_quantile(z: float, df: int) -> float:
    """Student's t quantile with ``df`` degrees of freedom at the normal quantile ``z`` (Hill 1970,
    the Cornish–Fisher expansion in 1/df to its fourth term: within 0.001 of the exact value
    from 4 degrees of freedom at z 1.645 and 1.96)."""
    v = float(df)
    z3, z5, z7, z9 = z ** 3, z ** 5, z ** 7, z ** 9
    return (z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v ** 2)
            + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v ** 3)
            + (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * v ** 4))


def power_at(effect: float, tasks: int, sd: float, alpha: float) -> float:
    """The approximate power of the test for a true difference ``effect`` over ``tasks`` tasks
    (module docstring)."""
    if tasks < min_tasks(alpha) or sd <= 0:
        return 0.0
    nd = NormalDist()
    t = _t_quantile(nd.inv_cdf(1.0 - alpha), tasks - 1)
    return nd.cdf(effect * math.sqrt(tasks) / sd - t * math.sqrt(1.0 + (effect / sd) ** 2))


def mde(tasks: int, sd: float, alpha: float, power: float = POWER, largest: float = 1.0) -> float | None:
    """The smallest effect detected with ``power`` over ``tasks`` tasks; ``None`` below the test's
    minimum, or when it would exceed ``largest`` (a pass-rate difference is at most 1: at 6 tasks
    and 3 repeats no effect reaches 80%, since ties leave too few signs to reject)."""
    if tasks < min_tasks(alpha) or sd <= 0:
        return None
    hi = sd
    while power_at(hi, tasks, sd, alpha) < power:
        hi *= 2.0
        if hi > 2.0 * largest + 1e3 * sd:
            return None
    lo = 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power_at(mid, tasks, sd, alpha) < power else (lo, mid)
    return hi if hi <= largest else None


def tasks_needed(effect: float, sd: float, alpha: float, power: float = POWER) -> int:
    """Tasks needed to detect a true difference ``effect`` (> 0) with ``power``."""
    if not effect > 0:
        raise ValueError(f"effect must be positive, got {effect}")
    nd = NormalDist()
    lo = max(min_tasks(alpha), math.ceil(((nd.inv_cdf(1.0 - alpha) + nd.inv_cdf(power)) * sd / effect) ** 2))
    if power_at(effect, lo, sd, alpha) >= power:
        return lo
    hi = lo
    while power_at(effect, hi, sd, alpha) < power:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # power_at grows with the tasks once √n exceeds t
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if power_at(effect, mid, sd, alpha) >= power else (mid, hi)
    return hi


def plan(tasks: int, repeats: int, alpha: float, *, sd: float | None = None, source: str | None = None,
         power: float = POWER) -> PowerPlan:
    """The power plan of ``tasks × repeats`` at one-sided ``alpha``; ``sd`` from data when given."""
    if sd is None:
        sd = assumed_sd(repeats)
        assumption = (f"per-task pass probability ~ Beta({BETA_A:g}, {BETA_B:g}), the same in both arms, "
                      f"{repeats} repeat(s) per arm: σ of a task's difference {sd:.3f}")
    else:
        assumption = f"σ of a task's difference {sd:.3f} ({source or 'observed'})"
    return PowerPlan(
        tasks=tasks, repeats=repeats, alpha=alpha, power=power, sd=sd, assumption=assumption,
        mde=mde(tasks, sd, alpha, power),
        tasks_needed={f"+{e * 100:.0f} pp": tasks_needed(e, sd, alpha, power) for e in EFFECTS},
    )


def power_sentence(power: Mapping[str, Any] | None) -> str:
    """A :class:`PowerPlan` (as built-ins) in one sentence: what the planned run can detect and what +10/+5 pp need."""
    if not power:
        return ""
    m = power.get("mde")
    need = ", ".join(f"{k} needs {v} tasks" for k, v in (power.get("tasks_needed") or {}).items())
    can = (f"can detect a pass-rate difference of {m * 100:+.1f} pp or more" if m is not None
           else "has too few tasks to detect any difference")
    return (f"Planned, before any result: with {power['tasks']} tasks × {power['repeats']} repeats this run {can} with "
            f"{power['power'] * 100:g}% power (one-sided {power['alpha'] * 100:g}%); {need}. "
            f"Assumption: {power['assumption']}.")
