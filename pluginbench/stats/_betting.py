"""The hedged betting confidence sequence, folded one observation at a time over a batch. Pure.

The boundary of sequential stopping (:mod:`._sequential`): Waudby-Smith & Ramdas (2023,
"Estimating means of bounded random variables by betting", JRSS-B, Theorem 3) for
observations in [0, 1], with the defaults of the authors' own library
(``confseq.betting.hedged_cs``: predictable plug-in bets from the regularised running
variance, truncation 1/2, capital split evenly between the two directions, a grid of 1,001
candidate means, running intersection), checked against values computed with the authors'
code (``tests/data/sequential/hedged_reference.json``).

One implementation serves the run and its plan: :class:`BatchFold` folds ``B`` independent
sequences at once (numpy arrays of ``B × 1,001`` log-capitals), the Supervisor's decision is
the batch of one (:class:`BettingFold`), and the plan's simulation (:mod:`._sequential_sim`)
and the benches fold a hundred or a thousand simulated runs in one batch through the very
same :meth:`BatchFold.push`. numpy's ``log1p`` may differ from the C library's in the last
bit on some CPUs; the interval's ends are grid points, so that could only move a decision if
a capital lay within about 1e-15 of the ``1/α`` line.
"""

from __future__ import annotations

import math
from typing import Any

#: The hedged capital CS (confseq ``hedged_cs`` defaults): candidate means on a grid of
#: ``GRID + 1`` points in [0, 1], the capital split evenly between betting up and down
#: (theta 1/2), each bet truncated at 1/2 of the largest bet that keeps the capital positive.
GRID = 1000
THETA = 0.5
TRUNCATION = 0.5

_GRIDS: dict[str, Any] = {}


def _np() -> Any:
    """numpy, loaded on the first fold rather than with the package (every command's startup)."""
    import numpy

    return numpy


def _index() -> Any:
    """The grid's indices 0 … GRID."""
    if not _GRIDS:
        _GRIDS["idx"] = _np().arange(GRID + 1)
    return _GRIDS["idx"]


class BatchFold:
    """``B`` hedged betting confidence sequences after ``t`` observations each (one per row),
    folded one observation per row at a time; :meth:`push` returns a new fold.

    For every candidate mean ``m`` of the grid it keeps the log-capital of a gambler betting
    that the mean is above ``m`` (K⁺) and one betting below (K⁻), each starting at 1 and
    multiplying by ``1 ± λ(x − m)`` per observation. The bet ``λ_t`` is predictable (from
    observations before ``x_t``): the predictable plug-in ``sqrt(2 log(1/(α θ)) /
    (σ̂²_{t−1} t log(1 + t)))`` with the regularised variance (prior 1/4, one pseudo-
    observation), truncated at ``1/2 · 1/m`` (up) and ``1/2 · 1/(1 − m)`` (down). ``m`` is in the
    set at ``t`` while ``max(θ K⁺, (1 − θ) K⁻) ≤ 1/α``: under the true mean the hedged capital is
    a nonnegative martingale, so by Ville's inequality it ever reaches ``1/α`` with probability at
    most ``α``. The interval is the set's smallest and largest grid points widened by one grid
    step, and the running intersection over ``t`` (``confseq.betting.hedged_cs``).

    K⁺ never increases with ``m`` and K⁻ never decreases, so the set is an interval of the grid;
    only the points inside the running intersection ``[lo, hi]`` are ever consulted again, so
    each row keeps the capitals of its window only (1,001 at first, fewer as it narrows). Should the set ever lie wholly
    outside the running intersection (the authors' running intersection would cross itself,
    an event of probability below ``α``), the interval stays where it was.
    """

    __slots__ = ("alpha", "t", "_s_x", "_s_sq", "_sigma2", "lo", "hi", "_base", "_up", "_down", "_cols")

    def __init__(self, alpha: float, rows: int = 1) -> None:
        np = _np()
        self.alpha = alpha
        self.t = 0
        self._s_x = np.zeros(rows)
        self._s_sq = np.zeros(rows)
        self._sigma2 = np.full(rows, 0.25)
        #: each row's running intersection: first and last grid index
        self.lo = np.zeros(rows, dtype=np.int64)
        self.hi = np.full(rows, GRID, dtype=np.int64)
        #: log-capitals: column j of a row is grid index base + j (columns outside [lo, hi] unused;
        #: the columns are cut to the window when it has narrowed by a quarter)
        self._base = np.zeros(rows, dtype=np.int64)
        self._up = np.zeros((rows, GRID + 1))
        self._down = np.zeros((rows, GRID + 1))
        self._cols: tuple[Any, Any, Any] | None = None

    @property
    def rows(self) -> int:
        """How many sequences the batch folds."""
        return int(self.lo.shape[0])

    def lows(self) -> Any:
        """Each row's lower end of the interval (running intersection), an array."""
        np = _np()
        return np.maximum(0.0, self.lo / GRID - 1.0 / GRID)

    def highs(self) -> Any:
        """Each row's upper end of the interval (running intersection), an array."""
        np = _np()
        return np.minimum(1.0, self.hi / GRID + 1.0 / GRID)

    def select(self, keep: Any) -> BatchFold:
        """The fold of the rows ``keep`` (a boolean mask or index array) only."""
        out = BatchFold.__new__(BatchFold)
        out.alpha, out.t = self.alpha, self.t
        out._s_x, out._s_sq, out._sigma2 = self._s_x[keep], self._s_sq[keep], self._sigma2[keep]
        out.lo, out.hi, out._base = self.lo[keep], self.hi[keep], self._base[keep]
        out._up, out._down = self._up[keep], self._down[keep]
        out._cols = None if self._cols is None else (self._cols[0][keep], self._cols[1][keep], self._cols[2][keep])
        return out

    def _columns(self) -> tuple[Any, Any, Any]:
        """Each column's candidate mean m (the grid's i / GRID, exactly) and its up- and down-bet
        caps TRUNCATION / m and TRUNCATION / (1 − m) (infinite at m = 0 and m = 1)."""
        if self._cols is None:
            np = _np()
            m = np.minimum(self._base[:, None] + _index()[:self._up.shape[1]], GRID) / GRID
            with np.errstate(divide="ignore"):
                self._cols = (m, TRUNCATION / m, TRUNCATION / (1.0 - m))
        return self._cols

    def push(self, x: Any) -> BatchFold:
        """The fold after one more observation per row, ``x`` (``B`` values in [0, 1])."""
        np = _np()
        xs = np.asarray(x, dtype=np.float64).reshape(-1)
        idx = _index()
        t = self.t + 1
        limit = math.log(1.0 / (self.alpha * THETA))  # θ K ≤ 1/α  ⇔  log K ≤ log(1/(α θ))
        lam = np.sqrt(2.0 * limit / (t * math.log(1.0 + t) * self._sigma2))[:, None]
        width = self._up.shape[1]
        m, cap_up, cap_down = self._columns()
        # the plug-in bet truncated at TRUNCATION / m (up) and TRUNCATION / (1 − m) (down), as
        # confseq's betting_mart truncates it
        d = xs[:, None] - m
        up = self._up + np.log1p(np.minimum(lam, cap_up) * d)
        down = self._down + np.log1p(np.minimum(lam, cap_down) * -d)
        out = BatchFold.__new__(BatchFold)
        out.alpha, out.t = self.alpha, t
        out._s_x = self._s_x + xs
        mu = np.minimum((0.5 + out._s_x) / (t + 1), 1.0)
        out._s_sq = self._s_sq + (xs - mu) ** 2
        out._sigma2 = (0.25 + out._s_sq) / (t + 1)
        # K⁺ never increases with m and K⁻ never decreases: the candidates K⁺ keeps are the columns
        # from the first with K⁺ ≤ 1/(αθ), the ones K⁻ keeps those up to the last with K⁻ ≤ 1/(αθ)
        ok_up = up <= limit
        ok_down = down <= limit
        first = np.maximum(np.where(ok_up.any(axis=1), np.argmax(ok_up, axis=1), width), self.lo - self._base)
        last = np.minimum(np.where(ok_down.any(axis=1), width - 1 - np.argmax(ok_down[:, ::-1], axis=1), -1),
                          self.hi - self._base)
        move = first <= last
        out.lo = np.where(move, self._base + first, self.lo)
        out.hi = np.where(move, self._base + last, self.hi)
        span = int((out.hi - out.lo).max()) + 1
        if span * 4 <= width * 3:  # cut the columns to the windows, each row from its new first index
            cols = np.minimum((out.lo - self._base)[:, None] + idx[:span], width - 1)
            out._base = out.lo.copy()
            out._up = np.take_along_axis(up, cols, axis=1)
            out._down = np.take_along_axis(down, cols, axis=1)
            out._cols = None
        else:
            out._base, out._up, out._down, out._cols = self._base, up, down, self._cols
        return out


class BettingFold:
    """One hedged betting confidence sequence (:class:`BatchFold` of one row), as the
    Supervisor folds a gate one task at a time (:meth:`push` returns a new fold)."""

    __slots__ = ("_batch",)

    def __init__(self, alpha: float, _batch: BatchFold | None = None) -> None:
        self._batch = _batch if _batch is not None else BatchFold(alpha, 1)

    @property
    def alpha(self) -> float:
        """The two-sided error of the sequence."""
        return self._batch.alpha

    @property
    def t(self) -> int:
        """Observations folded so far."""
        return self._batch.t

    @property
    def low(self) -> float:
        """The lower end of the interval (running intersection)."""
        return max(0.0, int(self._batch.lo[0]) / GRID - 1.0 / GRID)

    @property
    def high(self) -> float:
        """The upper end of the interval (running intersection)."""
        return min(1.0, int(self._batch.hi[0]) / GRID + 1.0 / GRID)

    def push(self, x: float) -> BettingFold:
        """The fold after one more observation ``x`` in [0, 1]."""
        return BettingFold(self.alpha, self._batch.push([x]))
