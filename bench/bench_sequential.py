"""Sequential stopping (issue 24): A/A false-positive rate under continuous monitoring, and
attempts to a decision against the fixed design.

    .venv/bin/python bench/bench_sequential.py [--sims 1000] [--seed 0] [--pool 300]
        [--only aa,costs,family,fixed,plan]

Simulated experiments, no model call, through the package's own pure functions
(``stats.sequential_state``, the function the Supervisor decides with, boundary
``stats.sequential_method()``: the hedged betting confidence sequence; each gate stops
folding at its decision, ``until_decided``, which decides the same). Every task has its
own vanilla pass probability ``p ~ Beta(2, 2)``; the treatment's is ``p + effect`` clipped to
[0, 1]; each arm runs 3 repeats (Bernoulli); tokens are the task's log-normal base (σ 0.8)
times a per-attempt log-normal factor (σ 0.35), the same distribution in both arms. Tasks
arrive one at a time up to ``--pool``; the rule looks after every task (continuous
monitoring) from ``min_tasks`` 10 at the 90% level, smallest effect of interest 5 pp, and a
token gate at factor 1 for the A/A table.

A/A (effect 0): a false positive is a ``success`` or ``failure`` decision of the pass-rate
gate at any task (nominal: 5% each side, 10% both), or a token ``success``/``failure`` at
factor 1 (same). Each rate has its Monte Carlo 95% Wilson interval. Beside it, the same
data checked after every task with a fixed-N 90% normal interval (what peeking without a
sequence does) shows the inflation the sequence prevents.

Attempts to decision: mean tasks and attempts (tasks × 2 arms × 3 repeats) the sequential
rule spends at 0, +10 and +20 pp and how its runs end, against the fixed design sized for
+10 pp at 80% power (``stats.tasks_needed``, the planner's number) and that design's
simulated power (the sign-flip-equivalent normal test at the same one-sided 5%); once with
the cap at ``--pool`` and once with ``max_tasks`` set to the fixed design's size.

Family-wise A/A (``family``): 1, 2 and 3 treatments identical to vanilla (each with its own
Bernoulli repeats on the task's shared ``p``, its own tokens), a pass-rate gate and a token
gate at factor 1 per treatment, the run's error split over treatments × gates (Bonferroni,
``multiplicity: bonferroni``, as every new run does), at 6-, 20- and 100-task pools with
``min_tasks`` 6, looked at after every task: a false positive is any success or failure of
any gate of the family (nominal 10% at level 90%).

Fixed-N gates (``fixed``): the same null data at 6 and 20 tasks through the bound gates' own
decision (``stats.bound_decision``: margin 0, non-inferiority at −5 pp, tokens at ×1) and the
``cost_ratio`` gate's rule (the one-sided sign-flip test of the per-task dollars at ×1,
``stats.sign_flip_test``, as ``stats._cost_gate`` decides it), nominal 5% each.

Plan time (``plan``): ``stats.plan_expectations`` at a 300-task pool (4 effects × its
simulations, all runs of an effect folded as one batch) against the same simulations folded
one run at a time through ``stats.sequential_state`` (how the plan simulated before), and
whether the two end every run alike.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pluginbench import stats  # noqa: E402

LEVEL = 0.90
REPEATS = 3
ARMS = 2
MIN_TASKS = 10
SMALLEST = 0.05
Z = NormalDist().inv_cdf(1 - stats.alpha_of(LEVEL))


def simulate_task(rng: random.Random, effect: float) -> tuple[float, float]:
    """One task's (pass-rate difference, token ratio) of treatment vs vanilla."""
    p = rng.betavariate(2.0, 2.0)
    pt = min(1.0, max(0.0, p + effect))
    base = math.exp(rng.gauss(10.0, 0.8))

    def arm(q: float) -> tuple[float, float]:
        return (sum(rng.random() < q for _ in range(REPEATS)) / REPEATS,
                sum(base * math.exp(rng.gauss(0.0, 0.35)) for _ in range(REPEATS)) / REPEATS)

    (rv, tv), (rt, tt) = arm(p), arm(pt)
    return rt - rv, tt / tv


def wilson(k: int, n: int) -> str:
    iv = stats.wilson_interval(k, n)
    return f"{k / n:6.2%} [{iv.low:.2%}, {iv.high:.2%}]" if iv else "n/a"


def naive_peek(diffs: list[float]) -> str | None:
    """A fixed-N normal 90% interval checked after every task from MIN_TASKS: the first exclusion of 0."""
    s = s2 = 0.0
    for n, d in enumerate(diffs, start=1):
        s += d
        s2 += d * d
        if n < MIN_TASKS:
            continue
        mean = s / n
        var = max(0.0, (s2 - n * mean * mean) / (n - 1))
        half = Z * math.sqrt(var / n)
        if mean - half > 0:
            return "success"
        if mean + half < 0:
            return "failure"
    return None


def experiment(rng: random.Random, effect: float, pool: int, rule: stats.StoppingRule) -> tuple[stats.SequentialState, list[float]]:
    rows, diffs = [], []
    for i in range(pool):
        d, r = simulate_task(rng, effect)
        diffs.append(d)
        rows.append(stats.TaskValues(task=str(i), pass_rate={"t": d}, tokens={"t": r}))
    return stats.sequential_state(rule, ["t"], rows, until_decided=True), diffs


def aa(sims: int, seed: int, pool: int) -> None:
    rule = stats.StoppingRule(level=LEVEL, min_tasks=MIN_TASKS, max_tasks=pool, smallest_effect=SMALLEST,
                              token_factor=1.0)
    rng = random.Random(f"aa:{seed}")
    counts = {"pass success": 0, "pass failure": 0, "pass any": 0, "tokens success": 0, "tokens failure": 0,
              "tokens any": 0, "futility": 0, "naive any": 0}
    t0 = time.perf_counter()
    for _ in range(sims):
        state, diffs = experiment(rng, 0.0, pool, rule)
        pr, tok = state.gates[0].decision, state.gates[1].decision
        counts["pass success"] += pr == "success"
        counts["pass failure"] += pr == "failure"
        counts["pass any"] += pr in ("success", "failure")
        counts["futility"] += pr == "futility"
        counts["tokens success"] += tok == "success"
        counts["tokens failure"] += tok == "failure"
        counts["tokens any"] += tok is not None
        counts["naive any"] += naive_peek(diffs) is not None
    took = time.perf_counter() - t0
    print(f"A/A under continuous monitoring: {sims} experiments, up to {pool} tasks × {ARMS} arms × {REPEATS} repeats, "
          f"looked at after every task from {MIN_TASKS}, level {LEVEL:.0%} ({took:.1f} s)")
    print("  false positive                      rate [MC 95%]                nominal")
    for key, nominal in (("pass success", "5%"), ("pass failure", "5%"), ("pass any", "10%"),
                         ("tokens success", "5%"), ("tokens failure", "5%"), ("tokens any", "10%")):
        print(f"  sequence, {key:<24} {wilson(counts[key], sims):<30} ≤ {nominal}")
    print(f"  fixed-N 90% interval peeked after every task, any: {wilson(counts['naive any'], sims)} (nominal 10%: inflated)")
    print(f"  (futility, correct at effect 0: {wilson(counts['futility'], sims)})")


def costs(sims: int, seed: int, pool: int) -> None:
    rule = stats.StoppingRule(level=LEVEL, min_tasks=MIN_TASKS, max_tasks=pool, smallest_effect=SMALLEST)
    alpha = stats.alpha_of(LEVEL)
    sd = stats.assumed_sd(REPEATS)
    fixed_n = stats.tasks_needed(0.10, sd, alpha)
    print(f"\nAttempts to a decision ({sims} experiments each, pass-rate gate, cap {pool} tasks) against the fixed design "
          f"sized for +10 pp at 80% power: {fixed_n} tasks = {fixed_n * ARMS * REPEATS} attempts")
    print("  effect   sequential: mean tasks  mean attempts  success  failure  futility  undecided | fixed: attempts  power (sim)")
    for effect in (0.0, 0.10, 0.20):
        rng = random.Random(f"cost:{seed}:{effect}")
        tasks = 0
        ends = {"success": 0, "failure": 0, "futility": 0, None: 0}
        fixed_hits = 0
        for _ in range(sims):
            state, diffs = experiment(rng, effect, pool, rule)
            g = state.gates[0]
            tasks += state.decided_after if state.decided and state.decided_after else pool
            ends[g.decision] += 1
            head = diffs[:fixed_n]
            m = sum(head) / fixed_n
            v = sum((d - m) ** 2 for d in head) / (fixed_n - 1)
            fixed_hits += m - Z * math.sqrt(v / fixed_n) > 0
        mean = tasks / sims
        print(f"  {effect * 100:+4.0f} pp  {mean:22.1f}  {mean * ARMS * REPEATS:13.0f}  {ends['success'] / sims:7.1%}  "
              f"{ends['failure'] / sims:7.1%}  {ends['futility'] / sims:8.1%}  {ends[None] / sims:9.1%} | "
              f"{fixed_n * ARMS * REPEATS:15d}  {fixed_hits / sims:10.1%}")


def family_task(rng: random.Random, treatments: int) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """One null task with ``treatments`` arms identical to vanilla: per arm (difference, token ratio)."""
    p = rng.betavariate(2.0, 2.0)
    base = math.exp(rng.gauss(10.0, 0.8))

    def arm() -> tuple[float, float]:
        return (sum(rng.random() < p for _ in range(REPEATS)) / REPEATS,
                sum(base * math.exp(rng.gauss(0.0, 0.35)) for _ in range(REPEATS)) / REPEATS)

    rv, tv = arm()
    diffs: dict[str, float | None] = {}
    ratios: dict[str, float | None] = {}
    for k in range(treatments):
        rt, tt = arm()
        diffs[f"t{k}"], ratios[f"t{k}"] = rt - rv, tt / tv
    return diffs, ratios


def familywise(sims: int, seed: int) -> None:
    print(f"\nFamily-wise A/A under continuous monitoring ({sims} experiments per cell, level {LEVEL:.0%}, min_tasks 6, "
          "a pass-rate and a token gate (factor 1) per treatment, Bonferroni over treatments × gates): a false positive "
          "is any success or failure anywhere in the family (nominal 10%)")
    print("  treatments  gates  each gate at   pool   family-wise false positive [MC 95%]   (pass-rate gates only)")
    for pool in (6, 20, 100):
        for k in (1, 2, 3):
            rule = stats.StoppingRule(level=LEVEL, min_tasks=6, max_tasks=pool, smallest_effect=SMALLEST,
                                      token_factor=1.0, multiplicity="bonferroni")
            arms = [f"t{i}" for i in range(k)]
            rng = random.Random(f"family:{seed}:{k}:{pool}")
            hits = pass_hits = 0
            t0 = time.perf_counter()
            for _ in range(sims):
                rows = []
                for i in range(pool):
                    d, r = family_task(rng, k)
                    rows.append(stats.TaskValues(task=str(i), pass_rate=d, tokens=r))
                state = stats.sequential_state(rule, arms, rows, until_decided=True)
                wrong = [g for g in state.gates if g.decision in ("success", "failure")]
                hits += bool(wrong)
                pass_hits += any(g.metric == "pass_rate" for g in wrong)
            level = 1 - stats.gate_alpha(rule, k)
            print(f"  {k:10d}  {len(state.gates):5d}  {level:11.2%}  {pool:5d}   {wilson(hits, sims):<36} "
                  f"({wilson(pass_hits, sims)}; {time.perf_counter() - t0:.0f} s)", flush=True)


def fixed_gates(sims: int, seed: int) -> None:
    alpha = stats.alpha_of(LEVEL)
    print(f"\nFixed-N gates, A/A at 6 and 20 tasks ({sims} experiments each, one-sided {alpha:.0%}; the gates' own "
          "decision functions): a false positive is a pass")
    print("  tasks  margin 0                        non-inferior −5 pp (at margin)   tokens ×1                       "
          "cost_ratio ×1")
    for n in (6, 20):
        rng = random.Random(f"fixed:{seed}:{n}")
        tally = [0, 0, 0, 0]
        for _ in range(sims):
            diffs, ratios, usd_t, usd_v = [], [], [], []
            for _ in range(n):
                p = rng.betavariate(2.0, 2.0)
                base = math.exp(rng.gauss(10.0, 0.8))
                arms = []
                for _ in range(2):
                    arms.append((sum(rng.random() < p for _ in range(REPEATS)) / REPEATS,
                                 sum(base * math.exp(rng.gauss(0.0, 0.35)) for _ in range(REPEATS)) / REPEATS))
                (rv, tv), (rt, tt) = arms
                diffs.append(rt - rv)
                ratios.append(tt / tv)
                usd_t.append(tt * 3e-6)
                usd_v.append(tv * 3e-6)
            tally[0] += stats.bound_decision("correctness_bound", diffs, 0.0, LEVEL)[0]
            tally[1] += stats.bound_decision("correctness_bound", [d - 0.05 for d in diffs], -0.05, LEVEL)[0]
            tally[2] += stats.bound_decision("token_bound", ratios, 1.0, LEVEL)[0]
            # the cost_ratio gate's own rule (stats._cost_gate): the one-sided sign-flip test of
            # treatment dollars − factor × vanilla dollars per task, passing when p <= alpha
            tally[3] += stats.sign_flip_test([c - q for c, q in zip(usd_t, usd_v, strict=True)],
                                             alternative="less").p <= alpha
        print(f"  {n:5d}  " + "  ".join(f"{wilson(k, sims):<30}" for k in tally), flush=True)


def plan_time(seed: int) -> None:
    from pluginbench.stats._sequential_sim import PLAN_SIMULATIONS, endings, simulated_differences

    rule = stats.StoppingRule(level=LEVEL, min_tasks=MIN_TASKS, max_tasks=None, smallest_effect=SMALLEST)
    t0 = time.perf_counter()
    plan = stats.plan_expectations(rule, arms=ARMS, repeats=REPEATS, pool=300)
    batched = time.perf_counter() - t0
    print(f"\nPlan simulation at a 300-task pool ({len(plan)} effects × {PLAN_SIMULATIONS} simulated runs, "
          f"2 arms × {REPEATS} repeats): {batched:.2f} s batched (numpy's first load included when it comes first)")
    for e in plan:
        print(f"  effect {e.effect * 100:+3.0f} pp: {e.mean_tasks:6.1f} ± {e.mean_tasks_error:4.1f} tasks (Monte Carlo 95%), "
              f"success {e.success:.0%}, futility {e.futility:.0%}, undecided {e.undecided:.0%}")
    t0 = time.perf_counter()
    same = total = 0
    for e in plan:
        diffs = simulated_differences(REPEATS, e.effect, 300, PLAN_SIMULATIONS, seed=20240)
        batch = endings(rule, diffs)
        for row, want in zip(diffs.tolist(), batch, strict=True):
            rows = [stats.TaskValues(task=str(i), pass_rate={"t": d}, tokens={"t": None}) for i, d in enumerate(row)]
            state = stats.sequential_state(rule, ["t"], rows, until_decided=True)
            got = (state.decided_after, state.gates[0].decision or "undecided") if state.decided else (300, "undecided")
            same += got == want
            total += 1
    one = time.perf_counter() - t0
    print(f"  the same runs one at a time through stats.sequential_state (the plan's old loop): {one:.1f} s; "
          f"endings identical in {same} of {total} runs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pool", type=int, default=300)
    ap.add_argument("--only", default="plan,aa,costs,family,fixed", help="Comma-separated parts to run.")
    args = ap.parse_args()
    parts = set(args.only.split(","))
    if "plan" in parts:
        plan_time(args.seed)
    if "aa" in parts:
        aa(args.sims, args.seed, args.pool)
    if "costs" in parts:
        costs(args.sims, args.seed, args.pool)
        # the same rule capped at the fixed design's size (max_tasks = its tasks): never dearer than it
        costs(args.sims, args.seed, stats.tasks_needed(0.10, stats.assumed_sd(REPEATS), stats.alpha_of(LEVEL)))
    if "family" in parts:
        familywise(args.sims, args.seed)
    if "fixed" in parts:
        fixed_gates(args.sims, args.seed)


if __name__ == "__main__":
    main()
