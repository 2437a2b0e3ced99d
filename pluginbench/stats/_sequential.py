"""Sequential evaluation: anytime-valid confidence sequences and the stopping decision. Pure.

A fixed-N interval is valid only at the one sample size chosen in advance; looking at it
after every task and stopping when it looks good inflates false positives. A *confidence
sequence* holds at every task count at once (with probability at least the level, the
true mean lies inside every interval of the sequence), so a run may look after each task
and stop whenever it is decided.

The boundary is the predictable plug-in empirical-Bernstein confidence sequence of
Waudby-Smith & Ramdas (2023, "Estimating means of bounded random variables by betting",
JRSS-B, Theorem 2) for observations in [0, 1], in the form of the authors' own library
(``confseq.predmix.predmix_empbern_cs``, truncation 1/2, prior mean 1/2 and variance 1/4
with one pseudo-observation). That library does not install from PyPI here (its C++
extension needs Boost, no wheel), and ``expectation``'s current releases need Python
3.12, so the closed form is written out below (about 30 lines) and checked against values
computed with the authors' code (``tests/data/sequential/confseq_reference.json``).

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

import math
import random
from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

from ._decide import alpha_of

#: The largest bet (the library's default truncation for the empirical-Bernstein CS).
TRUNCATION = 0.5
METHOD = "predictable plug-in empirical-Bernstein confidence sequence (Waudby-Smith & Ramdas 2023)"
Decision = Literal["success", "failure", "futility"]
PASS_RATE, TOKENS = "pass_rate", "tokens"


def _lower_cs(xs: Sequence[float], alpha: float, tune_n: int | None = None) -> list[float]:
    """One-sided lower confidence sequence for the mean of ``xs`` in [0, 1] at error ``alpha``
    (``confseq.predmix.predmix_empbern_lower_cs``, not intersected). ``tune_n`` (the library's
    ``fixed_n``) sizes every bet for that many observations instead of shrinking it like
    1/sqrt(t log t): still anytime-valid (the bets stay predictable), tightest near ``tune_n``."""
    out: list[float] = []
    log_a = math.log(1.0 / alpha)
    s_x = s_lam = s_lam_x = s_vpsi = s_sq = 0.0
    sigma2_prev = 0.25
    mean_prev = 0.0  # the unregularized running mean before x_t (0 before the first)
    for t, x in enumerate(xs, start=1):
        scale = tune_n if tune_n is not None else t * math.log(1.0 + t)
        lam = min(TRUNCATION, math.sqrt(2.0 * log_a / (scale * sigma2_prev)))
        psi = -math.log(1.0 - lam) - lam
        v = (x - mean_prev) ** 2
        s_x += x
        s_lam += lam
        s_lam_x += lam * x
        s_vpsi += v * psi
        out.append(min(s_lam_x / s_lam - (log_a + s_vpsi) / s_lam, 1.0))
        mu_t = min((0.5 + s_x) / (t + 1), 1.0)
        s_sq += (x - mu_t) ** 2
        sigma2_prev = (0.25 + s_sq) / (t + 1)
        mean_prev = s_x / t
    return out


def confidence_sequence(xs: Sequence[float], alpha: float, tune_n: int | None = None) -> list[tuple[float, float]]:
    """Two-sided ``1 − alpha`` confidence sequence for the mean of ``xs`` in [0, 1] (each side
    at ``alpha / 2``), as the library computes it: ``(lower_t, upper_t)`` after each ``t``,
    not intersected and not clipped."""
    lo = _lower_cs(xs, alpha / 2, tune_n)
    hi = [1.0 - v for v in _lower_cs([1.0 - x for x in xs], alpha / 2, tune_n)]
    return list(zip(lo, hi, strict=True))


def bounded_sequence(values: Sequence[float], low: float, high: float, level: float,
                     tune_n: int | None = None) -> list[tuple[float, float]]:
    """The running-intersection confidence sequence of the mean of ``values`` in [low, high]
    at two-sided ``level`` (each endpoint one-sided at ``(1 − level) / 2``), clipped to the range."""
    width = high - low
    xs = [min(1.0, max(0.0, (v - low) / width)) for v in values]
    out: list[tuple[float, float]] = []
    lo_run, hi_run = low, high
    for lo, hi in confidence_sequence(xs, 2 * alpha_of(level), tune_n):
        lo_run = max(lo_run, low + width * max(0.0, lo))
        hi_run = min(hi_run, low + width * min(1.0, hi))
        out.append((lo_run, max(lo_run, hi_run)))
    return out


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


def _trace(arm: str, metric: str, rows: Sequence[TaskValues], rule: StoppingRule) -> GateTrace:
    bound = math.log(rule.ratio_bound)
    used: list[tuple[str, int, float]] = []
    for i, row in enumerate(rows, start=1):
        v = (row.pass_rate if metric == PASS_RATE else row.tokens).get(arm)
        if v is None:
            continue
        used.append((row.task, i, v if metric == PASS_RATE else max(-bound, min(bound, math.log(v)))))
    lo_hi = (-1.0, 1.0) if metric == PASS_RATE else (-bound, bound)
    seq = bounded_sequence([v for _, _, v in used], lo_hi[0], lo_hi[1], rule.level)
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
    limit = 0.0 if metric == PASS_RATE else (rule.token_factor or 1.0)
    return GateTrace(arm=arm, metric=metric, limit=limit,
                     futility=rule.smallest_effect if metric == PASS_RATE else None,
                     points=points, decision=decision, decided_at=at, decided_after=after)


def sequential_state(rule: StoppingRule, arms: Sequence[str], rows: Sequence[TaskValues]) -> SequentialState:
    """Every gate's trace over ``rows`` (complete tasks in completion order) and the run's
    decision: decided after the first complete task at which every gate of every treatment
    ``arms`` is decided (never before ``min_tasks``)."""
    metrics = [PASS_RATE] + ([TOKENS] if rule.token_factor is not None else [])
    gates = [_trace(arm, m, rows, rule) for arm in arms for m in metrics]
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
