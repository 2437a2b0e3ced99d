"""The pass-rate difference's interval: a bounded-mean range with its nominal coverage at 6 tasks, beside the exact sign-flip p at 0."""

from __future__ import annotations

import random

from pluginbench.stats import difference_interval, mean_interval, sign_flip_test
from pluginbench.stats._bounded import METHOD


def _tied_run(rng: random.Random, n: int, delta: float) -> list[float]:
    """One run of ``n`` tasks, one repeat per arm: 45% of tasks always pass, 35% always fail, 20% uniform
    (bench/bench_aa_stats.py's ``ties``), and a true mean difference of exactly ``delta`` on 30% of them."""
    out = []
    for _ in range(n):
        u = rng.random()
        p = 1.0 if u < 0.45 else 0.0 if u < 0.80 else rng.random()
        t = p
        if rng.random() < 0.3:
            t = p * (1 + delta / (0.3 * 0.55)) if delta < 0 else 1 - (1 - p) * (1 - delta / (0.3 * 0.45))
        out.append(float(rng.random() < t) - float(rng.random() < p))
    return out


def test_covers_the_true_mean_at_six_mostly_tied_tasks() -> None:
    """Over 300 simulated runs of 6 mostly tied tasks with ±10 pp on 30% of them, the 90% range covers the truth in at least 87% (the sign-flip ends did not)."""
    rng = random.Random(20261203)
    new = old = 0
    runs = 300
    for i in range(runs):
        delta = 0.10 if i % 2 else -0.10
        d = _tied_run(rng, 6, delta)
        iv, sf = difference_interval(d), mean_interval(d)
        assert iv.low is not None and iv.high is not None and sf.low is not None and sf.high is not None
        new += iv.low <= delta <= iv.high
        old += sf.low <= delta <= sf.high
    assert new / runs >= 0.87, new / runs
    assert old / runs < 0.80, old / runs  # the symmetry the sign-flip ends assume is what ties break


def test_ties_give_a_wide_range_and_no_direction() -> None:
    """Six tied tasks do not pin the mean to 0: the range spans tens of pp either way and both sign-flip p are 1."""
    iv = difference_interval([0.0] * 6)
    assert iv.status == "ok" and iv.method == METHOD
    assert iv.low is not None and iv.high is not None and iv.low < -0.3 and iv.high > 0.3
    assert (iv.p_greater, iv.p_less) == (1.0, 1.0)


def test_p_values_are_the_sign_flip_test_at_zero() -> None:
    """The carried p-values are exactly the one-sided sign-flip tests at 0 that decide better and worse."""
    d = [1 / 3, 2 / 3, 1 / 3, 0.0, 1 / 3, 1 / 3, 2 / 3, 1 / 3]
    iv = difference_interval(d)
    assert iv.p_greater == sign_flip_test(d, alternative="greater").p == 1 / 128
    assert iv.p_less == sign_flip_test(d, alternative="less").p
    assert iv.estimate is not None and iv.low is not None and iv.high is not None
    assert iv.low < iv.estimate < iv.high


def test_too_few_tasks_give_no_range_and_no_p() -> None:
    """Below the fewest tasks the sign-flip test can decide with (five at 90%), the mean is given alone."""
    iv = difference_interval([1.0] * 4)
    assert iv.status == "too_few_tasks" and iv.estimate == 1.0
    assert (iv.low, iv.high, iv.p_greater, iv.p_less) == (None, None, None, None)
    assert difference_interval([]).status == "no_tasks"
