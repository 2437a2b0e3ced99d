"""``compare`` on a sequential run: its own anytime-valid interval, never a fixed-N one. Pure.

A run made with ``comparison.stopping`` saves its confidence sequences in results.json
(``sequential``). When ``compare`` pairs a treatment with vanilla *of that same run*, the
all-tasks paired section shows the sequence's last interval (the one the run decided with;
the fixed-N sign-flip interval would not be valid after looking at every task), over the
tasks that entered the sequence (a task the stop left unrun is not an exclusion), the token
and dollar ratios from the run's token and cost gates when it has them, and a
bound gate on that pair is decided by the interval's endpoint at the run's level. Pairs
across runs, other splits and fixed-size runs are unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import msgspec

from ._format import format_pp
from ._gate_eval import FAILED, PASSED, GateResult, _result
from ._gates import Gate
from ._paired import Interval, PairedComparison
from ._records import Package
from ._sequential import METHOD


def _gate(seq: Mapping[str, Any], arm: str, metric: str) -> Mapping[str, Any] | None:
    for g in seq.get("gates") or ():
        if isinstance(g, Mapping) and g.get("arm") == arm and g.get("metric") == metric and g.get("points"):
            found: Mapping[str, Any] = g
            return found
    return None


def _interval(old: Interval, gate: Mapping[str, Any], level: float) -> Interval:
    """The gate's last point; its ``level`` is the run's (the level the whole family of sequences
    holds at together, each gate alone at its Bonferroni share, ``gate["level"]``, or more)."""
    p = gate["points"][-1]
    return Interval(statistic=old.statistic, estimate=p["estimate"], low=p["low"], high=p["high"],
                    tasks=int(p["tasks"]), status="ok", level=level, method=METHOD, exact=True, min_tasks=1)


def with_sequence(paired: PairedComparison, cand: Package, comp: Package,
                  sequences: Mapping[str, Mapping[str, Any] | None]) -> PairedComparison:
    """``paired`` with the sequential run's own intervals (module docstring), or unchanged."""
    seq = sequences.get(cand.run) if cand.run == comp.run and comp.name == "vanilla" else None  # every sequence is against vanilla
    gate = _gate(seq, cand.name, "pass_rate") if seq else None
    if seq is None or gate is None:
        return paired
    level = float(seq["rule"]["level"])
    entered = {p["task"] for g in seq["gates"] if g.get("arm") == cand.name for p in g["points"]}
    tokens = _gate(seq, cand.name, "tokens")
    cost = _gate(seq, cand.name, "cost")
    return msgspec.structs.replace(
        paired,
        per_task=[p for p in paired.per_task if p.task in entered],
        pass_rate=_interval(paired.pass_rate, gate, level),
        tokens=_interval(paired.tokens, tokens, level) if tokens else paired.tokens,
        dollars=_interval(paired.dollars, cost, level) if cost and paired.dollars is not None else paired.dollars,
    )


def sequential_bound_gate(g: Gate, cand: Package, comp: Package, paired: PairedComparison) -> GateResult | None:
    """A bound gate on a sequential pair, decided by the anytime-valid endpoint; None otherwise."""
    iv = paired.pass_rate if g.kind == "correctness_bound" else paired.tokens
    if iv.method != METHOD or iv.low is None or iv.high is None or iv.estimate is None:
        return None
    pct = f"{iv.level * 100:g}% anytime-valid"
    if g.kind == "correctness_bound":
        margin = g.margin or 0.0
        ok, endpoint = iv.low > margin, iv.low
        limit = f"{pct} low > {format_pp(margin)}"
        shown = f"mean pass-rate difference {format_pp(iv.estimate)}, {pct} interval [{format_pp(iv.low)}, {format_pp(iv.high)}]"
    else:
        factor = g.factor or 1.0
        ok, endpoint = iv.high < factor and math.isfinite(iv.high), iv.high
        limit = f"{pct} high < ×{factor:g}"
        shown = f"geometric-mean token ratio ×{iv.estimate:.3g}, {pct} interval [×{iv.low:.3g}, ×{iv.high:.3g}]"
    return _result(g, cand, comp, status=PASSED if ok else FAILED, candidate_value=endpoint, limit=limit,
                   tasks_compared=iv.tasks, comparator_value=None,
                   detail=f"{shown} over {iv.tasks} task(s): the run's sequential confidence sequence "
                          "(comparison.stopping), decided at its endpoint")
