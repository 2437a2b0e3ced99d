"""Deciding one gate for one candidate package against its comparator over one split.

Every gate ends ``pass``, ``fail`` or ``undetermined``; an undetermined gate says why in
``detail`` (the rules are the product description's, "Compare runs"). Pure functions.
"""

import math
from collections.abc import Sequence
from itertools import product
from typing import Any

import msgspec

from ._bounded import METHOD as BOUNDED_METHOD
from ._bounded import bounded_interval, bounded_p
from ._decide import alpha_of, p_above, p_below_ratio
from ._format import format_p, format_pp
from ._gates import Gate
from ._intervals import median
from ._paired import PairedComparison
from ._permutation import lower_bound
from ._records import (
    PASS,
    UNKNOWN,
    AttemptRecord,
    Package,
    correctness,
    metric_value,
    missing_reason,
    reference_value,
)

PASSED, FAILED, UNDETERMINED = "pass", "fail", "undetermined"


class TaskValue(msgspec.Struct, frozen=True, kw_only=True):
    """A metric gate's per-task values, shown in the measure table.

    ``candidate``/``comparator`` are the task medians of the gate's metrics (``None`` when
    an attempt lacks a value); ``reference`` and ``ratio`` are set for ratio gates;
    ``left_out`` says why a ratio gate did not count the task.
    """

    task: str
    candidate: float | None
    comparator: float | None
    reference: float | None = None
    ratio: float | None = None
    #: With a reference solution value: the comparator's task median / that reference.
    comparator_ratio: float | None = None
    left_out: str | None = None


class GateResult(msgspec.Struct, frozen=True, kw_only=True):
    """One gate decided for one candidate: the values compared, the limit, and why."""

    gate: str
    kind: str
    candidate: str
    against: str
    status: str  # pass | fail | undetermined
    candidate_value: float | None
    comparator_value: float | None
    limit: str
    detail: str
    tasks_compared: int
    per_task: list[TaskValue] = []
    missing_values: list[str] = []
    #: False for a row shown for context only (``compare --candidate``: not the candidate's
    #: gate), which never decides the exit code.
    deciding: bool = True


def _result(g: Gate, cand: Package, comp: Package, **kw: Any) -> GateResult:
    base: dict[str, Any] = dict(
        gate=g.name, kind=g.kind, candidate=cand.name, against=comp.name,
        candidate_value=None, comparator_value=None, limit="", detail="", tasks_compared=0,
    )
    base.update(kw)
    return GateResult(**base)


def _meets(direction: str, value: float, limit: float) -> bool:
    return value >= limit if direction == "higher" else value <= limit


# ---------------------------------------------------------------- count gates


def _absent_by_package(cand: Package, comp: Package, absent: Sequence[str]) -> list[str]:
    """Which package lacks attempts on which of the ``absent`` tasks, so a split naming tasks
    no compared run has reads differently from one package missing them."""
    groups: dict[str, list[str]] = {}
    for t in absent:
        missing = [p.name for p in (cand, comp) if not p.on(t)]
        who = "either package" if len(missing) == 2 else missing[0]
        groups.setdefault(who, []).append(t)
    return [f"no attempts from {who} on: " + ", ".join(tasks) for who, tasks in groups.items()]


def count_gate(
    g: Gate, cand: Package, comp: Package, tasks: Sequence[str], overlap: bool
) -> GateResult:
    """A ``correctness: passes|unknown`` gate with ``tolerance`` and optional ``per_task``."""
    tol = g.tolerance
    limit = (
        f"{'>=' if g.direction == 'higher' else '<='} comparator "
        f"{'-' if g.direction == 'higher' else '+'} {tol}" + (" per task" if g.per_task else "")
    )
    absent = [t for t in tasks if not cand.on(t) or not comp.on(t)]
    uneven = [
        f"{t} ({len(cand.on(t))} vs {len(comp.on(t))})"
        for t in tasks
        if t not in absent and len(cand.on(t)) != len(comp.on(t))
    ]
    if absent or uneven:
        parts = []
        if absent:
            parts.extend(_absent_by_package(cand, comp, absent))
        if uneven:
            parts.append("different numbers of attempts on: " + ", ".join(uneven))
        return _result(
            g, cand, comp, status=UNDETERMINED, limit=limit,
            detail="; ".join(parts) + ". Run both packages on those tasks with the same repeats, or define "
            "a split without those tasks.",
        )

    def counts(pkg: Package, target: str) -> dict[str, tuple[int, int]]:
        out = {}
        for t in tasks:
            classes = [correctness(a.outcome, overlap) for a in pkg.on(t)]
            out[t] = (sum(1 for c in classes if c == target), sum(1 for c in classes if c == UNKNOWN))
        return out

    target = PASS if g.correctness == "passes" else UNKNOWN
    cc, pc = counts(cand, target), counts(comp, target)

    def decide(cand_unknown_pass: bool, comp_unknown_pass: bool) -> tuple[bool, int, int]:
        def value(c: tuple[int, int], as_pass: bool) -> int:
            return c[0] + (c[1] if as_pass and target == PASS else 0)

        per = [
            (value(cc[t], cand_unknown_pass), value(pc[t], comp_unknown_pass)) for t in tasks
        ]
        ok = [
            _meets(g.direction, c, p - tol if g.direction == "higher" else p + tol) for c, p in per
        ]
        cv, pv = sum(c for c, _ in per), sum(p for _, p in per)
        verdict = all(ok) if g.per_task else _meets(
            g.direction, cv, pv - tol if g.direction == "higher" else pv + tol
        )
        return verdict, cv, pv

    n = len(tasks)
    if target == UNKNOWN:
        ok, cv, pv = decide(False, False)
        return _result(
            g, cand, comp, status=PASSED if ok else FAILED, candidate_value=cv,
            comparator_value=pv, limit=limit, tasks_compared=n,
            detail=f"unknowns: {cand.name} {cv}, {comp.name} {pv} over {n} task(s)",
        )
    outcomes = {combo: decide(*combo) for combo in product((True, False), repeat=2)}
    verdicts = {v for v, _, _ in outcomes.values()}
    cu = sum(u for _, u in cc.values())
    pu = sum(u for _, u in pc.values())
    _, cv, pv = outcomes[(False, False)]
    if len(verdicts) > 1:
        return _result(
            g, cand, comp, status=UNDETERMINED, candidate_value=cv, comparator_value=pv,
            limit=limit, tasks_compared=n,
            detail=(
                f"unknown correctness decides the gate: {cand.name} has {cu} unknown(s), "
                f"{comp.name} has {pu}; counted all as passes and all as fails they disagree"
            ),
        )
    ok = verdicts.pop()
    note = f" (unknowns: {cand.name} {cu}, {comp.name} {pu}; every way of counting them agrees)" if cu or pu else ""
    return _result(
        g, cand, comp, status=PASSED if ok else FAILED, candidate_value=cv, comparator_value=pv,
        limit=limit, tasks_compared=n,
        detail=f"passes: {cand.name} {cv}, {comp.name} {pv} over {n} task(s){note}",
    )


# ---------------------------------------------------------------- metric gates


def _values(rows: Sequence[AttemptRecord], metrics: list[str]) -> list[float | None]:
    return [metric_value(a, metrics) for a in rows]


def metric_gate(g: Gate, cand: Package, comp: Package, tasks: Sequence[str]) -> GateResult:
    """A ``metrics`` gate: ``total``, ``mean_of_task_medians`` or ``mean_of_task_median_ratios``."""
    metrics = list(g.metrics or ())
    factor = 1.0 if g.factor is None else g.factor
    ratio = g.statistic == "mean_of_task_median_ratios"
    op = ">=" if g.direction == "higher" else "<="
    limit = (
        f"mean ratio {op} {factor:g}" if ratio else f"{op} {factor:g} × comparator"
    )
    one_sided = [t for t in tasks if bool(cand.on(t)) != bool(comp.on(t))]
    both = [t for t in tasks if cand.on(t) and comp.on(t)]
    per_task: list[TaskValue] = []
    counted: list[str] = []
    missing_notes: list[str] = []
    unmeasured = {cand.name: [0, 0], comp.name: [0, 0]}  # measured, assigned
    # With the reference solution measured (results.json ``references``) every task's ratio
    # divides by it, on both sides; without, by the comparator's task median.
    task_refs = ratio and any(reference_value((cand, comp), t, metrics)[0] for t in both)
    for t in both:
        vc, vp = _values(cand.on(t), metrics), _values(comp.on(t), metrics)
        med_c = None if None in vc else median([v for v in vc if v is not None])
        med_p = None if None in vp else median([v for v in vp if v is not None])
        ref = med_p
        if ratio:
            left_out = None
            if task_refs:
                found, ref, why = reference_value((cand, comp), t, metrics)
                if not found:
                    left_out = "reference missing (the report has no reference solution value for this task)"
                elif ref is None:
                    left_out = f"reference missing ({why})"
            elif med_p is None:
                left_out = f"reference missing ({comp.name} lacks a value on {vp.count(None)} of {len(vp)} attempts)"
            if left_out is None and ref is not None and ref <= 0:
                left_out = f"reference {ref:g} is zero or negative"
            elif left_out is None and ref is not None and g.reference_floor is not None and ref < g.reference_floor:
                left_out = f"reference {ref:g} is below reference_floor {g.reference_floor:g}"
            if left_out:
                per_task.append(TaskValue(task=t, candidate=med_c, comparator=med_p, reference=ref, left_out=left_out))
                missing_notes.append(f"{t}: left out of {g.name!r}: {left_out}")
                continue
        for pkg, vals in ((cand, vc), (comp, vp)):
            unmeasured[pkg.name][0] += sum(1 for v in vals if v is not None)
            unmeasured[pkg.name][1] += len(vals)
            for a, v in zip(pkg.on(t), vals, strict=True):
                if v is None:
                    missing_notes.append(f"{t}: {pkg.name} {a.attempt_id}: {missing_reason(a, metrics)}")
        counted.append(t)
        r = None if (med_c is None or ref is None or not ratio) else med_c / ref
        rp = None if (med_p is None or ref is None or not task_refs) else med_p / ref
        per_task.append(
            TaskValue(task=t, candidate=med_c, comparator=med_p, reference=ref if ratio else None, ratio=r,
                      comparator_ratio=rp)
        )
    reasons = []
    if one_sided:
        reasons.append("attempts from only one of the two packages on: " + ", ".join(one_sided))
    lacking = [n for n, (m, a) in unmeasured.items() if m < a]
    if lacking:
        sides = "; ".join(f"{n} measured {m} of {a} assigned attempts" for n, (m, a) in unmeasured.items())
        reasons.append(f"{' + '.join(metrics)} missing: {sides}")
    if not counted and not reasons:
        reasons.append("no task with a value on both sides to compare")
    repeat_note = _repeat_note(cand, comp, counted, metrics)
    common = dict(limit=limit, per_task=per_task, missing_values=missing_notes, tasks_compared=len(counted))
    if reasons:
        return _result(g, cand, comp, status=UNDETERMINED, detail="; ".join(reasons) + repeat_note, **common)
    cv, pv, ok = _statistic(g, cand, comp, counted, per_task, metrics, factor)
    left = sum(1 for p in per_task if p.left_out)
    detail = f"{g.statistic} over {len(counted)} task(s)" + (f", {left} left out" if left else "") + repeat_note
    return _result(
        g, cand, comp, status=PASSED if ok else FAILED, candidate_value=cv, comparator_value=pv,
        detail=detail, **common,
    )


def _repeat_note(cand: Package, comp: Package, tasks: list[str], metrics: list[str]) -> str:
    differ = []
    for t in tasks:
        nc = sum(1 for v in _values(cand.on(t), metrics) if v is not None)
        np_ = sum(1 for v in _values(comp.on(t), metrics) if v is not None)
        if nc != np_:
            differ.append(f"{t} ({nc} vs {np_})")
    return ("; measured repeat counts differ on: " + ", ".join(differ)) if differ else ""


def _statistic(
    g: Gate, cand: Package, comp: Package, tasks: list[str], per_task: list[TaskValue],
    metrics: list[str], factor: float,
) -> tuple[float, float | None, bool]:
    rows = {p.task: p for p in per_task}
    if g.statistic == "total":
        cv = math.fsum(v for t in tasks for v in _values(cand.on(t), metrics) if v is not None)
        pv = math.fsum(v for t in tasks for v in _values(comp.on(t), metrics) if v is not None)
        return cv, pv, _meets(g.direction, cv, factor * pv)
    if g.statistic == "mean_of_task_medians":
        cv = math.fsum(rows[t].candidate or 0.0 for t in tasks) / len(tasks)
        pv = math.fsum(rows[t].comparator or 0.0 for t in tasks) / len(tasks)
        return cv, pv, _meets(g.direction, cv, factor * pv)
    mean_ratio = math.fsum(rows[t].ratio or 0.0 for t in tasks) / len(tasks)
    if all(rows[t].comparator_ratio is not None for t in tasks):  # ratios to the reference solution
        comp_ratio = math.fsum(rows[t].comparator_ratio or 0.0 for t in tasks) / len(tasks)
        return mean_ratio, comp_ratio, _meets(g.direction, mean_ratio, factor * comp_ratio)
    return mean_ratio, None, _meets(g.direction, mean_ratio, factor)


# ---------------------------------------------------------------- bound gates


def bound_decision(kind: str, values: Sequence[float], limit: float, level: float) -> tuple[bool, float]:
    """Whether a bound gate of ``kind`` passes on per-task ``values``, and the test's p.

    ``correctness_bound``: the mean pass-rate difference is credibly above ``limit`` (the
    margin); ``token_bound``: the geometric-mean token ratio is credibly below ``limit`` (the
    factor). Each is a one-sided test at ``alpha = (1 − level) / 2``: the sign-flip test, so
    the interval shown beside it (its inversion) lies above the margin / below the factor
    exactly when the gate passes — except a correctness bound at a margin other than 0, where
    the sign-flip test's symmetry fails (pass-rate differences are bounded and mostly tied;
    shifted by the margin every tie turns into evidence) and the betting test for a bounded
    mean decides (:mod:`._bounded`, no symmetry assumed). The one rule ``calibrate`` and the
    benches apply too.
    """
    alpha = alpha_of(level)
    if kind == "correctness_bound":
        p = p_above(values, limit) if limit == 0.0 else bounded_p(values, limit, "greater", alpha)
    else:
        p = p_below_ratio(values, limit)
    return p <= alpha, p


def bound_gate(g: Gate, cand: Package, comp: Package, paired: PairedComparison) -> GateResult:
    """A gate on a one-sided bound (the one-sided test at its limit, :func:`bound_decision`): a
    token bound on the paired sign-flip interval's upper end; a pass-rate bound at margin 0 on
    the sign-flip lower bound (shown beside the bounded-mean range the page shows), at any
    other margin on the bounded-mean lower bound."""
    level = paired.pass_rate.level
    pct = f"{level * 100:g}%"
    if g.kind == "correctness_bound":
        iv, excluded, stat = paired.pass_rate, paired.excluded("pass_rate"), "pass-rate difference"
        limit = f"{pct} low >= {format_pp(g.margin or 0.0)}"
        values = paired.values("pass_rate")
    else:
        iv, excluded, stat = paired.tokens, paired.excluded("tokens"), "token ratio"
        limit = f"{pct} high <= ×{g.factor:g}"
        values = paired.values("tokens")
    common = dict(limit=limit, tasks_compared=iv.tasks, comparator_value=None)
    if excluded:
        return _result(
            g, cand, comp, status=UNDETERMINED, candidate_value=iv.estimate,
            detail="excluded task(s) in the split: "
            + "; ".join(f"{p.task}: {p.pass_rate_excluded if stat.startswith('pass') else p.tokens_excluded}" for p in excluded),
            **common,
        )
    if iv.status != "ok" or iv.low is None or iv.high is None:
        return _result(
            g, cand, comp, status=UNDETERMINED, candidate_value=iv.estimate,
            detail=f"too few tasks: {iv.tasks} usable task pair(s), a {pct} bound needs at least {iv.min_tasks}",
            **common,
        )
    ok, p = bound_decision(g.kind, values, (g.margin or 0.0) if g.kind == "correctness_bound" else (g.factor or 1.0), level)
    if g.kind == "correctness_bound" and (g.margin or 0.0) != 0.0:  # decided without symmetry (bound_decision)
        bounded = bounded_interval(values, alpha_of(level))
        low = iv.low if bounded is None else bounded[0]
        return _result(
            g, cand, comp, status=PASSED if ok else FAILED, candidate_value=low,
            detail=(f"mean {stat} {format_pp(iv.estimate)} over {iv.tasks} task(s), one-sided {(1 - alpha_of(level)) * 100:g}% lower bound "
                    f"{format_pp(low)} by the {BOUNDED_METHOD} (a sign-flip interval assumes differences symmetric "
                    f"about the margin, which ties at 0 are not): p = {format_p(p)} at the margin, passes when "
                    f"p <= {format_p(alpha_of(level))}"),
            **common,
        )
    if g.kind == "correctness_bound":  # margin 0: the exact sign-flip test at 0, its own bound as the value
        endpoint = lower_bound(values, alpha_of(level))
        shown = (f"mean {stat} {format_pp(iv.estimate)}, {pct} range of the true difference [{format_pp(iv.low)}, "
                 f"{format_pp(iv.high)}] (no symmetry assumed), one-sided sign-flip lower bound {format_pp(endpoint)}")
    else:
        endpoint = iv.high
        shown = f"geometric-mean {stat} ×{iv.estimate:.3g}, {pct} interval [×{iv.low:.3g}, ×{iv.high:.3g}]"
    return _result(
        g, cand, comp, status=PASSED if ok else FAILED, candidate_value=endpoint,
        detail=(
            f"{shown} over {iv.tasks} task(s); one-sided sign-flip test at the limit: "
            f"p = {format_p(p)} ({'exact' if iv.exact else 'Monte Carlo'}), passes when p <= {format_p(alpha_of(level))}"
        ),
        **common,
    )
