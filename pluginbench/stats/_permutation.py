"""The sign-flip permutation test on task-level paired differences, and its inverted interval.

Contract:

* Each task contributes one value ``x`` (a pass-rate difference, or a log token ratio).
  For a hypothesised centre ``m`` the statistic is ``T = Σ (x − m)``; under the null the
  signs of ``x − m`` are exchangeable (true when the two arms are exchangeable within a
  task), so ``T`` is compared with every ``Σ ±|x − m|``.
* Up to :data:`EXACT_MAX` tasks every one of the ``2ⁿ`` sign patterns is counted (meet in
  the middle: the subset sums of each half, one sorted and searched), so the p-value is
  exact. Above, :data:`DRAWS` sign patterns are drawn from ``random.Random(seed)`` (the
  Mersenne Twister stream of an integer seed is stable across Python versions) and
  ``p = (1 + hits) / (1 + draws)``, which keeps the test valid (never below its level).
  Each draw's sum is its 8-task chunks' table entries (each entry the correctly rounded
  signed sum of its chunk, as ``math.fsum`` gives it) added left to right from 0.0; numpy
  does those additions for all draws at once, the same doubles a scalar loop gets, so the
  p-value is the one the pure-Python loop gave (tests/stats/test_permutation_vectorised.py).
* Zeros (``x == m``) contribute 0 under either sign, so they neither help nor hurt; a
  pattern whose sum equals ``T`` (to a relative 1e-9, floating point) counts as a hit.
* :func:`lower_bound` / :func:`upper_bound` invert the one-sided test: the lower bound is
  the largest ``m`` the ``greater`` test still rejects at ``alpha``, found by bisection, so
  a gate "lower bound ≥ margin" and "p(margin) ≤ alpha" say the same thing.
"""

import bisect
import functools
import math
import random
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from ._bootstrap import DRAWS as DRAWS  # one copy (stats._bootstrap), re-exported
from ._bootstrap import SEED as SEED

EXACT_MAX = 20
_REL_TOL = 1e-9

Alternative = Literal["greater", "less", "two-sided"]


class SignFlip(NamedTuple):
    """One test: its p-value, whether it was exact, and how many patterns it weighed."""

    p: float
    exact: bool
    patterns: int


def _signed_sums(values: Sequence[float]) -> list[float]:
    sums = [0.0]
    for v in values:
        sums = [s + v for s in sums] + [s - v for s in sums]
    return sums


@functools.lru_cache(maxsize=16)
def _patterns(n: int, draws: int, seed: int) -> Any:
    """The drawn sign patterns for ``n`` tasks: a read-only ``draws × ⌈n/8⌉`` uint8 array, row
    ``d`` the little-endian bytes of the ``d``-th ``random.Random(seed).getrandbits(n)``."""
    import numpy as np  # lazily: only a Monte Carlo test needs it

    rand = random.Random(seed)
    width = (n + 7) // 8
    data = b"".join(rand.getrandbits(n).to_bytes(width, "little") for _ in range(draws))
    out = np.frombuffer(data, dtype=np.uint8).reshape(draws, width)
    out.flags.writeable = False
    return out


def _exact_sums(chunk: Sequence[float]) -> list[float]:
    """The signed sum of ``chunk`` (at most 8 values) for each of the 256 bit patterns (bit
    ``k`` set → ``+chunk[k]``, clear → ``−chunk[k]``; bits past the chunk ignored), each
    correctly rounded: the value ``math.fsum`` gives, from exact integer sums (a finite
    double is ``m·2^e`` with an integer ``m``) and one correctly rounded conversion each."""
    parts = [math.frexp(v) for v in chunk]
    scale = min((e - 53 for m, e in parts if m), default=0)
    ints = [int(m * 2**53) << (e - 53 - scale) if m else 0 for m, e in parts]
    sums = [0]
    for i in ints:
        sums = [s - i for s in sums] + [s + i for s in sums]
    sums *= 256 // len(sums)
    if scale >= 0:
        return [float(s << scale) for s in sums]
    div = 1 << -scale
    return [s / div for s in sums]  # int / int is correctly rounded in CPython


def sign_flip_test(
    values: Sequence[float],
    *,
    shift: float = 0.0,
    alternative: Alternative = "greater",
    draws: int = DRAWS,
    seed: int = SEED,
    exact_max: int = EXACT_MAX,
) -> SignFlip:
    """The sign-flip test of "the values are centred on ``shift``" against ``alternative``.

    ``greater``: the centre is above ``shift``; ``less``: below; ``two-sided``: either.
    No values give ``p = 1``. Raises ``ValueError`` on a non-finite value or ``draws < 1``.
    """
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    xs = [float(v) - shift for v in values]
    for v in xs:
        if not math.isfinite(v):
            raise ValueError(f"values must be finite, got {v!r}")
    n = len(xs)
    if n == 0:
        return SignFlip(1.0, True, 1)
    mags = [abs(v) for v in xs]
    observed = math.fsum(xs)
    tol = _REL_TOL * max(1.0, math.fsum(mags))
    if n <= exact_max:
        half = n // 2
        left = _signed_sums(mags[:half])
        right = sorted(_signed_sums(mags[half:]))
        m = len(right)
        hits = 0
        if alternative == "greater":
            for s in left:
                hits += m - bisect.bisect_left(right, observed - tol - s)
        elif alternative == "less":
            for s in left:
                hits += bisect.bisect_right(right, observed + tol - s)
        else:
            a = abs(observed) - tol
            if a <= 0:  # both tails meet: every pattern is a hit
                return SignFlip(1.0, True, len(left) * m)
            for s in left:
                hits += m - bisect.bisect_left(right, a - s) + bisect.bisect_right(right, -a - s)
        total = len(left) * m
        return SignFlip(min(1.0, hits / total), True, total)
    import numpy as np  # lazily: only a Monte Carlo test needs it

    bytes_ = _patterns(n, draws, seed)
    # Each draw's sum adds its chunks' table entries left to right from 0.0, one float
    # addition at a time, as a scalar loop would: the same doubles, so the same hits.
    t = np.zeros(draws)
    for col, start in enumerate(range(0, n, 8)):
        t += np.asarray(_exact_sums(mags[start : start + 8]))[bytes_[:, col]]
    if alternative == "greater":
        hits = int(np.count_nonzero(t >= observed - tol))
    elif alternative == "less":
        hits = int(np.count_nonzero(t <= observed + tol))
    else:
        hits = int(np.count_nonzero(np.abs(t) >= abs(observed) - tol))
    return SignFlip(min(1.0, (1 + hits) / (1 + draws)), False, draws)


def _bisect_bound(values: Sequence[float], alpha: float, alternative: Alternative, **kw: int) -> float | None:
    xs = [float(v) for v in values]
    if not xs:
        return None
    lo, hi = min(xs), max(xs)

    def rejects(m: float) -> bool:
        return sign_flip_test(xs, shift=m, alternative=alternative, **kw).p <= alpha

    # Just outside the data every sign is the same: the smallest p the test can give.
    width = max(1.0, hi - lo)
    edge = lo - width if alternative == "greater" else hi + width
    if not rejects(edge):
        return None
    if lo == hi:
        return lo
    # greater: rejects(m) for m below the bound; less: for m above it.
    a, b = lo, hi
    tol = 1e-7 * max(1.0, hi - lo)
    while b - a > tol:
        mid = (a + b) / 2
        if rejects(mid) == (alternative == "greater"):
            a = mid
        else:
            b = mid
    return a if alternative == "greater" else b


def lower_bound(values: Sequence[float], alpha: float, *, draws: int = DRAWS, seed: int = SEED,
                exact_max: int = EXACT_MAX) -> float | None:
    """The one-sided ``1 − alpha`` lower confidence bound of the centre (test inversion).

    ``None`` when even the most extreme sign pattern cannot reach ``alpha`` (too few tasks:
    fewer than ``log2(1/alpha)``) or there are no values.
    """
    return _bisect_bound(values, alpha, "greater", draws=draws, seed=seed, exact_max=exact_max)


def upper_bound(values: Sequence[float], alpha: float, *, draws: int = DRAWS, seed: int = SEED,
                exact_max: int = EXACT_MAX) -> float | None:
    """The one-sided ``1 − alpha`` upper confidence bound of the centre; see :func:`lower_bound`."""
    return _bisect_bound(values, alpha, "less", draws=draws, seed=seed, exact_max=exact_max)


def min_tasks(alpha: float) -> int:
    """The fewest tasks whose most extreme sign pattern reaches ``alpha`` (``2⁻ⁿ ≤ alpha``)."""
    return max(1, math.ceil(math.log2(1.0 / alpha) - 1e-12))
