"""Wilson score intervals, the exact sign test, and the median.

Pure functions over plain numbers; no I/O, no randomness.
"""

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

#: The two-sided 95% normal quantile, Φ⁻¹(0.975).
Z_95 = 1.959963984540054


class Interval(NamedTuple):
    """A closed interval ``[low, high]``."""

    low: float
    high: float


def wilson_interval(k: int, n: int, z: float = Z_95) -> Interval | None:
    """The Wilson score interval for ``k`` successes in ``n`` trials.

    Returns ``None`` when ``n == 0`` (no trials: the rate is unknown, not 0). The
    interval always lies inside ``[0, 1]`` and contains ``k / n``; at ``k == 0`` its low
    end is exactly 0 and at ``k == n`` its high end is exactly 1.
    Raises ``ValueError`` for ``k`` outside ``0..n``, negative ``n`` or ``z <= 0``.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not (z > 0 and math.isfinite(z)):
        raise ValueError(f"z must be positive and finite, got {z}")
    if n == 0:
        return None
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    # Pin the ends that are exact in theory, so 0/n and n/n never report a
    # rounding-error bound like 1e-17 or 0.9999999999999999.
    low = 0.0 if k == 0 else max(0.0, min(p, centre - half))
    high = 1.0 if k == n else min(1.0, max(p, centre + half))
    return Interval(low, high)


def exact_sign_test(positives: int, negatives: int) -> float:
    """Two-sided exact sign test p-value against equal probability of each sign.

    Ties are excluded by the caller. ``p = min(1, 2 · P(X <= min(pos, neg)))`` with
    ``X ~ Binomial(pos + neg, 1/2)``, computed exactly in rationals. No non-tied
    observation (``0, 0``) gives ``1.0``. Raises ``ValueError`` on negative counts.
    """
    if positives < 0 or negatives < 0:
        raise ValueError(f"counts must be >= 0, got {positives}, {negatives}")
    n = positives + negatives
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(positives, negatives) + 1))
    p = Fraction(2 * tail, 2**n)
    return float(min(Fraction(1), p))


def median(values: Sequence[float]) -> float | None:
    """The median (mean of the two middle values for even counts); ``None`` when empty."""
    if not values:
        return None
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2.0


def newcombe_difference(k1: int, n1: int, k2: int, n2: int, z: float = Z_95) -> Interval | None:
    """Newcombe's hybrid score interval for the difference of two rates, ``k1/n1 − k2/n2``.

    Built from the two Wilson intervals (Newcombe 1998, method 10): the low end is
    ``d − √((p1 − l1)² + (u2 − p2)²)`` and the high end ``d + √((u1 − p1)² + (p2 − l2)²)``.
    ``None`` when either side has no trials.
    """
    w1, w2 = wilson_interval(k1, n1, z), wilson_interval(k2, n2, z)
    if w1 is None or w2 is None:
        return None
    p1, p2 = k1 / n1, k2 / n2
    d = p1 - p2
    low = d - math.sqrt((p1 - w1.low) ** 2 + (w2.high - p2) ** 2)
    high = d + math.sqrt((w1.high - p1) ** 2 + (p2 - w2.low) ** 2)
    return Interval(max(-1.0, low), min(1.0, high))
