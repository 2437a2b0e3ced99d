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
C++ extension needs Boost, no wheel), so the fold is written out in :mod:`._betting` (numpy,
one update per task, so the Supervisor's check after each task is cheap; the plan's
simulation folds a batch of runs through the same code) and checked against values
computed with the authors' code (``tests/data/sequential/hedged_reference.json``). It
replaces the predictable plug-in empirical-Bernstein sequence of the same paper (Theorem
2), which is valid too but much wider: in ``bench/bench_sequential.py`` it needed 170
tasks at +10 pp (this one 114) and 75 at +20 pp (this one 42).

* pass-rate gate: the per-task pass-rate difference (treatment − comparator, each arm's
  own repeats) lies in [-1, 1]; it is mapped to [0, 1] and back.
* token gate: the per-task log token ratio, clipped to ±log(``ratio_bound``) so it is
  bounded (the clipped mean is the parameter; a task beyond the bound counts at it).
* cost gate: the same for the per-task ratio of mean dollars per attempt, priced with the
  price row frozen into the run at creation (``run.created.stopping.price``).

A task whose value is unknown for a gate (unknown correctness, usage or dollars) adds no
point to that gate's sequence (it is counted in ``left_out``, never as 0).

Multiplicity: with ``multiplicity: bonferroni`` the run's error ``1 − level`` is split
evenly over every treatment × gated metric (:func:`family_size`), so with probability at
least ``level`` every sequence of the run covers its true value at every task at once; a
false success or failure anywhere in the family is then at most ``1 − level``
(``bench/bench_sequential.py`` measures it with 1 to 3 identical treatments). Every
interval is the running intersection (still anytime-valid), so it only narrows. Each
endpoint is a one-sided bound at half of its gate's error.

Decisions (:func:`gate_decision`), per treatment and gate, once at least ``min_tasks``
usable tasks are in: pass rate — ``success`` when the lower end is above 0, ``failure``
when the upper end is below 0, ``futility`` when the upper end is below the smallest
effect of interest (the treatment cannot be better by that much); tokens and cost —
``success`` when the upper end of the ratio is below its factor, ``failure`` when the lower
end is above it. A gate once decided stays decided. The run is decided when every gate is.
"""

import math
import random
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

import msgspec

from ._betting import BettingFold
from ._decide import alpha_of

METHOD = "hedged betting confidence sequence (Waudby-Smith & Ramdas 2023)"
Decision = Literal["success", "failure", "futility"]
PASS_RATE, TOKENS, COST = "pass_rate", "tokens", "cost"
#: how the run's error is shared among its gates: ``bonferroni`` (every run made since the
#: setting existed) or ``none`` (runs made before: each gate at the run's level)
Multiplicity = Literal["bonferroni", "none"]


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
    return _bounded(values, low, high, 2 * alpha_of(level))


def _bounded(values: Sequence[float], low: float, high: float, alpha: float) -> list[tuple[float, float]]:
    width = high - low
    xs = tuple(min(1.0, max(0.0, (v - low) / width)) for v in values)
    out: list[tuple[float, float]] = []
    for lo, hi in _folded(xs, alpha):
        lo_v = low + width * lo
        out.append((lo_v, max(lo_v, low + width * hi)))
    return out


def _lazy_sequence(values: Sequence[float], low: float, high: float, alpha: float) -> Iterator[tuple[float, float]]:
    """:func:`_bounded` one task at a time, uncached (a simulation stops at its decision)."""
    width = high - low
    fold = BettingFold(alpha)
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
    #: log token (and dollar) ratios are clipped to ±log(ratio_bound)
    ratio_bound: float = 4.0
    #: the cost gate: the dollars-per-attempt ratio must be credibly below it; None: no cost gate
    cost_factor: float | None = None
    #: how the run's error 1 − level is shared among its gates (:func:`family_size`)
    multiplicity: Multiplicity = "bonferroni"


class TaskValues(msgspec.Struct, frozen=True, kw_only=True):
    """One task whose arms × repeats are all complete: per treatment arm, its pass-rate
    difference, token ratio and dollars-per-attempt ratio against the comparator (``None``:
    not usable, e.g. unknown usage; never counted as 0)."""

    task: str
    pass_rate: dict[str, float | None]
    tokens: dict[str, float | None]
    cost: dict[str, float | None] = {}


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
    #: this gate's own two-sided level (the run's level with its error split by :func:`family_size`)
    level: float = 0.0
    #: complete tasks this gate could not use (unknown correctness, usage or dollars): never counted as 0
    left_out: int = 0


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
    #: how many sequences share the run's error (treatments × gated metrics with ``bonferroni``, else 1)
    family: int = 1


def sequential_method() -> str:
    """The boundary's name as the plan and report print it."""
    return METHOD


def gate_metrics(rule: StoppingRule) -> list[str]:
    """The gated metrics of every treatment: pass rate, then tokens and cost when configured."""
    return ([PASS_RATE] + ([TOKENS] if rule.token_factor is not None else [])
            + ([COST] if rule.cost_factor is not None else []))


def family_size(rule: StoppingRule, treatments: int) -> int:
    """How many sequences share the run's error ``1 − level``: every treatment × gated metric
    with ``bonferroni`` (so the whole family holds at once at the run's level: by the union
    bound, the chance that any of its sequences ever misses its true value is at most the sum
    of their errors, and each sequence is anytime-valid on its own), 1 with ``none``."""
    if rule.multiplicity == "none":
        return 1
    return max(1, treatments) * len(gate_metrics(rule))


def gate_alpha(rule: StoppingRule, treatments: int) -> float:
    """Each sequence's two-sided error: the run's ``1 − level`` split over :func:`family_size`
    (each endpoint one-sided at half of it)."""
    return 2 * alpha_of(rule.level) / family_size(rule, treatments)


def _factor(metric: str, rule: StoppingRule) -> float:
    return (rule.token_factor if metric == TOKENS else rule.cost_factor) or 1.0


def gate_decision(metric: str, low: float, high: float, rule: StoppingRule) -> Decision | None:
    """The decision one interval supports (module docstring); ``None``: not yet. Pass-rate
    endpoints are differences; token and cost endpoints are log ratios."""
    if metric == PASS_RATE:
        if low > 0:
            return "success"
        if high < 0:
            return "failure"
        if high < rule.smallest_effect:
            return "futility"
        return None
    limit = math.log(_factor(metric, rule))
    if high < limit:
        return "success"
    if low > limit:
        return "failure"
    return None


def _values_of(row: TaskValues, metric: str) -> Mapping[str, float | None]:
    return row.pass_rate if metric == PASS_RATE else row.tokens if metric == TOKENS else row.cost


def _trace(arm: str, metric: str, rows: Sequence[TaskValues], rule: StoppingRule, alpha: float,
           until_decided: bool) -> GateTrace:
    bound = math.log(rule.ratio_bound)
    used: list[tuple[str, int, float]] = []
    for i, row in enumerate(rows, start=1):
        v = _values_of(row, metric).get(arm)
        if v is None:
            continue
        used.append((row.task, i, v if metric == PASS_RATE else max(-bound, min(bound, math.log(v)))))
    lo_hi = (-1.0, 1.0) if metric == PASS_RATE else (-bound, bound)
    values = [v for _, _, v in used]
    seq = (_lazy_sequence(values, lo_hi[0], lo_hi[1], alpha) if until_decided
           else _bounded(values, lo_hi[0], lo_hi[1], alpha))
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
    limit = 0.0 if metric == PASS_RATE else _factor(metric, rule)
    return GateTrace(arm=arm, metric=metric, limit=limit,
                     futility=rule.smallest_effect if metric == PASS_RATE else None,
                     points=points, decision=decision, decided_at=at, decided_after=after,
                     level=round(1.0 - alpha, 12), left_out=len(rows) - len(used))


def sequential_state(rule: StoppingRule, arms: Sequence[str], rows: Sequence[TaskValues], *,
                     until_decided: bool = False) -> SequentialState:
    """Every gate's trace over ``rows`` (complete tasks in completion order) and the run's
    decision: decided after the first complete task at which every gate of every treatment
    ``arms`` is decided (never before ``min_tasks``). Each gate's sequence holds at
    :func:`gate_alpha` (the run's error split over the family), so all of them hold at once
    at the run's level. ``until_decided`` (simulations): each gate's trace ends at its
    decision, the rest of ``rows`` is not folded; decisions are the same."""
    metrics = gate_metrics(rule)
    alpha = gate_alpha(rule, len(arms))
    gates = [_trace(arm, m, rows, rule, alpha, until_decided) for arm in arms for m in metrics]
    decided = bool(gates) and all(g.decision is not None for g in gates)
    after = max(g.decided_after or 0 for g in gates) if decided else None
    at_max = rule.max_tasks is not None and len(rows) >= rule.max_tasks
    return SequentialState(rule=rule, complete_tasks=len(rows), gates=gates, decided=decided,
                           decided_after=after, at_max=at_max, family=family_size(rule, len(arms)))


def task_order(task_ids: Sequence[str], seed: int, max_tasks: int | None) -> list[str]:
    """The declared pool in the run's seeded random order, cut at ``max_tasks``."""
    order = list(task_ids)
    random.Random(f"sequential:{seed}").shuffle(order)
    return order[:max_tasks] if max_tasks is not None else order


def to_builtins(state: SequentialState) -> dict[str, object]:
    """The state as plain data (results.json, status --json, the decision event)."""
    out: Mapping[str, object] = msgspec.to_builtins(state)
    return dict(out)
