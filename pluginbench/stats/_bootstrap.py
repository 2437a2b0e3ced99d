"""Paired percentile bootstrap over whole task pairs.

Contract (product description, "Compare runs"): each task contributes one value (its
pass-rate difference, or its log token ratio); tasks have equal weight. The summary is
the mean over tasks; its interval resamples whole tasks with replacement, ``draws``
times (10,000 by default) from a PRNG seeded with ``seed`` (0 by default), and takes
two-sided percentile bounds with linear interpolation (90% → the 5th and 95th
percentiles; each endpoint is a one-sided 95% bound). Fewer than :data:`MIN_TASKS`
values give status ``too_few_tasks`` and no interval.

Determinism: indices are drawn as ``floor(random() * n)`` from ``random.Random(seed)``,
whose Mersenne Twister stream for an integer seed is stable across Python versions,
and sums use :func:`math.fsum`, so results do not depend on summation order.
"""

import functools
import math
import random
from collections.abc import Sequence
from typing import NamedTuple

MIN_TASKS = 6
DRAWS = 10_000
SEED = 0
LEVEL = 0.90

OK = "ok"
TOO_FEW_TASKS = "too_few_tasks"
NO_TASKS = "no_tasks"


class BootstrapResult(NamedTuple):
    """``mean`` over tasks and its interval; ``low``/``high`` are ``None`` unless ``status == "ok"``.

    ``mean`` is ``None`` only when there are no values at all (``status == "no_tasks"``).
    """

    mean: float | None
    low: float | None
    high: float | None
    n: int
    status: str


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) of already sorted values, linear interpolation.

    Position ``q · (n − 1)`` between the neighbouring order statistics (the
    "linear" / type-7 definition). Raises ``ValueError`` when empty or ``q`` out of range.
    """
    if not sorted_values:
        raise ValueError("percentile of no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be within [0, 1], got {q}")
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    a, b = sorted_values[lo], sorted_values[hi]
    return a + (b - a) * frac if frac else float(a)


@functools.lru_cache(maxsize=8)
def _draws(n: int, draws: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """The resampled index rows for ``n`` tasks: the same for every statistic with that n.

    Cached, so the pass-rate and token bootstraps of a comparison (and every seed of a
    calibration) draw the Mersenne Twister stream once per task count.
    """
    rand = random.Random(seed).random
    return tuple(tuple(int(rand() * n) for _ in range(n)) for _ in range(draws))


def _check(values: Sequence[float], draws: int, level: float) -> None:
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be within (0, 1), got {level}")
    for v in values:
        if not math.isfinite(v):
            raise ValueError(f"values must be finite, got {v!r}")


def paired_bootstrap(
    values: Sequence[float],
    *,
    draws: int = DRAWS,
    seed: int = SEED,
    level: float = LEVEL,
    min_tasks: int = MIN_TASKS,
) -> BootstrapResult:
    """Mean of per-task ``values`` with a percentile-bootstrap interval at ``level``.

    Raises ``ValueError`` on non-finite values, ``draws < 1`` or ``level`` outside (0, 1).
    """
    vals = [float(v) for v in values]
    _check(vals, draws, level)
    n = len(vals)
    if n == 0:
        return BootstrapResult(None, None, None, 0, NO_TASKS)
    mean = math.fsum(vals) / n
    if n < min_tasks:
        return BootstrapResult(mean, None, None, n, TOO_FEW_TASKS)
    get = vals.__getitem__
    fsum = math.fsum
    means = sorted(fsum(map(get, row)) / n for row in _draws(n, draws, seed))
    tail = (1.0 - level) / 2.0
    low = percentile(means, tail)
    high = percentile(means, 1.0 - tail)
    return BootstrapResult(mean, low, high, n, OK)


def geometric_mean_ratio(
    ratios: Sequence[float],
    *,
    draws: int = DRAWS,
    seed: int = SEED,
    level: float = LEVEL,
    min_tasks: int = MIN_TASKS,
) -> BootstrapResult:
    """Geometric mean of per-task ratios, bootstrapped in log space then exponentiated.

    Every ratio must be positive and finite (``ValueError`` otherwise): a task whose
    ratio is undefined must be excluded by the caller, with its reason.
    """
    logs = []
    for r in ratios:
        if not (math.isfinite(r) and r > 0):
            raise ValueError(f"ratios must be positive and finite, got {r!r}")
        logs.append(math.log(r))
    res = paired_bootstrap(logs, draws=draws, seed=seed, level=level, min_tasks=min_tasks)
    return BootstrapResult(
        None if res.mean is None else math.exp(res.mean),
        None if res.low is None else math.exp(res.low),
        None if res.high is None else math.exp(res.high),
        res.n,
        res.status,
    )
