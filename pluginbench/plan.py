"""Planning: the slots of an evaluation, in the order the run's seed gives them. Pure.

Slots are tasks × arms × repeats. Their order is a shuffle seeded by ``seed`` alone, so
the same config always gives the same plan, and arms interleave in time (a provider
slowdown or a cache warm-up does not land on one arm). Attempt ids read
``<task>__<arm>__r<repeat>``; a replacement after an interrupted attempt appends ``~2``,
``~3``...
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from . import stats
from .config import Evaluation, capability_record, per_harness
from .events import VANILLA, SlotPlan
from .harness_registry import harness_class
from .stats import Prices
from .stats import task_order as stopping_order


def arms_of(evaluation: Evaluation) -> list[str]:
    """Vanilla first, then treatments in config order."""
    return [VANILLA, *evaluation.treatments]


def attempt_id(task: str, arm: str, repeat: int) -> str:
    return f"{task}__{arm}__r{repeat}"


def plan_slots(evaluation: Evaluation, task_ids: list[str]) -> list[SlotPlan]:
    """The run's slots. A sequential run (``comparison.stopping``) takes its tasks in a
    seeded random order, cut at ``max_tasks``, one task's arms × repeats after another (each
    task's own shuffled), so tasks complete one by one and the sequence can look after each."""
    stopping = evaluation.stopping
    if stopping is not None:
        rng = random.Random(evaluation.seed)
        combos = []
        for task in stopping_order(task_ids, evaluation.seed, stopping.max_tasks):
            block = [(task, arm, repeat) for arm in arms_of(evaluation) for repeat in range(1, evaluation.repeats + 1)]
            rng.shuffle(block)
            combos.extend(block)
        return [SlotPlan(slot=i, task=t, arm=a, repeat=r, attempt_id=attempt_id(t, a, r))
                for i, (t, a, r) in enumerate(combos)]
    combos = [
        (task, arm, repeat)
        for task in task_ids
        for arm in arms_of(evaluation)
        for repeat in range(1, evaluation.repeats + 1)
    ]
    random.Random(evaluation.seed).shuffle(combos)
    return [
        SlotPlan(slot=i, task=t, arm=a, repeat=r, attempt_id=attempt_id(t, a, r))
        for i, (t, a, r) in enumerate(combos)
    ]


def cost_estimate(
    evaluation: Evaluation, attempts: int, prices: Prices | None, cost_ceiling: float | None = None,
) -> dict[str, Any]:
    """The worst case in dollars of ``attempts`` coding attempts: each uses
    ``runner.max_tokens_per_attempt`` tokens at the model row's dearest price. Unknown
    (``None`` with the reason), never zero, without that budget or a price row."""
    model = evaluation.runner.model or evaluation.runner.harness
    budget = evaluation.runner.max_tokens_per_attempt
    ceiling = evaluation.cost_ceiling if cost_ceiling is None else cost_ceiling
    out: dict[str, Any] = {
        "cost_ceiling_usd": ceiling, "max_tokens_per_attempt": budget, "model": model,
        "prices_as_of": prices.as_of if prices is not None else None, "attempts": attempts,
        "worst_case_usd_per_attempt": None, "worst_case_usd": None, "reason": None, "basis": None,
    }
    row = prices.models.get(model) if prices is not None else None
    if prices is None:
        out["reason"] = "no price table (set prices: to a dated prices.json in the config, see docs/configuration.md): dollars are unknown"
    elif row is None:
        out["reason"] = f"the price table has no row for model {model!r}: dollars are unknown"
    elif budget is None:
        out["reason"] = ("runner.max_tokens_per_attempt is not set, so no attempt has a worst case: dollars are "
                         "unknown" + ("; cost_ceiling is checked on the spend so far" if ceiling is not None else ""))
    else:
        dearest = max(row.input_per_million, row.cached_input_per_million, row.output_per_million)
        per = budget * dearest / 1_000_000
        out.update(
            worst_case_usd_per_attempt=per, worst_case_usd=per * attempts,
            basis=f"{attempts} attempts × {budget} tokens × ${dearest:g} per million (the dearest price of "
                  f"{model}, prices as of {prices.as_of}); vanilla cache hits cost nothing, so this is an upper bound",
        )
    return out


def generation_plan(evaluation: Evaluation, task_ids: list[str], prices: Prices | None) -> dict[str, Any] | None:
    """The generating sessions of the generated-guidance arms (one per arm × task, before
    coding) and their worst case in dollars: ``runner.max_tokens_per_attempt`` tokens each at
    the dearest price of the generating model's row; unknown (with the reason), never zero,
    without a budget or a row. None when no arm generates. Pure."""
    arms = {arm: t.generate for arm, t in evaluation.treatments.items() if t.generate is not None}
    if not arms:
        return None
    budget = evaluation.runner.max_tokens_per_attempt
    cls = harness_class(evaluation.runner.harness)
    per_arm: dict[str, Any] = {}
    total: float | None = 0.0
    reasons: list[str] = []
    for arm, g in arms.items():
        model = g.model or evaluation.runner.model or evaluation.runner.harness
        row = prices.models.get(model) if prices is not None else None
        usd: float | None = None
        if prices is None:
            reasons.append("no price table")
        elif row is None:
            reasons.append(f"the price table has no row for model {model!r}")
        elif budget is None:
            reasons.append("runner.max_tokens_per_attempt is not set")
        else:
            dearest = max(row.input_per_million, row.cached_input_per_million, row.output_per_million)
            usd = budget * dearest / 1_000_000 * len(task_ids)
        per_arm[arm] = {"sessions": len(task_ids), "harness": g.harness or evaluation.runner.harness,
                        "model": g.model, "reasoning": g.effort(evaluation.runner.reasoning),
                        "file": cls.instruction_file,
                        "instruction": "custom" if g.instruction is not None else "built-in",
                        "worst_case_usd": usd}
        total = None if usd is None or total is None else total + usd
    return {
        "sessions": len(task_ids) * len(arms),
        "per_arm": per_arm,
        "timeout_seconds_per_session": evaluation.timeout_seconds,
        "worst_case_usd": total,
        "reason": None if total is not None else "dollars are unknown: " + "; ".join(sorted(set(reasons))),
    }


def generation_line(gen: dict[str, Any]) -> str:
    """One line for ``check`` and ``run --dry-run``: the generating sessions and their worst case."""
    arms = ", ".join(f"{arm} ({a['sessions']} × {a['file']} by {a['harness']}"
                     + (f" {a['model']}" if a["model"] else "") + ")" for arm, a in gen["per_arm"].items())
    usd = (f"worst case ${gen['worst_case_usd']:.2f}" if gen["worst_case_usd"] is not None
           else f"worst-case cost unknown ({gen['reason']})")
    return (f"guidance generation: {gen['sessions']} session(s) before coding, one per task and generated arm: "
            f"{arms}; {usd}; counted in the arm's cost and in cost_ceiling")


def network_plan(evaluation: Evaluation, modes: dict[str, tuple[str | None, str | None]]) -> dict[str, dict[str, str]]:
    """Task → what its coding and verifier sandboxes may reach, from each task's (agent,
    verifier) ``network_mode`` and the runner (a probe run reaches only the probe). Pure."""
    from .environments import NO_EGRESS, network_policy, policy_for

    cls = harness_class(evaluation.runner.harness)
    probe = evaluation.runner.probe is not None
    out: dict[str, dict[str, str]] = {}
    for task, (agent, verifier) in modes.items():
        coding = (policy_for("coding", agent, probe_port=1 if probe else None, model_hosts=cls.model_hosts)
                  if cls.cli is not None else NO_EGRESS)
        out[task] = network_policy(coding, verifier)
    return out


def plan_summary(evaluation: Evaluation, task_ids: list[str], prices: Prices | None = None,
                 cost_ceiling: float | None = None) -> dict[str, Any]:
    """The whole plan for ``run --dry-run``: attempts, order, arms, budgets, worst-case dollars."""
    slots = plan_slots(evaluation, task_ids)
    arms = arms_of(evaluation)
    real = harness_class(evaluation.runner.harness).real
    return {
        "name": evaluation.name,
        "harness": evaluation.runner.harness,
        "model": evaluation.runner.model,
        "reasoning": evaluation.runner.reasoning,
        "backend": evaluation.environment.backend,
        "tasks": list(task_ids),
        "arms": arms,
        "repeats": evaluation.repeats,
        "jobs": evaluation.jobs,
        "seed": evaluation.seed,
        "capabilities": capability_record(evaluation.runner.harness, evaluation.capabilities),
        "coding_attempts": len(slots),
        "attempts_per_arm": {arm: len(task_ids) * evaluation.repeats for arm in arms},
        "readiness_runs": {"oracle": len(task_ids), "nop": len(task_ids)},
        "budgets": {
            "timeout_seconds_per_attempt": evaluation.timeout_seconds,
            "max_coding_seconds_total": evaluation.timeout_seconds * len(slots),
            "max_wall_seconds_coding": -(-len(slots) // evaluation.jobs) * evaluation.timeout_seconds,
        },
        "cost": cost_estimate(evaluation, len(slots), prices, cost_ceiling),
        # Power before spending: what these tasks × repeats can detect (stats.plan).
        "power": msgspec.to_builtins(stats.plan(
            len(task_ids), evaluation.repeats, stats.alpha_of(evaluation.statistics.confidence_level),
            power=evaluation.statistics.power)),
        "model_calls": (
            "each coding attempt makes one agent session; the number of model requests inside it is not known in advance"
            if real
            else "none: the harness is a control or the simulated agent"
        ),
        "slots": [
            {"slot": s.slot, "attempt_id": s.attempt_id, "task": s.task, "arm": s.arm, "repeat": s.repeat}
            for s in slots
        ],
        **({"sequential": sequential_plan(evaluation, len(task_ids), prices)} if evaluation.stopping else {}),
        **({"generation": gen} if (gen := generation_plan(evaluation, list(dict.fromkeys(s.task for s in slots)),
                                                          prices)) is not None else {}),
    }


def cross_agent_plan(evaluation: Evaluation, task_ids: list[str], prices: Prices | None = None) -> dict[str, Any]:
    """The plan of a cross-agent evaluation (``runner.harnesses``): each harness's own plan
    (:func:`plan_summary` of its single-harness evaluation: attempts, arms, slots, worst-case
    dollars) and the totals. Dollars add up only when every harness's are known."""
    plans = {name: plan_summary(ev, task_ids, prices) for name, ev in per_harness(evaluation)}
    costs = [p["cost"]["worst_case_usd"] for p in plans.values()]
    unknown = [name for name, p in plans.items() if p["cost"]["worst_case_usd"] is None]
    return {
        "name": evaluation.name,
        "cross_agent": True,
        "harnesses": list(plans),
        "tasks": list(task_ids),
        "arms": arms_of(evaluation),
        "repeats": evaluation.repeats,
        "coding_attempts": sum(p["coding_attempts"] for p in plans.values()),
        "worst_case_usd": None if unknown else sum(c for c in costs if c is not None),
        "worst_case_unknown": unknown,
        "cost_ceiling_usd": evaluation.cost_ceiling,
        "comparison": "within each harness only: each harness has its own vanilla, paired statistics, gates, "
                      "stopping and verdicts; arms are never pooled across harnesses",
        "per_harness": plans,
    }


def cross_agent_lines(plan: dict[str, Any]) -> list[str]:
    """The cross-agent plan as lines (``check``, ``run --dry-run``): one per harness, then the total."""
    out = [f"cross-agent: {len(plan['harnesses'])} harnesses, each its own run of {len(plan['tasks'])} task(s) × "
           f"{len(plan['arms'])} arm(s) × {plan['repeats']} repeat(s); compared {plan['comparison']}"]
    for name, p in plan["per_harness"].items():
        c = p["cost"]
        usd = f"${c['worst_case_usd']:.2f} worst case" if c["worst_case_usd"] is not None else f"dollars unknown ({c['reason']})"
        effort = f", reasoning {p['reasoning']}" if p["reasoning"] else ""
        out.append(f"  {name} (model {p['model'] or 'none'}{effort}): {p['coding_attempts']} coding attempts, {usd}")
    total = (f"${plan['worst_case_usd']:.2f} worst case" if plan["worst_case_usd"] is not None
             else "dollars unknown for " + ", ".join(plan["worst_case_unknown"]))
    ceiling = (f"; cost_ceiling ${plan['cost_ceiling_usd']:g} applies to each harness's run"
               if plan["cost_ceiling_usd"] is not None else "")
    out.append(f"  total: {plan['coding_attempts']} coding attempts, {total}{ceiling}")
    return out


def sequential_plan(evaluation: Evaluation, pool: int, prices: Prices | None) -> dict[str, Any]:
    """A sequential run's rule and, from simulation (:func:`stats.plan_expectations`), the
    expected tasks, attempts and worst-case dollars to a decision at assumed effects of 0,
    +5, +10 and +20 pp (one treatment's pass-rate gate), against the fixed design's attempts."""
    st = evaluation.stopping
    assert st is not None
    rule = stats.StoppingRule(level=evaluation.statistics.confidence_level, min_tasks=st.min_tasks,
                              max_tasks=st.max_tasks, smallest_effect=st.smallest_effect,
                              token_factor=st.token_factor, ratio_bound=st.ratio_bound, cost_factor=st.cost_factor,
                              multiplicity="bonferroni")
    arms = 1 + len(evaluation.treatments)
    family = stats.family_size(rule, len(evaluation.treatments))
    per_attempt = cost_estimate(evaluation, 1, prices)["worst_case_usd_per_attempt"]
    cap = min(pool, st.max_tasks) if st.max_tasks is not None else pool
    expected = []
    for e in stats.plan_expectations(rule, arms=arms, repeats=evaluation.repeats, pool=pool):
        row = msgspec.to_builtins(e)
        row["worst_case_usd"] = None if per_attempt is None else round(per_attempt * e.mean_attempts, 2)
        expected.append(row)
    gate_level = round(1 - stats.gate_alpha(rule, len(evaluation.treatments)), 12)
    return {"rule": msgspec.to_builtins(rule), "method": stats.sequential_method(), "pool": pool,
            "planned_tasks": cap, "max_attempts": cap * arms * evaluation.repeats, "expected": expected,
            "family": family, "gate_level": gate_level,
            "assumption": "per-task vanilla pass probability ~ Beta(2, 2), the treatment's shifted by the effect; "
                          f"one treatment's pass-rate gate at its share of the error ({gate_level * 100:.4g}%, "
                          f"{family} sequence(s) in the family); worst-case dollars use the cost estimate's "
                          "per-attempt bound"}


def sequential_lines(seq: dict[str, Any]) -> list[str]:
    """The plan's sequential part as lines (``check``, ``run --dry-run``)."""
    r = seq["rule"]
    out = [f"sequential stopping: tasks in a seeded random order, up to {seq['planned_tasks']} of {seq['pool']} "
           f"({seq['max_attempts']} attempts at most); decided by an anytime-valid {r['level'] * 100:g}% confidence "
           f"sequence after at least {r['min_tasks']} tasks (smallest effect of interest {r['smallest_effect'] * 100:g} pp)"
           + (f"; {seq['family']} sequences (treatments × gates) share it, each at {seq['gate_level'] * 100:.4g}% (Bonferroni)"
              if seq.get("family", 1) > 1 else "")]
    sims = seq["expected"][0]["simulations"] if seq["expected"] else 0
    out.append(f"expected to a decision ({sims} simulated runs each; {seq['assumption']}):")
    for e in seq["expected"]:
        usd = f", ${e['worst_case_usd']:.2f} worst case" if e.get("worst_case_usd") is not None else ""
        err = f" (± {e['mean_tasks_error']:g}, Monte Carlo 95%)" if e.get("mean_tasks_error") else ""
        out.append(f"  effect {e['effect'] * 100:+.0f} pp: {e['mean_tasks']:g} tasks{err}, {e['mean_attempts']:g} attempts{usd}; "
                   f"ends success {e['success']:.0%}, failure {e['failure']:.0%}, futility {e['futility']:.0%}, "
                   f"undecided at the cap {e['undecided']:.0%}")
    return out
