"""The betting test for a bounded mean: a valid p without symmetry, its inverted interval, and its input checks."""

from __future__ import annotations

import random

import pytest

from pluginbench.stats._bounded import bounded_interval, bounded_p


def test_ties_do_not_rule_out_a_small_loss() -> None:
    """Six tied tasks give a wide interval around 0 (±47.8 pp at one-sided 5%), so neither a -5 pp margin nor a
    10 pp equivalence claim can pass on them; clear wins reject a -5 pp margin."""
    low, high = bounded_interval([0.0] * 6, 0.05) or (None, None)
    assert low == pytest.approx(-0.4777, abs=1e-3) and high == pytest.approx(0.4777, abs=1e-3)
    assert bounded_p([0.0] * 6, -0.05, "greater", 0.05) > 0.5
    assert bounded_p([1.0] * 6, -0.05, "greater", 0.05) <= 0.05
    assert bounded_p([-1.0] * 6, 0.05, "less", 0.05) <= 0.05


def test_p_is_the_interval_inverted_and_monotone() -> None:
    """The lower end is where the greater-test p crosses alpha, and p grows with the value tested."""
    xs = [1 / 3, 2 / 3, 0.0, 1 / 3, 1.0, 0.0, 1 / 3, 2 / 3, 1 / 3, 0.0, 1 / 3, 2 / 3]
    low, _ = bounded_interval(xs, 0.05) or (0.0, 0.0)
    assert bounded_p(xs, low - 1e-6, "greater", 0.05) <= 0.05 < bounded_p(xs, low + 1e-6, "greater", 0.05)
    ps = [bounded_p(xs, m / 10, "greater", 0.05) for m in range(-10, 10)]
    assert ps == sorted(ps)


def test_worst_case_null_keeps_its_level() -> None:
    """A mean exactly on the margin, carried by rare catastrophes (a task lost outright with probability 5%, else a
    tie): the one-sided 5% test passes it in none of 2,000 seeded runs of 30 tasks (the sign-flip test would pass
    every run without a catastrophe, 21% of them)."""
    rng = random.Random(7)
    hits = sum(bounded_p([-1.0 if rng.random() < 0.05 else 0.0 for _ in range(30)], -0.05, "greater", 0.05) <= 0.05
               for _ in range(2000))
    assert hits == 0


def test_values_outside_the_range_are_refused() -> None:
    """A value outside [low, high] is a ValueError naming the range, not a silent clip."""
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        bounded_p([1.5], 0.0, "greater", 0.05)
    assert bounded_p([], 0.0, "greater", 0.05) == 1.0 and bounded_interval([], 0.05) is None
