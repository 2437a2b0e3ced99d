"""The sign-flip permutation test, its inverted interval and the power plan, checked against SciPy."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats as sps

from pluginbench.stats._decide import mean_interval, passes_lower, passes_upper, ratio_interval
from pluginbench.stats._permutation import lower_bound, min_tasks, sign_flip_test, upper_bound
from pluginbench.stats._power import assumed_sd, mde, plan, power_at, tasks_needed

THIRDS = [-1, -2 / 3, -1 / 3, 0, 1 / 3, 2 / 3, 1]


def _scipy_p(x: list[float], alternative: str) -> float:
    return sps.permutation_test(
        (np.asarray(x),), np.sum, permutation_type="samples", alternative=alternative, n_resamples=np.inf,
    ).pvalue


@pytest.mark.parametrize("n", [2, 5, 8, 13, 16])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_exact_p_equals_scipy_permutation_test(n: int, alternative: str) -> None:
    """Up to 2^16 patterns the exact p equals SciPy's exact permutation_test, ties and zeros included."""
    rng = random.Random(n)
    for _ in range(5):
        x = [rng.choice(THIRDS) for _ in range(n)]
        assert sign_flip_test(x, alternative=alternative).p == pytest.approx(_scipy_p(x, alternative), abs=1e-12)


def test_shifted_test_equals_scipy_on_shifted_data() -> None:
    """A margin shift is the test of the values minus the margin (non-inferiority at -5 pp)."""
    x = [0.0, 1 / 3, -1 / 3, 0.0, 2 / 3, 0.0, -1 / 3, 1 / 3, 0.0, 1 / 3]
    mine = sign_flip_test(x, shift=-0.05, alternative="greater").p
    assert mine == pytest.approx(_scipy_p([v + 0.05 for v in x], "greater"), abs=1e-12)


def test_monte_carlo_p_is_within_error_of_the_exact_p() -> None:
    """Above the exact limit the seeded Monte Carlo p lands within 4 standard errors of the exact p."""
    rng = random.Random(3)
    x = [rng.gauss(0.1, 0.4) for _ in range(18)]
    exact = sign_flip_test(x).p
    mc = sign_flip_test(x, exact_max=5)
    assert not mc.exact and mc.patterns == 10_000
    assert abs(mc.p - exact) < 4 * math.sqrt(exact * (1 - exact) / 10_000) + 1e-4
    assert sign_flip_test(x, exact_max=5).p == mc.p  # seeded: the same every time


def test_all_zero_differences_give_p_one_and_a_point_interval() -> None:
    """Identical arms on every task: no evidence either way (p = 1) and the interval is [0, 0]."""
    assert sign_flip_test([0.0] * 8).p == 1.0
    iv = mean_interval([0.0] * 8)
    assert (iv.low, iv.high, iv.status) == (0.0, 0.0, "ok")


def test_interval_inverts_the_test() -> None:
    """The lower bound is where the one-sided p crosses alpha, so bound and decision always agree."""
    rng = random.Random(7)
    for trial in range(20):
        n = rng.choice([6, 9, 14, 22])
        x = [rng.choice(THIRDS) for _ in range(n)]
        lo, hi = lower_bound(x, 0.05), upper_bound(x, 0.05)
        assert lo is not None and hi is not None and lo <= sum(x) / n <= hi
        for margin in (-0.2, -0.05, 0.0, 0.05):
            if abs(margin - lo) > 1e-6:
                assert passes_lower(x, margin) == (margin < lo), (trial, x, margin, lo)


def test_too_few_tasks_for_the_level() -> None:
    """With n tasks the smallest p is 2^-n: 90% intervals need 5 tasks, 95% need 6."""
    assert (min_tasks(0.05), min_tasks(0.025)) == (5, 6)
    assert mean_interval([1.0] * 4).status == "too_few_tasks"
    assert mean_interval([1.0] * 5).status == "ok"


def test_ratio_interval_is_on_the_log_scale() -> None:
    """The token ratio interval is the exponentiated interval of the log ratios; its gate uses the same test."""
    r = [1.45, 1.2, 1.4, 1.11, 1.16, 1.6, 0.9, 1.05]
    iv, logs = ratio_interval(r), mean_interval([math.log(v) for v in r])
    assert iv.estimate == pytest.approx(math.exp(logs.estimate))
    assert iv.high == pytest.approx(math.exp(logs.high))
    assert passes_upper(r, 1.5) and not passes_upper(r, 1.1)


def test_power_numbers_follow_the_sign_flip_critical_value_and_binomial_check() -> None:
    """Power is Φ(δ√n/σ − t₀.₉₅,ₙ₋₁·√(1 + δ²/σ²)) with σ from Beta(2,2) and 3 repeats (SciPy's t agrees); the MDE is
    where it reaches 80%, +10 pp needs 88 tasks, 6 tasks × 3 repeats detect nothing with 80% power; SciPy's binomtest
    agrees that 5 all-positive tasks reach one-sided 5%."""
    sd = assumed_sd(3)
    assert sd == pytest.approx(math.sqrt(2 * 0.2 / 3))
    for n, d in ((6, 0.3), (20, 0.2), (83, 0.1)):
        want = sps.norm.cdf(d * math.sqrt(n) / sd - sps.t.ppf(0.95, n - 1) * math.sqrt(1 + (d / sd) ** 2))
        assert power_at(d, n, sd, 0.05) == pytest.approx(want, abs=1e-3)
    assert power_at(mde(50, sd, 0.05) or 0.0, 50, sd, 0.05) == pytest.approx(0.80, abs=1e-6)
    assert mde(50, sd, 0.05) > (sps.norm.ppf(0.95) + sps.norm.ppf(0.80)) * sd / math.sqrt(50)
    assert mde(6, sd, 0.05) is None
    assert tasks_needed(0.10, sd, 0.05) == 88
    assert power_at(0.10, 87, sd, 0.05) < 0.80 <= power_at(0.10, 88, sd, 0.05)
    assert plan(20, 3, 0.05).tasks_needed == {"+10 pp": 88, "+5 pp": 336}
    assert sps.binomtest(5, 5, alternative="greater").pvalue == sign_flip_test([1 / 3] * 5).p


def test_ratio_of_means_interval_is_scipys_permutation_test_inverted() -> None:
    """The dollars-ratio interval's ends are where SciPy's exact permutation test of the per-task t − r·c crosses
    alpha: just inside each end it does not reject at 5%, just outside it does; the estimate is Σt / Σc."""
    from pluginbench.stats import ratio_of_means_interval

    t = [0.42, 0.55, 0.31, 0.60, 0.48, 0.52, 0.39, 0.45]
    c = [0.40, 0.41, 0.35, 0.44, 0.38, 0.47, 0.36, 0.40]
    iv = ratio_of_means_interval(t, c, 0.90)
    assert iv.status == "ok" and iv.estimate == pytest.approx(sum(t) / sum(c))
    assert iv.low is not None and iv.high is not None and iv.low < iv.estimate < iv.high

    def p(r: float, alternative: str) -> float:
        return _scipy_p([a - r * b for a, b in zip(t, c, strict=True)], alternative)

    eps = 1e-4
    assert p(iv.low - eps, "greater") <= 0.05 < p(iv.low + eps, "greater")
    assert p(iv.high + eps, "less") <= 0.05 < p(iv.high - eps, "less")
    assert ratio_of_means_interval(t[:3], c[:3], 0.90).status == "too_few_tasks"
    with pytest.raises(ValueError):
        ratio_of_means_interval([1.0], [0.0])
