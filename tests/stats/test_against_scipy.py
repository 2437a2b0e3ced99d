"""The statistics checked against a second implementation (NumPy and SciPy) on fixed data."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import stats as sps

from pluginbench.stats import (
    exact_sign_test,
    geometric_mean_ratio,
    paired_bootstrap,
    wilson_interval,
)

#: Fixed per-task pass-rate differences and token ratios (8 tasks).
DIFFS = [0.0, 1 / 3, 1 / 3, -1 / 3, 2 / 3, 0.0, 1.0, 1 / 3]
RATIOS = [1.45, 1.2, 1.4, 1.11, 1.16, 1.6, 0.9, 1.05]


def _numpy_bootstrap(values: list[float], draws: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """The documented scheme recomputed with NumPy: indices floor(random() * n), type-7 percentiles."""
    rng = random.Random(seed)
    n = len(values)
    idx = np.array([[int(rng.random() * n) for _ in range(n)] for _ in range(draws)])
    means = np.asarray(values)[idx].mean(axis=1)
    low, high = np.percentile(means, [5, 95], method="linear")
    return float(low), float(high)


def test_bootstrap_endpoints_match_numpy() -> None:
    """The 90% bootstrap endpoints equal NumPy's means and linear percentiles over the same draws."""
    res = paired_bootstrap(DIFFS)
    low, high = _numpy_bootstrap(DIFFS)
    assert res.mean == pytest.approx(np.mean(DIFFS))
    assert (res.low, res.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_bootstrap_endpoints_agree_with_scipy_percentile_bootstrap() -> None:
    """SciPy's percentile bootstrap (its own generator) lands within Monte Carlo error of ours."""
    res = paired_bootstrap(DIFFS)
    ci = sps.bootstrap(
        (np.asarray(DIFFS),), np.mean, n_resamples=10_000, confidence_level=0.90,
        method="percentile", random_state=np.random.default_rng(0),
    ).confidence_interval
    assert res.low == pytest.approx(ci.low, abs=0.03)
    assert res.high == pytest.approx(ci.high, abs=0.03)


def test_geometric_mean_ratio_matches_scipy_gmean_and_log_space_bootstrap() -> None:
    """The token summary is SciPy's gmean, and its interval the exponentiated log-space bootstrap."""
    res = geometric_mean_ratio(RATIOS)
    assert res.mean == pytest.approx(sps.gmean(RATIOS))
    low, high = _numpy_bootstrap([float(np.log(r)) for r in RATIOS])
    assert (res.low, res.high) == (pytest.approx(np.exp(low)), pytest.approx(np.exp(high)))


@pytest.mark.parametrize("pos", range(0, 10))
@pytest.mark.parametrize("neg", range(0, 10))
def test_sign_test_matches_scipy_binomtest(pos: int, neg: int) -> None:
    """The exact two-sided sign test equals SciPy's binomtest at p = 1/2 (all ties: p = 1)."""
    expected = 1.0 if pos + neg == 0 else sps.binomtest(pos, pos + neg, 0.5).pvalue
    assert exact_sign_test(pos, neg) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 3), (2, 3), (3, 3), (7, 10), (1, 20), (19, 20), (50, 100)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    """The Wilson 95% interval equals SciPy's binomtest(...).proportion_ci(method='wilson')."""
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    w = wilson_interval(k, n)
    assert w is not None
    assert (w.low, w.high) == (pytest.approx(ci.low, abs=1e-9), pytest.approx(ci.high, abs=1e-9))
