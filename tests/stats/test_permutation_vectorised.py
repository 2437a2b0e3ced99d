"""The vectorised Monte Carlo sign-flip test gives the very p-values of the scalar loop it replaced."""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence

import pytest

from pluginbench.stats import _decide, _permutation
from pluginbench.stats._permutation import _exact_sums, sign_flip_test


def _reference(values: Sequence[float], *, shift: float = 0.0, alternative: str = "greater",
               draws: int = 10_000, seed: int = 0, exact_max: int = 20) -> float:
    """The test as it was before numpy: per 8 tasks a ``math.fsum`` table, a Python loop per draw."""
    xs = [float(v) - shift for v in values]
    n = len(xs)
    mags = [abs(v) for v in xs]
    observed = math.fsum(xs)
    tol = 1e-9 * max(1.0, math.fsum(mags))
    if n <= exact_max:
        def signed(vs: Sequence[float]) -> list[float]:
            sums = [0.0]
            for v in vs:
                sums = [s + v for s in sums] + [s - v for s in sums]
            return sums
        left, right = signed(mags[: n // 2]), sorted(signed(mags[n // 2 :]))
        m, hits = len(right), 0
        for s in left:
            if alternative == "greater":
                hits += m - bisect.bisect_left(right, observed - tol - s)
            elif alternative == "less":
                hits += bisect.bisect_right(right, observed + tol - s)
            else:
                a = abs(observed) - tol
                if a <= 0:
                    return 1.0
                hits += m - bisect.bisect_left(right, a - s) + bisect.bisect_right(right, -a - s)
        return min(1.0, hits / (len(left) * m))
    tables = [[math.fsum(v if byte >> k & 1 else -v for k, v in enumerate(mags[i : i + 8])) for byte in range(256)]
              for i in range(0, n, 8)]
    rand = random.Random(seed)
    hits = 0
    for _ in range(draws):
        t = 0.0
        for table, byte in zip(tables, rand.getrandbits(n).to_bytes((n + 7) // 8, "little"), strict=False):
            t += table[byte]
        if alternative == "greater":
            hits += t >= observed - tol
        elif alternative == "less":
            hits += t <= observed + tol
        else:
            hits += abs(t) >= abs(observed) - tol
    return min(1.0, (1 + hits) / (1 + draws))


def _values(rng: random.Random, n: int) -> list[float]:
    kind = rng.randrange(5)
    if kind == 0:  # pass-rate differences on a grid of repeats, many ties and zeros
        reps = rng.choice([1, 3, 5, 159])
        return [rng.randint(-reps, reps) / reps for _ in range(n)]
    if kind == 1:  # log token ratios
        return [math.log(rng.lognormvariate(0.0, 0.5)) for _ in range(n)]
    if kind == 2:  # magnitudes far apart (exponents spread over hundreds of binary places)
        return [rng.choice([-1, 1]) * rng.random() * 10.0 ** rng.randint(-150, 150) for _ in range(n)]
    if kind == 3:  # exact halfway cases of float addition: 1 and 2^-53, 2^-52 (round-half-even)
        return [rng.choice([1.0, 2.0**-53, 3 * 2.0**-53, 2.0**-52, -1.0, 0.0]) for _ in range(n)]
    return [rng.gauss(0.05, 0.3) for _ in range(n)]


def test_exact_sums_equal_fsum_on_every_pattern() -> None:
    """Each of the 256 table entries equals ``math.fsum`` of the signed chunk, bit for bit."""
    rng = random.Random(7)
    for _ in range(300):
        chunk = [abs(v) for v in _values(rng, rng.randint(1, 8))]
        want = [math.fsum(v if byte >> k & 1 else -v for k, v in enumerate(chunk)) for byte in range(256)]
        got = _exact_sums(chunk)
        assert [g.hex() for g in got] == [(w + 0.0).hex() for w in want], chunk  # + 0.0: -0.0 is 0.0


def test_monte_carlo_p_equals_the_scalar_reference() -> None:
    """Over many random inputs, sizes, shifts and all three alternatives the p-value is the reference's exactly."""
    rng = random.Random(11)
    for case in range(60):
        n = rng.choice([21, 23, 37, 64, 65, 150, 300])
        xs = _values(rng, n)
        shift = rng.choice([0.0, 0.05, -0.1, xs[0]])
        alternative = ("greater", "less", "two-sided")[case % 3]
        draws = rng.choice([1, 97, 2_000])
        got = sign_flip_test(xs, shift=shift, alternative=alternative, draws=draws).p  # type: ignore[arg-type]
        assert got == _reference(xs, shift=shift, alternative=alternative, draws=draws), (n, shift, alternative)


def test_interval_bounds_equal_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Monte Carlo interval (its bisection asks the test ~50 times) is the same doubles with the reference test."""
    rng = random.Random(5)
    diffs = [rng.randint(-4, 4) / 4 for _ in range(21)]
    got = _decide.mean_interval(diffs)

    def reference(values: Sequence[float], **kw: object) -> _permutation.SignFlip:
        return _permutation.SignFlip(_reference(values, **kw), False, 10_000)  # type: ignore[arg-type]

    monkeypatch.setattr(_permutation, "sign_flip_test", reference)
    assert got == _decide.mean_interval(diffs)
    assert got.status == "ok" and not got.exact
