"""Sequential evaluation: anytime-valid confidence sequences and the stopping decision. Pure.

A fixed-N interval is valid only at the one sample size chosen in advance; looking at it
after every task and stopping when it looks good inflates false positives. A *confidence
sequence* holds at every task count at once (with probability at least the level, the
true mean lies inside every interval of the sequence), so a run may look after each task
and stop whenever it is decided.

The boundary is the hedged betting confidence sequence of Waudby-Smith & Ramdas (2023,
"Estimating means of bounded random variables by betting", JRSS-B, Theorem 3) for
observations in [0, 1], with the defaults of the authors' own library
(``confseq.betting.hedged_cs``: predictable plug-in bets from the regularised running
variance, truncation 1/2, capital split evenly between the two directions, a grid of 1,001
candidate means, running intersection). That library does not install from PyPI here (its
C++ extension needs Boost, no wheel) and numpy is no runtime dependency, so the fold is
written out below in pure Python (:class:`BettingFold`, one update per task, so the
Supervisor's check after each task is cheap) and checked against values computed with the
authors' code (``tests/data/sequential/hedged_reference.json``). It replaces the
predictable plug-in empirical-Bernstein sequence of the same paper (Theorem 2), which is
valid too but much wider: in ``bench/bench_sequential.py`` it needed 170 tasks at +10 pp
(this one 114) and 75 at +20 pp (this one 42).

* pass-rate gate: the per-task pass-rate difference (treatment − comparator, each arm's
  own repeats) lies in [-1, 1]; it is mapped to [0, 1] and back.
* token gate: the per-task log token ratio, clipped to ±log(``ratio_bound``) so it is
  bounded (the clipped mean is the parameter; a task beyond the bound counts at it).

Every interval is the running intersection (still anytime-valid), so it only narrows.
Each endpoint is a one-sided bound at ``(1 − level) / 2``, as in the fixed-N report.

Decisions (:func:`gate_decision`), per treatment and gate, once at least ``min_tasks``
usable tasks are in: pass rate — ``success`` when the lower end is above 0, ``failure``
when the upper end is below 0, ``futility`` when the upper end is below the smallest
effect of interest (the treatment cannot be better by that much); tokens — ``success``
when the upper end of the ratio is below ``factor``, ``failure`` when the lower end is
above it. A gate once decided stays decided. The run is decided when every gate is.
"""

from __future__ import annotations

import bisect
import math
import random
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

import msgspec

from ._decide import alpha_of

#: The hedged capital CS (confseq ``hedged_cs`` defaults): candidate means on a grid of
#: ``GRID + 1`` points in [0, 1], the capital split evenly between betting up and down
#: (theta 1/2), each bet truncated at 1/2 of the largest bet that keeps the capital positive.
GRID = 1000
THETA = 0.5
TRUNCATION = 0.5
METHOD = "hedged betting confidence sequence (Waudby-Smith & Ramdas 2023)"
Decision = Literal["success", "failure", "futility"]
PASS_RATE, TOKENS = "pass_rate", "tokens"

_M = [i / GRID for i in range(GRID + 1)]
#: the largest up-bet at m (TRUNCATION / m) and down-bet (TRUNCATION / (1 - m)); inf at the ends
_CAP_UP = [TRUNCATION / m if m > 0 else math.inf for m in _M]
_CAP_DOWN = [TRUNCATION / (1.0 - m) if m < 1 else math.inf for m in _M]


class BettingFold:
    """The hedged betting confidence sequence after ``t`` observations in [0, 1], folded one
    observation at a time (:meth:`push` returns a new fold; a fold is never changed).

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

    K⁺ never increases with ``m`` and K⁻ never decreases (each factor is monotone in ``m``, the
    truncated bets too), so the set is an interval of the grid, and grid points outside the
    running intersection can never move it again: the fold keeps the capitals of the points
    inside only (about 1,000 at first, fewer as the interval narrows). Should the set ever lie
    wholly outside the running intersection (the authors' running intersection would cross
    itself, an event of probability below ``α``), the interval stays where it was.
    """

    __slots__ = ("alpha", "t", "_s_x", "_s_sq", "_sigma2", "_lo", "_hi", "_up", "_down")

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self.t = 0
        self._s_x = self._s_sq = 0.0
        self._sigma2 = 0.25
        #: the running intersection's first and last grid index, and the capitals between them
        self._lo, self._hi = 0, GRID
        self._up = [0.0] * (GRID + 1)
        self._down = [0.0] * (GRID + 1)

    @property
    def low(self) -> float:
        """The lower end of the interval (running intersection)."""
        return max(0.0, _M[self._lo] - 1.0 / GRID)

    @property
    def high(self) -> float:
        """The upper end of the interval (running intersection)."""
        return min(1.0, _M[self._hi] + 1.0 / GRID)

    def push(self, x: float) -> BettingFold:
        """The fold after one more observation ``x`` in [0, 1]."""
        t = self.t + 1
        limit = math.log(1.0 / (self.alpha * THETA))  # θ K ≤ 1/α  ⇔  log K ≤ log(1/(α θ))
        lam = math.sqrt(2.0 * limit / (t * math.log(1.0 + t) * self._sigma2))
        lo, hi = self._lo, self._hi
        log1p = math.log1p
        # up-bets are lam below m = TRUNCATION / lam and the cap above; down-bets the cap below
        # m = 1 − TRUNCATION / lam and lam above (both caps are monotone in m)
        k = min(max(bisect.bisect_left(_M, TRUNCATION / lam, lo, hi + 1), lo), hi + 1) - lo
        j = min(max(bisect.bisect_left(_M, 1.0 - TRUNCATION / lam, lo, hi + 1), lo), hi + 1) - lo
        cu, cd = self._up, self._down
        up = [c + log1p(lam * (x - m)) for c, m in zip(cu[:k], _M[lo:lo + k], strict=True)]
        up += [c + log1p(cap * (x - m)) for c, cap, m in zip(cu[k:], _CAP_UP[lo + k:hi + 1], _M[lo + k:hi + 1], strict=True)]
        down = [c + log1p(cap * (m - x)) for c, cap, m in zip(cd[:j], _CAP_DOWN[lo:lo + j], _M[lo:lo + j], strict=True)]
        down += [c + log1p(lam * (m - x)) for c, m in zip(cd[j:], _M[lo + j:hi + 1], strict=True)]
        out = BettingFold.__new__(BettingFold)
        out.alpha, out.t = self.alpha, t
        out._s_x = self._s_x + x
        mu = min((0.5 + out._s_x) / (t + 1), 1.0)
        out._s_sq = self._s_sq + (x - mu) ** 2
        out._sigma2 = (0.25 + out._s_sq) / (t + 1)
        n = hi - lo + 1
        first = next((i for i in range(n) if up[i] <= limit), None)
        last = next((i for i in range(n - 1, -1, -1) if down[i] <= limit), None)
        if first is None or last is None or first > last:  # empty inside the running intersection
            out._lo, out._hi, out._up, out._down = lo, hi, up, down
        else:
            out._lo, out._hi = lo + first, lo + last
            out._up, out._down = up[first:last + 1], down[first:last + 1]
        return out


#: folds already computed, by (alpha, observations): the Supervisor asks again after every
#: event, each time with at most one more task, so the fold resumes from the longest prefix
#: it has (a pure cache: the result is the same with or without it)
_FOLDS: dict[tuple[float, tuple[float, ...]], tuple[BettingFold, tuple[tuple[float, float], ...]]] = {}
_FOLDS_LOCK = threading.Lock()  # the dashboard may fold in a worker thread


def _folded(xs: tuple[float, ...], alpha: float) -> tuple[tuple[float, float], ...]:
    start = 0
    fold, seq = BettingFold(alpha), tuple[tuple[float, float], ...]()
    with _FOLDS_LOCK:
        for k in range(len(xs), max(-1, len(xs) - 8), -1):
            hit = _FOLDS.get((alpha, xs[:k]))
            if hit is not None:
                (fold, seq), start = hit, k
                break
    out = list(seq)
    for x in xs[start:]:
        fold = fold.push(x)
        out.append((fold.low, fold.high))
    if start < len(xs):
        with _FOLDS_LOCK:
            while len(_FOLDS) >= 64:  # the oldest first: a run's gates keep their latest prefixes
                del _FOLDS[next(iter(_FOLDS))]
            _FOLDS[(alpha, xs)] = (fold, tuple(out))
    return tuple(out)


def confidence_sequence(xs: Sequence[float], alpha: float) -> list[tuple[float, float]]:
    """The two-sided ``1 − alpha`` hedged betting confidence sequence for the mean of ``xs`` in
    [0, 1] (:class:`BettingFold`): ``(lower_t, upper_t)`` after each ``t``, running intersection,
    as ``confseq.betting.hedged_cs`` computes it with its defaults."""
    return list(_folded(tuple(float(x) for x in xs), alpha))


def bounded_sequence(values: Sequence[float], low: float, high: float, level: float) -> list[tuple[float, float]]:
    """The confidence sequence of the mean of ``values`` in [low, high] at two-sided ``level``
    (each endpoint one-sided at ``(1 − level) / 2``), mapped back to the range."""
    width = high - low
    xs = tuple(min(1.0, max(0.0, (v - low) / width)) for v in values)
    out: list[tuple[float, float]] = []
    for lo, hi in _folded(xs, 2 * alpha_of(level)):
        lo_v = low + width * lo
        out.append((lo_v, max(lo_v, low + width * hi)))
    return out


def _lazy_sequence(values: Sequence[float], low: float, high: float, level: float) -> Iterator[tuple[float, float]]:
    """:func:`bounded_sequence` one task at a time, uncached (a simulation stops at its decision)."""
    width = high - low
    fold = BettingFold(2 * alpha_of(level))
    for v in values:
        fold = fold.push(min(1.0, max(0.0, (v - low) / width)))
        lo_v = low + width * fold.low
        yield lo_v, max(lo_v, low + width * fold.high)


class StoppingRule(msgspec.Struct, frozen=True, kw_only=True):
    """What decides a sequential run (``comparison.stopping`` with the run's confidence level)."""

    level: float
    min_tasks: int
    max_tasks: int | None
    #: pass-rate fraction: futility when the sequence's upper end is below it
    smallest_effect: float
    #: the token gate: the ratio must be credibly below it; None: no token gate
    token_factor: float | None = None
    #: log token ratios are clipped to ±log(ratio_bound)
    ratio_bound: float = 4.0


class TaskValues(msgspec.Struct, frozen=True, kw_only=True):
    """One task whose arms × repeats are all complete: per treatment arm, its pass-rate
    difference and token ratio against the comparator (``None``: not usable, e.g. unknown)."""

    task: str
    pass_rate: dict[str, float | None]
    tokens: dict[str, float | None]


class Point(msgspec.Struct, frozen=True, kw_only=True):
    """The sequence after one more usable task: ``tasks`` usable so far, the mean, the interval."""

    task: str
    tasks: int
    estimate: float
    low: float
    high: float


class GateTrace(msgspec.Struct, frozen=True, kw_only=True):
    """One treatment's gate over the run: every point, the decision and the task count it came at."""

    arm: str
    metric: str
    #: the limits drawn with the interval: success above/below ``limit``, futility below ``futility``
    limit: float
    futility: float | None
    points: list[Point]
    decision: Decision | None
    decided_at: int | None
    #: the ``complete_tasks`` count (all complete tasks, usable or not) when it was decided
    decided_after: int | None


class SequentialState(msgspec.Struct, frozen=True, kw_only=True):
    """The whole sequential decision of a run: each gate's trace and whether (and when) the run
    was decided; ``decided_after`` counts complete tasks in completion order."""

    rule: StoppingRule
    complete_tasks: int
    gates: list[GateTrace]
    decided: bool
    decided_after: int | None
    at_max: bool
    method: str = METHOD


def sequential_method() -> str:
    """The boundary's name as the plan and report print it."""
    return METHOD


def gate_decision(metric: str, low: float, high: float, rule: StoppingRule) -> Decision | None:
    """The decision one interval supports (module docstring); ``None``: not yet. Pass-rate
    endpoints are differences; token endpoints are log ratios."""
    if metric == PASS_RATE:
        if low > 0:
            return "success"
        if high < 0:
            return "failure"
        if high < rule.smallest_effect:
            return "futility"
        return None
    limit = math.log(rule.token_factor or 1.0)
    if high < limit:
        return "success"
    if low > limit:
        return "failure"
    return None


def _trace(arm: str, metric: str, rows: Sequence[TaskValues], rule: StoppingRule, until_decided: bool) -> GateTrace:
    bound = math.log(rule.ratio_bound)
    used: list[tuple[str, int, float]] = []
    for i, row in enumerate(rows, start=1):
        v = (row.pass_rate if metric == PASS_RATE else row.tokens).get(arm)
        if v is None:
            continue
        used.append((row.task, i, v if metric == PASS_RATE else max(-bound, min(bound, math.log(v)))))
    lo_hi = (-1.0, 1.0) if metric == PASS_RATE else (-bound, bound)
    values = [v for _, _, v in used]
    seq = (_lazy_sequence(values, lo_hi[0], lo_hi[1], rule.level) if until_decided
           else bounded_sequence(values, lo_hi[0], lo_hi[1], rule.level))
    points: list[Point] = []
    decision: Decision | None = None
    at = after = None
    total = 0.0
    for n, ((task, i, v), (lo, hi)) in enumerate(zip(used, seq, strict=True), start=1):
        total += v
        est = total / n
        if metric == PASS_RATE:
            points.append(Point(task=task, tasks=n, estimate=est, low=lo, high=hi))
        else:
            points.append(Point(task=task, tasks=n, estimate=math.exp(est), low=math.exp(lo), high=math.exp(hi)))
        if decision is None and i >= rule.min_tasks:
            decision = gate_decision(metric, lo, hi, rule)
            if decision is not None:
                at, after = n, i
                if until_decided:
                    break
    limit = 0.0 if metric == PASS_RATE else (rule.token_factor or 1.0)
    return GateTrace(arm=arm, metric=metric, limit=limit,
                     futility=rule.smallest_effect if metric == PASS_RATE else None,
                     points=points, decision=decision, decided_at=at, decided_after=after)


def sequential_state(rule: StoppingRule, arms: Sequence[str], rows: Sequence[TaskValues], *,
                     until_decided: bool = False) -> SequentialState:
    """Every gate's trace over ``rows`` (complete tasks in completion order) and the run's
    decision: decided after the first complete task at which every gate of every treatment
    ``arms`` is decided (never before ``min_tasks``). ``until_decided`` (simulations): each
    gate's trace ends at its decision, the rest of ``rows`` is not folded; decisions are the same."""
    metrics = [PASS_RATE] + ([TOKENS] if rule.token_factor is not None else [])
    gates = [_trace(arm, m, rows, rule, until_decided) for arm in arms for m in metrics]
    decided = bool(gates) and all(g.decision is not None for g in gates)
    after = max(g.decided_after or 0 for g in gates) if decided else None
    at_max = rule.max_tasks is not None and len(rows) >= rule.max_tasks
    return SequentialState(rule=rule, complete_tasks=len(rows), gates=gates, decided=decided,
                           decided_after=after, at_max=at_max)


def task_order(task_ids: Sequence[str], seed: int, max_tasks: int | None) -> list[str]:
    """The declared pool in the run's seeded random order, cut at ``max_tasks``."""
    order = list(task_ids)
    random.Random(f"sequential:{seed}").shuffle(order)
    return order[:max_tasks] if max_tasks is not None else order


def to_builtins(state: SequentialState) -> dict[str, object]:
    """The state as plain data (results.json, status --json, the decision event)."""
    out: Mapping[str, object] = msgspec.to_builtins(state)
    return dict(out)
