"""Wilson intervals, the exact sign test and the median."""

from __future__ import annotations

import itertools
import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pluginbench.stats import Z_95, exact_sign_test, median, wilson_interval


@st.composite
def trials(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(min_value=1, max_value=500))
    return draw(st.integers(min_value=0, max_value=n)), n


def test_wilson_of_no_trials_is_unknown() -> None:
    """Zero trials give no interval at all (unknown), never [0, 0]."""
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(("k", "n"), [(-1, 3), (4, 3), (0, -1)])
def test_wilson_refuses_impossible_counts(k: int, n: int) -> None:
    """Counts outside 0 <= k <= n are a caller bug and raise ValueError."""
    with pytest.raises(ValueError):
        wilson_interval(k, n)


def test_wilson_refuses_non_positive_z() -> None:
    """A z of zero or below has no meaning for a confidence interval."""
    with pytest.raises(ValueError):
        wilson_interval(1, 2, z=0.0)


def test_wilson_matches_textbook_values() -> None:
    """5/10 gives the textbook Wilson 95% interval (0.2366, 0.7634) and 0/10 tops out at 0.2775."""
    half = wilson_interval(5, 10)
    assert half is not None
    assert half.low == pytest.approx(0.2366, abs=5e-5)
    assert half.high == pytest.approx(0.7634, abs=5e-5)
    none = wilson_interval(0, 10)
    assert none is not None and none.low == 0.0
    assert none.high == pytest.approx(0.2775, abs=5e-5)


@given(trials())
def test_wilson_bounds_solve_the_score_equation(kn: tuple[int, int]) -> None:
    """Each interior bound p0 satisfies (p̂ − p0)² = z²·p0(1 − p0)/n, the Wilson definition."""
    k, n = kn
    iv = wilson_interval(k, n)
    assert iv is not None
    p = k / n
    for p0 in (iv.low, iv.high):
        if p0 in (0.0, 1.0):
            continue
        lhs = (p - p0) ** 2
        rhs = Z_95**2 * p0 * (1 - p0) / n
        assert lhs == pytest.approx(rhs, rel=1e-6, abs=1e-12)


@given(trials())
def test_wilson_lies_in_unit_interval_and_contains_estimate(kn: tuple[int, int]) -> None:
    """The interval stays inside [0, 1], contains k/n, and pins exact ends at 0/n and n/n."""
    k, n = kn
    iv = wilson_interval(k, n)
    assert iv is not None
    assert 0.0 <= iv.low <= k / n <= iv.high <= 1.0
    assert (iv.low == 0.0) == (k == 0)
    assert (iv.high == 1.0) == (k == n)


@given(st.integers(min_value=1, max_value=100))
def test_wilson_narrows_with_more_trials(n: int) -> None:
    """The same observed rate with ten times the trials gives a narrower interval."""
    small = wilson_interval(n, 2 * n)
    big = wilson_interval(10 * n, 20 * n)
    assert small is not None and big is not None
    assert big.high - big.low < small.high - small.low


def _brute_sign_p(pos: int, neg: int) -> float:
    """Two-sided p by enumerating every sign sequence: sequences at least as lopsided."""
    n = pos + neg
    observed = abs(pos - neg)
    hits = sum(1 for seq in itertools.product((1, -1), repeat=n) if abs(sum(seq)) >= observed)
    return hits / 2**n


def test_sign_test_without_untied_tasks_is_one() -> None:
    """All ties (no positive and no negative task) gives p = 1."""
    assert exact_sign_test(0, 0) == 1.0


def test_sign_test_all_six_one_way() -> None:
    """Six of six in one direction gives p = 2/64."""
    assert exact_sign_test(6, 0) == 2 / 64
    assert exact_sign_test(0, 6) == 2 / 64


@pytest.mark.parametrize(("pos", "neg"), [(p, n) for p in range(9) for n in range(9) if p + n > 0])
def test_sign_test_matches_enumeration(pos: int, neg: int) -> None:
    """The exact p equals the share of equally likely sign sequences at least as extreme."""
    assert exact_sign_test(pos, neg) == pytest.approx(_brute_sign_p(pos, neg), rel=1e-12)


@given(st.integers(0, 200), st.integers(0, 200))
def test_sign_test_is_a_symmetric_probability(pos: int, neg: int) -> None:
    """p is in (0, 1], symmetric in the two counts, and 1 when they are equal."""
    p = exact_sign_test(pos, neg)
    assert 0.0 < p <= 1.0
    assert p == exact_sign_test(neg, pos)
    if pos == neg:
        assert p == 1.0


def test_sign_test_refuses_negative_counts() -> None:
    """Negative counts raise ValueError."""
    with pytest.raises(ValueError):
        exact_sign_test(-1, 2)


def test_median_of_nothing_is_unknown() -> None:
    """The median of no values is None, not 0."""
    assert median([]) is None


@given(st.lists(st.floats(min_value=-1e9, max_value=1e9), min_size=1, max_size=50))
def test_median_agrees_with_statistics_module(values: list[float]) -> None:
    """median() agrees with statistics.median for any non-empty list."""
    got = median(values)
    assert got is not None
    assert math.isclose(got, statistics.median(values), rel_tol=1e-12, abs_tol=1e-9)
