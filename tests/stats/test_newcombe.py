"""Newcombe's hybrid score interval for a difference of two pass rates (the report's forest plot)."""

from __future__ import annotations

import pytest
from scipy import stats as sps

from pluginbench.stats import newcombe_difference

# Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10 (score, no continuity correction).
PUBLISHED = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0)),
    ((10, 10, 0, 10), (0.6075, 1.0)),
]


@pytest.mark.parametrize(("counts", "expected"), PUBLISHED)
def test_newcombe_matches_published_values(counts, expected) -> None:
    """The interval equals Newcombe's published method-10 values to four decimals."""
    iv = newcombe_difference(*counts)
    assert iv is not None
    assert (round(iv.low, 4), round(iv.high, 4)) == expected


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), [(2, 3, 1, 3), (3, 3, 0, 3), (1, 5, 4, 5)])
def test_newcombe_is_built_from_scipy_wilson_intervals(k1, n1, k2, n2) -> None:
    """Recomputed from SciPy's Wilson intervals, the hybrid interval is the same."""
    w1 = sps.binomtest(k1, n1).proportion_ci(method="wilson")
    w2 = sps.binomtest(k2, n2).proportion_ci(method="wilson")
    p1, p2 = k1 / n1, k2 / n2
    low = (p1 - p2) - ((p1 - w1.low) ** 2 + (w2.high - p2) ** 2) ** 0.5
    high = (p1 - p2) + ((w1.high - p1) ** 2 + (p2 - w2.low) ** 2) ** 0.5
    iv = newcombe_difference(k1, n1, k2, n2)
    assert iv is not None
    assert (iv.low, iv.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def test_newcombe_without_trials_is_unknown() -> None:
    """No trials on either side gives no interval (unknown, not zero)."""
    assert newcombe_difference(0, 0, 1, 2) is None
    assert newcombe_difference(1, 2, 0, 0) is None


def test_forest_interval_denominator_keeps_overlap_passes() -> None:
    """The forest plot's Newcombe interval counts an overlap pass as a trial that did not pass, as the plotted
    difference does (issue 21): 1 pass + 1 overlap pass of 2 is 1/2, not 1/1."""
    from pluginbench.projections._report_plots import forest_rows

    arm = {"passes": 1, "overlap_passes": 1, "fails": 0, "empties": 0}
    van = {"passes": 0, "overlap_passes": 0, "fails": 2, "empties": 0}
    doc = {
        "tasks": ["t"],
        "per_task": {"t": {"guided": arm, "vanilla": van}},
        "deltas": {"guided": {"against": "vanilla",
                              "per_task": {"t": {"pass_rate_difference": 0.5, "pass_rate_excluded": None}},
                              "summary": {"pass_rate": {"level": 0.95}}}},
    }
    (row,) = forest_rows(doc, "guided")
    expected = newcombe_difference(1, 2, 0, 2)
    assert expected is not None and (row["low"], row["high"]) == (pytest.approx(expected.low), pytest.approx(expected.high))
    assert row["low"] <= row["difference"] <= row["high"]
