"""The sequential decision of a run, folded from its state. Pure.

A task enters the sequence when every one of its planned arms × repeats is complete (a
vanilla attempt reused from the cache counts like a coded one), in the order those tasks
completed in the log (the ``seq`` of their last ``attempt.completed``), so the same log
always gives the same sequence, on any backend. The per-task values are the paired
section's (``_report_paired``): the pass-rate difference of each treatment against
vanilla (unknown correctness leaves the task out of that gate) and the ratio of mean
input + output tokens (unknown usage leaves it out of the token gate).
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from .. import stats
from ..events import VANILLA, FrozenPrice, RunCreated
from ._state import Attempt, RunState

#: the extension name of the decision record (``extension.recorded``)
SEQUENTIAL = "sequential"
_KNOWN = ("pass", "overlap_pass", "fail", "empty")


def stopping_rule(created: RunCreated | None) -> stats.StoppingRule | None:
    """The run's frozen stopping rule, or None for a fixed-size run."""
    spec = created.stopping if created is not None else None
    if spec is None:
        return None
    return stats.StoppingRule(level=spec.level, min_tasks=spec.min_tasks, max_tasks=spec.max_tasks,
                              smallest_effect=spec.smallest_effect, token_factor=spec.token_factor,
                              ratio_bound=spec.ratio_bound, cost_factor=spec.cost_factor,
                              multiplicity=spec.multiplicity)


def _pass_fraction(attempts: list[Attempt]) -> float | None:
    if any(a.outcome not in _KNOWN for a in attempts):
        return None
    return sum(1 for a in attempts if a.outcome == "pass") / len(attempts)


def _mean_tokens(attempts: list[Attempt]) -> float | None:
    vals = []
    for a in attempts:
        u = a.usage
        if u is None or u.status == "unknown" or u.input_tokens is None or u.output_tokens is None:
            return None
        if u.input_tokens < 0 or u.output_tokens < 0:
            return None
        vals.append(float(u.input_tokens + u.output_tokens))
    mean = math.fsum(vals) / len(vals)
    return mean if mean > 0 else None


def _price_table(price: FrozenPrice | None) -> stats.Prices | None:
    if price is None:
        return None
    row = stats.ModelPrice(input_per_million=price.input_per_million,
                           cached_input_per_million=price.cached_input_per_million,
                           output_per_million=price.output_per_million)
    return stats.Prices(as_of=price.as_of, models={price.model: row})


def _mean_dollars(attempts: list[Attempt], price: FrozenPrice, table: stats.Prices) -> float | None:
    from ._report_data import (
        tokens_dict,  # the report's own token reading (it imports this module's users)
    )

    vals = []
    for a in attempts:
        c = stats.attempt_cost(tokens_dict(a.usage), price.model, table, "the frozen price row")
        if c.usd is None or c.lower_bound or not math.isfinite(c.usd):
            return None
        vals.append(c.usd)
    mean = math.fsum(vals) / len(vals)
    return mean if mean > 0 else None


def task_rows(state: RunState) -> list[stats.TaskValues]:
    """Complete tasks in completion order, with each treatment's paired values."""
    created = state.created
    if created is None:
        return []
    by_task: dict[str, list[Attempt]] = {}
    for a in state.live_attempts():
        by_task.setdefault(a.task, []).append(a)
    done: list[tuple[int, str]] = []
    for task, attempts in by_task.items():
        if all(a.state == "complete" and a.completed_seq is not None for a in attempts):
            done.append((max(a.completed_seq or 0 for a in attempts), task))
    spec = created.stopping
    price = spec.price if spec is not None and spec.cost_factor is not None else None
    table = _price_table(price)
    rows = []
    for _, task in sorted(done):
        arms: dict[str, list[Attempt]] = {}
        for a in by_task[task]:
            arms.setdefault(a.arm, []).append(a)
        base = arms.get(VANILLA, [])
        fb, tb = (_pass_fraction(base), _mean_tokens(base)) if base else (None, None)
        db = _mean_dollars(base, price, table) if base and price is not None and table is not None else None
        pass_rate: dict[str, float | None] = {}
        tokens: dict[str, float | None] = {}
        cost: dict[str, float | None] = {}
        for arm in created.arms:
            if arm == VANILLA:
                continue
            rs = arms.get(arm, [])
            ft, tt = (_pass_fraction(rs), _mean_tokens(rs)) if rs else (None, None)
            pass_rate[arm] = None if fb is None or ft is None else ft - fb
            tokens[arm] = None if tb is None or tt is None else tt / tb
            if price is not None and table is not None:
                dt = _mean_dollars(rs, price, table) if rs else None
                cost[arm] = None if db is None or dt is None else dt / db
        rows.append(stats.TaskValues(task=task, pass_rate=pass_rate, tokens=tokens, cost=cost))
    return rows


def sequential_of(state: RunState) -> stats.SequentialState | None:
    """The run's sequential state now, or None for a fixed-size run."""
    rule = stopping_rule(state.created)
    if rule is None or state.created is None:
        return None
    arms = [a for a in state.created.arms if a != VANILLA]
    return stats.sequential_state(rule, arms, task_rows(state))


def decision_record(seq: stats.SequentialState) -> dict[str, Any]:
    """What ``extension.recorded`` (extension ``sequential``) keeps of a decision: after how
    many complete tasks, why, and each gate's decision and interval at that point."""
    gates = []
    for g in seq.gates:
        at = g.points[g.decided_at - 1] if g.decided_at else None
        gates.append({"arm": g.arm, "metric": g.metric, "decision": g.decision, "tasks": g.decided_at,
                      "low": at.low if at else None, "high": at.high if at else None})
    parts = [f"{g.arm} {g.metric.replace('_', ' ')}: {g.decision}" for g in seq.gates]
    return {"decided_after": seq.decided_after, "gates": gates,
            "reason": f"decided after {seq.decided_after} complete task(s) ({'; '.join(parts)}); "
                      "the anytime-valid sequence stops the run, running attempts finish and are kept"}


def _planned_complete(state: RunState) -> bool:
    return bool(state.live) and all(a.state == "complete" for a in state.live_attempts())


_UNKNOWN_WHAT = {"pass_rate": "unknown correctness", "tokens": "unknown usage", "cost": "unknown dollars"}


def _gate_words(g: dict[str, Any]) -> str:
    left = int(g.get("left_out") or 0)
    note = (f", {left} task(s) left out for {_UNKNOWN_WHAT.get(g['metric'], 'unknown values')}, never counted as 0"
            if left else "")
    return f"{g['arm']} {g['metric'].replace('_', ' ')}: {g['decision'] or 'undecided'}{note}"


def validity_words(section: dict[str, Any]) -> str:
    """How far the sequences' coverage holds: the run's level for the whole family at once,
    each gate at its Bonferroni share (one treatment with one gate: just the level)."""
    level = f"{float(section['rule']['level']) * 100:g}%"
    family = int(section.get("family") or 1)
    if family <= 1:
        return (f"every interval is an anytime-valid {level} confidence sequence, valid at whichever task the run "
                "stopped, however often it was looked at")
    gate_level = next((float(g["level"]) for g in section["gates"] if g.get("level")), 0.0)
    return (f"the {family} confidence sequences (treatments × gates) are anytime-valid together at {level}: each at "
            f"{gate_level * 100:.4g}% (Bonferroni, the run's {100 - float(section['rule']['level']) * 100:g}% error "
            f"split {family} ways), valid at whichever task the run stopped, however often it was looked at")


def sentence(section: dict[str, Any]) -> str:
    """One plain sentence on where the sequential run stands (report, status, dashboard)."""
    valid = validity_words(section)
    gates = "; ".join(_gate_words(g) for g in section["gates"])
    done = section["complete_tasks"]
    if section["decided"]:
        k = section["decided_after"]
        lead = (f"Stopped because it was decided: decided after {k} complete task(s) of {section['planned_tasks']} "
                f"planned" if section["stopped_by_decision"] else f"Decided after {k} complete task(s)")
        return f"{lead} ({gates}); {valid}."
    if section["at_max"]:
        return f"Not decided by max_tasks ({done} tasks) ({gates}); {valid}."
    if section.get("pool_done"):
        return f"Not decided: every planned task ran ({done} tasks) ({gates}); {valid}."
    return f"Sequential run: {done} task(s) complete, not decided yet ({gates}); {valid}."


#: the last few sections by what determines them (the ledger writes the run row after every
#: event; the section changes only when an attempt completes or the decision is recorded)
_SECTIONS: dict[tuple[object, ...], dict[str, Any]] = {}


def sequential_section(state: RunState) -> dict[str, Any] | None:
    """``sequential`` of results.json and status: the rule, each gate's sequence, the decision
    and whether it stopped the run; None for a fixed-size run (whose documents are unchanged)."""
    if state.created is None or state.created.stopping is None:
        return None
    live = list(state.live_attempts())
    done = tuple((a.attempt_id, a.task, a.arm, a.outcome, a.completed_seq,
                  None if a.usage is None else (a.usage.status, a.usage.input_tokens, a.usage.output_tokens,
                                                a.usage.cached_input_tokens))
                 for a in live if a.state == "complete")
    key = (state.created.evaluation_sha256, tuple(state.created.arms), len(live), done,
           repr(state.extension_record(SEQUENTIAL)))
    cached = _SECTIONS.get(key)
    if cached is None:
        cached = _section(state)
        if len(_SECTIONS) >= 8:
            _SECTIONS.clear()
        _SECTIONS[key] = cached
    return dict(cached)


def _section(state: RunState) -> dict[str, Any]:
    seq = sequential_of(state)
    assert seq is not None
    out: dict[str, Any] = dict(stats.sequential_to_builtins(seq))
    record = state.extension_record(SEQUENTIAL)
    out["decision"] = record
    spec = state.created.stopping if state.created is not None else None
    if spec is not None and spec.price is not None and spec.cost_factor is not None:
        out["price"] = msgspec.to_builtins(spec.price)
    out["planned_tasks"] = len({a.task for a in state.live_attempts()})
    out["stopped_by_decision"] = record is not None and not _planned_complete(state)
    out["pool_done"] = _planned_complete(state)
    out["anytime_valid"] = True
    out["sentence"] = sentence(out)
    return out
