"""The one decision method of the page: sign-flip intervals and bound decisions at one level.

Contract:

* ``level`` is the two-sided confidence level of every interval shown (default
  :data:`LEVEL`, 90%); each endpoint is a one-sided bound at ``alpha = (1 − level) / 2``,
  and every bound gate is a one-sided test at that ``alpha``.
* :func:`mean_interval` — mean of per-task values with the sign-flip interval (test
  inversion, ``_permutation``); :func:`ratio_interval` — the same on log ratios,
  exponentiated (a geometric mean). Fewer tasks than :func:`min_tasks` → ``too_few_tasks``.
* :func:`difference_interval` — the mean of per-task pass-rate differences (each in [−1, 1])
  with the betting interval for a bounded mean (:mod:`._bounded`, no symmetry assumed: at
  least ``level`` coverage for any distribution of the differences, where the sign-flip ends
  covered 55% at 6 mostly tied tasks) and the exact one-sided sign-flip p-values at 0
  (``p_greater``, ``p_less``) the better/worse verdict decides with.
* :func:`ratio_of_means_interval` — ``Σ treatment / Σ comparator`` over tasks (per-task mean
  dollars per attempt: the cost ratio, :data:`~._cost.COST_RATIO_DEFINITION`) with the
  sign-flip interval of the ratio by test inversion: ``r`` is inside when the test of "the
  per-task ``t − r·c`` are centred on 0" does not reject (Fieller's construction with the
  sign-flip test in place of the t test; exact at ``r = 1`` when the arms are exchangeable).
* :func:`passes_lower` / :func:`passes_upper` — a gate "the centre is above ``margin``" /
  "the ratio is below ``factor``": the one-sided test's p at the gate's own limit ≤ alpha.
  The interval's endpoint is that test inverted, so the shown bound and the decision agree.
"""

import math
from collections.abc import Callable, Sequence

import msgspec

from ._bootstrap import LEVEL as LEVEL  # one copy (stats._bootstrap), re-exported
from ._bounded import METHOD as BOUNDED_METHOD
from ._bounded import bounded_interval
from ._permutation import (
    DRAWS,
    EXACT_MAX,
    SEED,
    Alternative,
    lower_bound,
    min_tasks,
    sign_flip_test,
    upper_bound,
)

METHOD = "sign-flip permutation test"
OK, TOO_FEW_TASKS, NO_TASKS = "ok", "too_few_tasks", "no_tasks"


class Estimate(msgspec.Struct, frozen=True, kw_only=True):
    """A summary over tasks with its interval at ``level``; ``low``/``high`` ``None`` unless ``ok``."""

    estimate: float | None
    low: float | None
    high: float | None
    tasks: int
    status: str
    level: float
    exact: bool
    method: str = METHOD
    draws: int = DRAWS
    seed: int = SEED
    min_tasks: int = 5
    #: pass-rate differences only (:func:`difference_interval`): the exact one-sided sign-flip
    #: p-values at 0 ("the treatment is better" / "worse"), which the verdict decides with
    p_greater: float | None = None
    p_less: float | None = None


def alpha_of(level: float) -> float:
    """The one-sided error of each endpoint of a two-sided ``level`` interval."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be within (0, 1), got {level}")
    return round((1.0 - level) / 2.0, 12)  # 0.05, not 0.04999999999999999


def mean_interval(values: Sequence[float], level: float = LEVEL) -> Estimate:
    """Mean of ``values`` and its sign-flip interval at ``level`` (module docstring)."""
    vals = [float(v) for v in values]
    alpha = alpha_of(level)
    need = min_tasks(alpha)
    n = len(vals)

    def made(estimate: float | None, low: float | None, high: float | None, status: str) -> Estimate:
        return Estimate(estimate=estimate, low=low, high=high, status=status, tasks=n, level=level,
                        exact=n <= EXACT_MAX, min_tasks=need)

    if n == 0:
        return made(None, None, None, NO_TASKS)
    mean = math.fsum(vals) / n
    if n < need:
        return made(mean, None, None, TOO_FEW_TASKS)
    lo, hi = lower_bound(vals, alpha), upper_bound(vals, alpha)
    if lo is None or hi is None:
        return made(mean, None, None, TOO_FEW_TASKS)
    return made(mean, lo, hi, OK)


def difference_interval(values: Sequence[float], level: float = LEVEL) -> Estimate:
    """Mean of per-task pass-rate differences (each in [−1, 1]) with the two-sided betting
    interval for a bounded mean at ``level`` (each end the one-sided ``(1 − level) / 2`` bound of
    :func:`._bounded.bounded_interval`) and the exact sign-flip p-values at 0 (module
    docstring). Fewer tasks than :func:`min_tasks` → ``too_few_tasks`` (no interval, no p), as
    :func:`mean_interval`: the sign-flip test at 0 cannot decide below it."""
    vals = [float(v) for v in values]
    alpha = alpha_of(level)
    need, n = min_tasks(alpha), len(vals)

    def made(estimate: float | None, iv: tuple[float, float] | None, status: str) -> Estimate:
        ok = status == OK
        return Estimate(estimate=estimate, low=iv[0] if iv else None, high=iv[1] if iv else None, status=status,
                        tasks=n, level=level, exact=n <= EXACT_MAX, min_tasks=need, method=BOUNDED_METHOD,
                        p_greater=sign_flip_test(vals, alternative="greater").p if ok else None,
                        p_less=sign_flip_test(vals, alternative="less").p if ok else None)

    if n == 0:
        return made(None, None, NO_TASKS)
    mean = math.fsum(vals) / n
    if n < need:
        return made(mean, None, TOO_FEW_TASKS)
    return made(mean, bounded_interval(vals, alpha), OK)


def ratio_interval(ratios: Sequence[float], level: float = LEVEL) -> Estimate:
    """Geometric mean of positive ``ratios`` with the sign-flip interval of the log ratios."""
    logs = []
    for r in ratios:
        if not (math.isfinite(r) and r > 0):
            raise ValueError(f"ratios must be positive and finite, got {r!r}")
        logs.append(math.log(r))
    e = mean_interval(logs, level)

    def ex(v: float | None) -> float | None:
        return None if v is None else math.exp(v)

    return msgspec.structs.replace(e, estimate=ex(e.estimate), low=ex(e.low), high=ex(e.high))


def ratio_of_means_interval(treatment: Sequence[float], comparator: Sequence[float],
                            level: float = LEVEL) -> Estimate:
    """``Σ treatment / Σ comparator`` of paired per-task values (module docstring); the
    comparator's values must be positive and every value finite and non-negative."""
    pairs = [(float(t), float(c)) for t, c in zip(treatment, comparator, strict=True)]
    for t, c in pairs:
        if not (math.isfinite(t) and math.isfinite(c) and t >= 0 and c > 0):
            raise ValueError(f"values must be finite, treatment >= 0 and comparator > 0, got {(t, c)!r}")
    alpha = alpha_of(level)
    need, n = min_tasks(alpha), len(pairs)

    def made(estimate: float | None, low: float | None, high: float | None, status: str) -> Estimate:
        return Estimate(estimate=estimate, low=low, high=high, status=status, tasks=n, level=level,
                        exact=n <= EXACT_MAX, min_tasks=need)

    if n == 0:
        return made(None, None, None, NO_TASKS)
    est = math.fsum(t for t, _ in pairs) / math.fsum(c for _, c in pairs)
    if n < need:
        return made(est, None, None, TOO_FEW_TASKS)

    def rejects(r: float, alternative: Alternative) -> bool:
        xs = [t - r * c for t, c in pairs]
        return sign_flip_test(xs, alternative=alternative).p <= alpha

    top = 2.0 * max(t / c for t, c in pairs) + 1.0  # every t − r·c < 0 above it
    # lower: the largest r the "greater" test still rejects (it rejects every r below it)
    low = _bisect_ratio(lambda r: rejects(r, "greater"), 0.0, top) if rejects(0.0, "greater") else None
    # upper: the smallest r the "less" test rejects
    high = _bisect_ratio(lambda r: not rejects(r, "less"), 0.0, top) if rejects(top, "less") else None
    if low is None or high is None:
        return made(est, None, None, TOO_FEW_TASKS)
    return made(est, low, high, OK)


def _bisect_ratio(holds: Callable[[float], bool], a: float, b: float) -> float:
    """The boundary between ``holds`` (at ``a``) and not (at ``b``), to 1e-7 relative."""
    while b - a > 1e-7 * max(1.0, b):
        mid = (a + b) / 2
        if holds(mid):
            a = mid
        else:
            b = mid
    return a


def p_above(values: Sequence[float], margin: float) -> float:
    """One-sided p of "the mean difference is above ``margin``" (null: centred on ``margin``)."""
    return sign_flip_test(values, shift=margin, alternative="greater").p


def p_below_ratio(ratios: Sequence[float], factor: float) -> float:
    """One-sided p of "the geometric-mean ratio is below ``factor``" (log scale)."""
    return sign_flip_test([math.log(r) for r in ratios], shift=math.log(factor), alternative="less").p


def passes_lower(values: Sequence[float], margin: float, level: float = LEVEL) -> bool:
    """A lower-bound gate: the difference is credibly above ``margin`` at ``level``."""
    return len(values) >= min_tasks(alpha_of(level)) and p_above(values, margin) <= alpha_of(level)


def passes_upper(ratios: Sequence[float], factor: float, level: float = LEVEL) -> bool:
    """An upper-bound gate: the ratio is credibly below ``factor`` at ``level``."""
    return len(ratios) >= min_tasks(alpha_of(level)) and p_below_ratio(ratios, factor) <= alpha_of(level)

