"""The paired percentile bootstrap and the geometric-mean ratio."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pluginbench.stats import (
    MIN_TASKS,
    NO_TASKS,
    OK,
    TOO_FEW_TASKS,
    geometric_mean_ratio,
    paired_bootstrap,
    percentile,
)

finite = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
values_ok = st.lists(finite, min_size=MIN_TASKS, max_size=30)


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40), st.integers(1, 99))
def test_percentile_is_linear_interpolation(values: list[float], k: int) -> None:
    """percentile() equals the 'inclusive' (type 7, linear) quantile of the statistics module."""
    if len(values) < 2:
        assert percentile(sorted(values), k / 100) == values[0]
        return
    expected = statistics.quantiles(values, n=100, method="inclusive")[k - 1]
    assert percentile(sorted(values), k / 100) == pytest.approx(expected, rel=1e-9, abs=1e-6)


def test_percentile_interpolates_between_order_statistics() -> None:
    """The 5th percentile of 0..10 lies half way between the first two order statistics."""
    assert percentile([0.0, 10.0, 20.0], 0.25) == 5.0
    assert percentile([0.0, 10.0], 0.05) == pytest.approx(0.5)


def test_percentile_refuses_bad_input() -> None:
    """No values, or a quantile outside [0, 1], raise ValueError."""
    with pytest.raises(ValueError):
        percentile([], 0.5)
    with pytest.raises(ValueError):
        percentile([1.0], 1.5)


def test_no_values_give_no_estimate() -> None:
    """With no tasks there is no mean and no interval."""
    res = paired_bootstrap([])
    assert (res.mean, res.low, res.high, res.n, res.status) == (None, None, None, 0, NO_TASKS)


@pytest.mark.parametrize("n", range(1, MIN_TASKS))
def test_fewer_than_six_tasks_is_too_few(n: int) -> None:
    """Below six tasks the mean is reported but the interval is withheld as too_few_tasks."""
    vals = [0.1 * i for i in range(n)]
    res = paired_bootstrap(vals)
    assert res.status == TOO_FEW_TASKS
    assert res.low is None and res.high is None
    assert res.mean == pytest.approx(sum(vals) / n)
    assert res.n == n


def test_six_tasks_get_an_interval() -> None:
    """Exactly six tasks is enough for an interval."""
    res = paired_bootstrap([0.0, 0.5, 1.0, -0.5, 0.25, 0.0])
    assert res.status == OK
    assert res.low is not None and res.high is not None
    assert res.low <= res.high


@settings(max_examples=40, deadline=None)
@given(values_ok, st.integers(0, 2**32))
def test_bootstrap_is_deterministic_for_a_seed(values: list[float], seed: int) -> None:
    """The same values and seed always give the same interval."""
    a = paired_bootstrap(values, draws=500, seed=seed)
    b = paired_bootstrap(values, draws=500, seed=seed)
    assert a == b


@settings(max_examples=40, deadline=None)
@given(values_ok)
def test_interval_lies_within_the_data_range(values: list[float]) -> None:
    """Every resample mean lies between the smallest and the largest task value."""
    res = paired_bootstrap(values, draws=300)
    assert res.low is not None and res.high is not None
    assert min(values) - 1e-12 <= res.low <= res.high <= max(values) + 1e-12


def test_constant_values_give_a_point_interval() -> None:
    """When every task has the same value, every resample mean equals it."""
    res = paired_bootstrap([0.25] * 8)
    assert res.mean == res.low == res.high == 0.25


def test_resampling_follows_the_documented_draw_scheme() -> None:
    """Indices are floor(random() * n) from random.Random(seed); bounds are type-7 percentiles."""
    values = [0.0, 1.0, 0.5, -0.5, 0.25, 1.0, 0.0]
    draws, seed = 200, 3
    rng = random.Random(seed)
    n = len(values)
    means = sorted(
        math.fsum(values[int(rng.random() * n)] for _ in range(n)) / n for _ in range(draws)
    )
    expected_low = statistics.quantiles(means, n=20, method="inclusive")[0]
    expected_high = statistics.quantiles(means, n=20, method="inclusive")[-1]
    res = paired_bootstrap(values, draws=draws, seed=seed)
    assert res.low == pytest.approx(expected_low, abs=1e-12)
    assert res.high == pytest.approx(expected_high, abs=1e-12)


def test_default_is_ten_thousand_draws_seed_zero() -> None:
    """The defaults equal an explicit draws=10,000, seed=0, level=0.90 call."""
    values = [0.0, 0.33, -0.33, 0.67, 0.0, 1.0, 0.33]
    assert paired_bootstrap(values) == paired_bootstrap(values, draws=10_000, seed=0, level=0.90)
    assert paired_bootstrap(values) != paired_bootstrap(values, seed=1)


def test_wider_level_gives_wider_interval() -> None:
    """A 98% interval contains the 90% interval from the same draws."""
    values = [0.0, 0.33, -0.33, 0.67, 0.0, 1.0, 0.33, -1.0]
    narrow = paired_bootstrap(values, level=0.90)
    wide = paired_bootstrap(values, level=0.98)
    assert wide.low <= narrow.low <= narrow.high <= wide.high  # type: ignore[operator]


def test_interval_brackets_the_mean_for_symmetric_data() -> None:
    """For symmetric task values the interval straddles the mean."""
    values = [-1.0, -0.5, 0.0, 0.0, 0.5, 1.0, -0.25, 0.25]
    res = paired_bootstrap(values)
    assert res.low < 0.0 < res.high  # type: ignore[operator]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values_are_refused(bad: float) -> None:
    """A non-finite task value is a caller bug (it should have been excluded) and raises."""
    with pytest.raises(ValueError):
        paired_bootstrap([0.0] * 6 + [bad])


@pytest.mark.parametrize(("draws", "level"), [(0, 0.9), (10, 0.0), (10, 1.0)])
def test_bad_parameters_are_refused(draws: int, level: float) -> None:
    """draws < 1 or a level outside (0, 1) raise ValueError."""
    with pytest.raises(ValueError):
        paired_bootstrap([0.0] * 6, draws=draws, level=level)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=0.05, max_value=20.0), min_size=1, max_size=20))
def test_geometric_mean_is_exp_of_mean_log(ratios: list[float]) -> None:
    """The estimate is exp(mean(log ratio)), i.e. averaged in log space."""
    res = geometric_mean_ratio(ratios, draws=200)
    assert res.mean == pytest.approx(
        math.exp(statistics.fmean(math.log(r) for r in ratios)), rel=1e-9
    )


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(min_value=0.05, max_value=20.0), min_size=MIN_TASKS, max_size=20))
def test_inverse_ratios_give_reciprocal_interval(ratios: list[float]) -> None:
    """Swapping the arms (1/r) gives the reciprocal estimate and the reciprocal, flipped interval."""
    fwd = geometric_mean_ratio(ratios, draws=300)
    inv = geometric_mean_ratio([1 / r for r in ratios], draws=300)
    assert inv.mean == pytest.approx(1 / fwd.mean, rel=1e-9)  # type: ignore[operator]
    assert inv.low == pytest.approx(1 / fwd.high, rel=1e-9)  # type: ignore[operator]
    assert inv.high == pytest.approx(1 / fwd.low, rel=1e-9)  # type: ignore[operator]


def test_geometric_mean_of_equal_ratios_is_that_ratio() -> None:
    """Six tasks that each use twice the tokens give a ratio of 2 with a point interval."""
    res = geometric_mean_ratio([2.0] * 6)
    assert res.status == OK
    assert res.mean == pytest.approx(2.0)
    assert res.low == pytest.approx(2.0) and res.high == pytest.approx(2.0)


def test_geometric_mean_with_few_tasks_has_no_interval() -> None:
    """Fewer than six ratios give an estimate and too_few_tasks."""
    res = geometric_mean_ratio([1.0, 2.0, 4.0])
    assert res.status == TOO_FEW_TASKS
    assert res.mean == pytest.approx(2.0)
    assert res.low is None and res.high is None


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_geometric_mean_refuses_undefined_ratios(bad: float) -> None:
    """A zero, negative or non-finite ratio raises: the caller must exclude that task."""
    with pytest.raises(ValueError):
        geometric_mean_ratio([1.0] * 6 + [bad])
