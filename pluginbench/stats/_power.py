"""Power before spending: the smallest effect a planned run can detect, and the tasks an effect needs.

Contract: the decision is the one-sided sign-flip test at ``alpha`` on per-task pass-rate
differences; its power is taken from the normal approximation of the mean difference,
``power = Φ(δ·√n / σ − z₁₋α)``, where ``σ`` is the standard deviation of one task's
difference. The stated assumption for ``σ`` when no data is at hand: every task has its own
pass probability ``p ~ Beta(a, b)`` (default Beta(2, 2): tasks spread over the whole range),
the same for both arms, and each arm runs ``repeats`` attempts, so
``σ² = 2·E[p(1 − p)] / repeats`` with ``E[p(1 − p)] = ab / ((a + b)(a + b + 1))``.
``bench/bench_aa_gates.py`` checks these numbers against simulated runs.
"""

from __future__ import annotations

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


def _z(alpha: float, power: float) -> float:
    nd = NormalDist()
    return nd.inv_cdf(1.0 - alpha) + nd.inv_cdf(power)


def mde(tasks: int, sd: float, alpha: float, power: float = POWER) -> float | None:
    """The smallest effect detected with ``power`` over ``tasks`` tasks (``None`` below the test's minimum)."""
    if tasks < min_tasks(alpha):
        return None
    return _z(alpha, power) * sd / math.sqrt(tasks)


def tasks_needed(effect: float, sd: float, alpha: float, power: float = POWER) -> int:
    """Tasks needed to detect a true difference ``effect`` (> 0) with ``power``."""
    if not effect > 0:
        raise ValueError(f"effect must be positive, got {effect}")
    return max(min_tasks(alpha), math.ceil((_z(alpha, power) * sd / effect) ** 2))


def power_at(effect: float, tasks: int, sd: float, alpha: float) -> float:
    """The approximate power of the test for a true difference ``effect`` over ``tasks`` tasks."""
    if tasks < min_tasks(alpha) or sd <= 0:
        return 0.0
    return NormalDist().cdf(effect * math.sqrt(tasks) / sd - NormalDist().inv_cdf(1.0 - alpha))


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
