"""The paired section of ``compare``: one package against one comparator, task by task.

Contract (product description, "Compare runs", paired section):

* per task, the candidate's pass rate minus the comparator's (each arm's assigned repeats,
  overlap passes per the declared policy), and the candidate's mean input + output tokens
  divided by the comparator's (each arm averages its own repeats first);
* a task where either arm has no attempts, or an attempt that is not complete, is excluded
  from both statistics; any unknown correctness excludes it from pass-rate statistics; any
  missing, non-finite or negative token total, or a mean that is not positive, excludes it
  from token statistics — each exclusion with its reason;
* the summary weighs tasks equally, at the page's one ``level``: the mean pass-rate
  difference with the betting interval for a bounded mean (``_decide.difference_interval``,
  no symmetry assumed) and the one-sided sign-flip p-values at 0 the verdict and a margin-0
  bound gate decide with; the geometric-mean token ratio with the sign-flip permutation
  interval of the log ratios — the test the token bound gate decides with; as a secondary
  line, the exact two-sided sign test; fewer usable task pairs than the level needs give
  ``too_few_tasks`` and no interval;
* dollars: the ratio of mean dollars per attempt (``_verdict.DOLLARS_RATIO``) over the tasks
  where every attempt of both packages has dollars, with its sign-flip interval
  (``ratio_of_means_interval``); ``no_prices`` when either package has no dollars or the two
  were priced by different tables (a ratio of two price lists measures the prices).
"""

import math
from collections.abc import Sequence
from fractions import Fraction

import msgspec

from ._decide import (
    LEVEL,
    METHOD,
    Estimate,
    difference_interval,
    ratio_interval,
    ratio_of_means_interval,
)
from ._gates import INPUT_TOKENS, OUTPUT_TOKENS
from ._intervals import exact_sign_test
from ._permutation import DRAWS, SEED
from ._records import DOLLARS, PASS, UNKNOWN, AttemptRecord, Package, correctness, metric_value

IO_TOKENS = (INPUT_TOKENS, OUTPUT_TOKENS)


class TaskPair(msgspec.Struct, frozen=True, kw_only=True):
    """One task of a paired comparison; a ``None`` value has its ``*_excluded`` reason."""

    task: str
    pass_rate_difference: float | None
    pass_rate_excluded: str | None
    token_ratio: float | None
    tokens_excluded: str | None


class Interval(msgspec.Struct, frozen=True, kw_only=True):
    """A summary estimate and its two-sided interval at ``level`` by ``method``; a pass-rate
    difference also carries the one-sided sign-flip p-values at 0 (``p_greater``, ``p_less``)."""

    statistic: str
    estimate: float | None
    low: float | None
    high: float | None
    tasks: int
    status: str  # ok | too_few_tasks | no_tasks
    level: float = LEVEL
    method: str = METHOD
    exact: bool = True
    draws: int = DRAWS
    seed: int = SEED
    min_tasks: int = 5
    p_greater: float | None = None
    p_less: float | None = None


class SignTest(msgspec.Struct, frozen=True, kw_only=True):
    """The exact two-sided sign test over task pass-rate differences (ties excluded)."""

    positives: int
    negatives: int
    ties: int
    p: float | None


class PairedComparison(msgspec.Struct, frozen=True, kw_only=True):
    """``candidate`` against ``against`` over the tasks of one split."""

    candidate: str
    against: str
    per_task: list[TaskPair]
    pass_rate: Interval
    tokens: Interval
    sign_test: SignTest
    #: ratio of mean dollars per attempt (candidate / comparator) with its interval; status
    #: ``no_prices`` when the two have no dollars priced by one table
    dollars: Interval | None = None

    def values(self, statistic: str) -> list[float]:
        """The usable per-task values of ``pass_rate`` (differences) or ``tokens`` (ratios)."""
        if statistic == "pass_rate":
            return [p.pass_rate_difference for p in self.per_task if p.pass_rate_difference is not None]
        return [p.token_ratio for p in self.per_task if p.token_ratio is not None]

    def excluded(self, statistic: str) -> list[TaskPair]:
        """Tasks left out of ``pass_rate`` or ``tokens`` statistics."""
        if statistic == "pass_rate":
            return [p for p in self.per_task if p.pass_rate_excluded]
        return [p for p in self.per_task if p.tokens_excluded]


def _missing(name: str, rows: Sequence[AttemptRecord]) -> str | None:
    if not rows:
        return f"no attempts in {name}"
    pending = [a.attempt_id for a in rows if a.outcome is None]
    if pending:
        return (
            f"missing attempts: {len(pending)} of {len(rows)} {name} attempts are not complete "
            f"({', '.join(pending)})"
        )
    return None


def _pass_fraction(rows: Sequence[AttemptRecord], overlap: bool) -> Fraction | str:
    classes = [(a.attempt_id, correctness(a.outcome, overlap)) for a in rows]
    unknown = [i for i, c in classes if c == UNKNOWN]
    if unknown:
        return f"unknown correctness ({', '.join(unknown)})"
    return Fraction(sum(1 for _, c in classes if c == PASS), len(rows))


def _mean_tokens(name: str, rows: Sequence[AttemptRecord]) -> float | str:
    vals = []
    for a in rows:
        v = metric_value(a, IO_TOKENS)
        if v is None:
            return f"{name} token total missing for {a.attempt_id}"
        if v < 0:
            return f"{name} token total is negative for {a.attempt_id}"
        vals.append(v)
    mean = math.fsum(vals) / len(vals)
    if not mean > 0:
        return f"{name} mean token total is not positive ({mean:g})"
    return mean


def task_pair(task: str, cand: Package, comp: Package, overlap: bool) -> TaskPair:
    """The pass-rate difference and token ratio of one task, or why each is excluded."""
    rc, rp = cand.on(task), comp.on(task)
    why = _missing(comp.name, rp) or _missing(cand.name, rc)
    if why:
        return TaskPair(
            task=task, pass_rate_difference=None, pass_rate_excluded=why,
            token_ratio=None, tokens_excluded=why,
        )
    fc, fp = _pass_fraction(rc, overlap), _pass_fraction(rp, overlap)
    diff: float | None = None
    diff_why: str | None = None
    if isinstance(fc, str) or isinstance(fp, str):
        diff_why = "; ".join(f"{n}: {f}" for n, f in ((comp.name, fp), (cand.name, fc)) if isinstance(f, str))
    else:
        diff = float(fc - fp)
    mc, mp = _mean_tokens(cand.name, rc), _mean_tokens(comp.name, rp)
    ratio: float | None = None
    ratio_why: str | None = None
    if isinstance(mc, str) or isinstance(mp, str):
        ratio_why = "; ".join(m for m in (mp, mc) if isinstance(m, str))
    else:
        ratio = mc / mp
        if not (math.isfinite(ratio) and ratio > 0):
            ratio, ratio_why = None, f"token ratio is not a positive finite number ({ratio!r})"
    return TaskPair(
        task=task, pass_rate_difference=diff, pass_rate_excluded=diff_why,
        token_ratio=ratio, tokens_excluded=ratio_why,
    )


def _interval(res: Estimate, statistic: str) -> Interval:
    return Interval(
        statistic=statistic, estimate=res.estimate, low=res.low, high=res.high, tasks=res.tasks,
        status=res.status, level=res.level, method=res.method, exact=res.exact, min_tasks=res.min_tasks,
        p_greater=res.p_greater, p_less=res.p_less,
    )


def paired_comparison(
    tasks: Sequence[str], cand: Package, comp: Package, *, count_overlap_passes: bool,
    level: float = LEVEL,
) -> PairedComparison:
    """The paired section of ``cand`` against ``comp`` over ``tasks`` (in the given order)."""
    pairs = [task_pair(t, cand, comp, count_overlap_passes) for t in tasks]
    diffs = [p.pass_rate_difference for p in pairs if p.pass_rate_difference is not None]
    ratios = [p.token_ratio for p in pairs if p.token_ratio is not None]
    pos = sum(1 for d in diffs if d > 0)
    neg = sum(1 for d in diffs if d < 0)
    sign = SignTest(
        positives=pos, negatives=neg, ties=len(diffs) - pos - neg,
        p=exact_sign_test(pos, neg) if diffs else None,
    )
    return PairedComparison(
        candidate=cand.name,
        against=comp.name,
        per_task=pairs,
        pass_rate=_interval(difference_interval(diffs, level), "mean_pass_rate_difference"),
        tokens=_interval(ratio_interval(ratios, level), "geometric_mean_token_ratio"),
        sign_test=sign,
        dollars=_dollars(tasks, cand, comp, level),
    )


def _dollars(tasks: Sequence[str], cand: Package, comp: Package, level: float) -> Interval:
    """The dollars ratio of ``cand`` over ``comp`` (module docstring)."""
    name = "ratio_of_mean_dollars_per_attempt"
    if cand.prices is None or comp.prices is None or cand.prices != comp.prices or cand.prices.startswith("mixed:"):
        return Interval(statistic=name, estimate=None, low=None, high=None, tasks=0, status="no_prices", level=level)
    ts, cs = [], []
    for t in tasks:
        rc, rp = cand.on(t), comp.on(t)
        usd = [[a.metrics.get(DOLLARS) for a in rows] for rows in (rc, rp)]
        if not rc or not rp or any(v is None or not math.isfinite(v) or v < 0 for vs in usd for v in vs):
            continue
        c_mean, p_mean = (math.fsum(v or 0.0 for v in vs) / len(vs) for vs in usd)
        if p_mean > 0:
            ts.append(c_mean)
            cs.append(p_mean)
    return _interval(ratio_of_means_interval(ts, cs, level), name)
