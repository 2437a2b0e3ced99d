"""How many more tasks would likely decide an undetermined verdict, for the rules that decide it. Pure.

The verdict (:mod:`._verdict`) decides a fixed-size run with three rules: ``better`` /
``worse`` is the exact one-sided sign-flip test at 0 (:mod:`._permutation`), ``equivalent``
is the two-sided betting interval for a bounded mean (:mod:`._bounded`) inside ± the
margin. The betting interval is wider than a normal interval, so a normal-approximation
count ("the margin minus the effect, at the observed σ") promised equivalence far too early:
30 near-tied tasks read "about 1 more task" where about 45 more were needed.

Method: a small deterministic bootstrap through the rules themselves. The run's own
per-task differences are the best estimate of where new tasks come from, so a run extended
by ``k`` tasks is simulated :data:`RESAMPLES` times as the observed tasks (in their order)
followed by ``k`` tasks drawn with replacement from them (``numpy.random.RandomState`` with
a fixed seed: the legacy stream numpy keeps frozen, so the number is the same on every
machine given the run). In each the decision is asked:

* equivalence — the betting test of :mod:`._bounded` run as it is (the same predictable
  bets, sized for ``n + k`` tasks, the same running variance and truncation): the interval
  lies within ± the margin exactly when "the mean is at most −margin" and "at least
  +margin" are both rejected (the interval's ends are those tests inverted);
* better / worse — the sign-flip test at 0 by its normal limit: under sign flips
  ``Σ±|x|`` has mean 0 and variance ``Σx²``, so it rejects when ``|Σx| / √Σx² ≥ z₁₋α``
  and at least ``log2(1/α)`` tasks differ from 0 (fewer non-zero signs cannot reach α).

The number is the fewest more tasks, on a grid of round numbers (:data:`STEPS`), at which at
least :data:`~._power.POWER` of the simulated extensions are decided (any of the three),
found by bisection over the grid (the share grows with ``k``; the same draws serve every
``k``: common random numbers). If even :data:`MAX_TASKS` tasks in all do not reach it the
answer is "not reachable within that many tasks". All of one ``k`` is a few numpy array
operations (the capital's log is a cumulative sum, its bets from cumulative moments), so a
verdict's count takes a few milliseconds. ``bench/bench_aa_stats.py --only more_tasks``
checks the claim on fresh tasks from the same truth.
"""

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import msgspec

from ._bounded import TRUNCATION
from ._permutation import min_tasks
from ._power import POWER

#: Simulated extensions per candidate count.
RESAMPLES = 400
#: The most tasks in all (observed + more) the count looks at.
MAX_TASKS = 500
#: Candidate counts of more tasks (round numbers: the answer is "about").
STEPS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 150, 200, 250, 300, 400, 500)
SEED = 20261203
METHOD = ("bootstrap of the observed per-task differences through the deciding rules (sign-flip test at 0, "
          "betting interval within the margin)")


class MoreTasks(msgspec.Struct, frozen=True, kw_only=True):
    """The answer: ``more`` tasks beyond the run's (None: not reachable within ``max_tasks``
    in all), and the simulated share of extensions decided at that count."""

    more: int | None
    probability: float
    max_tasks: int


def _np() -> Any:
    import numpy

    return numpy


def _decided(np: Any, x: Any, alpha: float, margin: float) -> Any:
    """Whether each row of ``x`` (rows of per-task differences in [−1, 1]) would be decided:
    better, worse or equivalent (module docstring)."""
    n = x.shape[1]
    s = x.sum(axis=1)
    q = (x * x).sum(axis=1)
    nonzero = (x != 0).sum(axis=1)
    z = NormalDist().inv_cdf(1.0 - alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        direction = (nonzero >= min_tasks(alpha)) & (np.abs(s) >= z * np.sqrt(q)) & (q > 0)
    y = np.clip((x + 1.0) / 2.0, 0.0, 1.0)
    t = np.arange(1, n + 1)
    s_x = np.cumsum(y, axis=1)
    mu = np.minimum((0.5 + s_x) / (t + 1), 1.0)
    sigma2 = (0.25 + np.cumsum((y - mu) ** 2, axis=1)) / (t + 1)
    prev = np.concatenate([np.full((x.shape[0], 1), 0.25), sigma2[:, :-1]], axis=1)
    lam = np.sqrt(2.0 * math.log(1.0 / alpha) / n / prev)
    need = math.log(1.0 / alpha)
    equivalent = np.ones(x.shape[0], dtype=bool)
    for m, up in (((1.0 - margin) / 2.0, True), ((1.0 + margin) / 2.0, False)):
        room = m if up else 1.0 - m
        bet = np.minimum(lam, TRUNCATION / room) if room > 0 else lam
        log_cap = np.cumsum(np.log1p(bet * ((y - m) if up else (m - y))), axis=1)
        equivalent &= log_cap.max(axis=1) >= need - 1e-12
    return direction | equivalent


def more_tasks(diffs: Sequence[float], alpha: float, margin: float, *, max_tasks: int = MAX_TASKS,
               target: float = POWER, resamples: int = RESAMPLES) -> MoreTasks:
    """The fewest more tasks after which at least ``target`` of the run's bootstrap extensions
    are decided (module docstring); ``diffs`` are the run's per-task differences in task order."""
    np = _np()
    base = np.asarray([float(d) for d in diffs], dtype=np.float64)
    n = int(base.shape[0])
    if n == 0:
        raise ValueError("more_tasks needs at least one task")
    steps = [k for k in STEPS if n + k <= max_tasks]
    if not steps:
        return MoreTasks(more=None, probability=0.0, max_tasks=max_tasks)
    draws = base[np.random.RandomState(SEED).randint(0, n, size=(resamples, steps[-1]))]
    prefix = np.broadcast_to(base, (resamples, n))

    def share(k: int) -> float:
        return float(_decided(np, np.concatenate([prefix, draws[:, :k]], axis=1), alpha, margin).mean())

    top = share(steps[-1])
    if top < target:
        return MoreTasks(more=None, probability=top, max_tasks=max_tasks)
    lo, hi, p_hi = -1, len(steps) - 1, top  # steps[hi] reaches the target; steps[lo] (if any) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        p = share(steps[mid])
        if p >= target:
            hi, p_hi = mid, p
        else:
            lo = mid
    return MoreTasks(more=steps[hi], probability=p_hi, max_tasks=max_tasks)
