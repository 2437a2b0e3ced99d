"""A/A false-positive rate of the bound gates, old method vs new, and the power table (issue 22).

    .venv/bin/python bench/bench_aa_gates.py [--sims 2000] [--seed 0] [--ns 6,20,50,150]

Simulated null experiments, no model call: every task has its own pass probability
``p ~ Beta(2, 2)``, the same for both arms; each arm runs 3 repeats (Bernoulli(p)); each
attempt's input+output tokens are the task's base (log-normal, σ 0.8) times a per-attempt
log-normal factor (σ 0.35), the same distribution in both arms. Per task the pass-rate
difference and the mean-token ratio are formed exactly as the paired section does; then
each gate is decided through the package's own pure functions:

* old: the 90% percentile bootstrap (``stats.paired_bootstrap`` / ``geometric_mean_ratio``,
  10,000 draws, seed 0), gate "low >= margin" / "high <= factor" — the previous rule;
* new: ``stats.bound_decision`` — the one-sided sign-flip permutation test at 5%.

Gates: a margin-0 correctness gate ("better than vanilla"), a non-inferiority gate at
−5 pp judged at its boundary (the per-task differences moved by −5 pp, i.e. a treatment
exactly 5 pp worse), and a token bound gate with factor 1. A false positive is a pass.
Each rate has its Monte Carlo 95% Wilson interval; the new method must stay at or below
nominal within that error. The power table follows: the normal-approximation plan
(``stats.plan``) and, as a check, the simulated power at the tasks it asks for.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pluginbench import stats  # noqa: E402

LEVEL = 0.90
REPEATS = 3
GATES = ("better (margin 0)", "non-inferior (−5 pp, at margin)", "tokens (factor 1)")


def simulate_task(rng: random.Random, effect: float = 0.0) -> tuple[float, float]:
    """One task's (pass-rate difference, token ratio) of treatment vs vanilla."""
    p = rng.betavariate(2.0, 2.0)
    pt = min(1.0, max(0.0, p + effect))
    base = math.exp(rng.gauss(10.0, 0.8))
    arm = lambda q: (  # noqa: E731
        sum(rng.random() < q for _ in range(REPEATS)) / REPEATS,
        sum(base * math.exp(rng.gauss(0.0, 0.35)) for _ in range(REPEATS)) / REPEATS,
    )
    (rv, tv), (rt, tt) = arm(p), arm(pt)
    return rt - rv, tt / tv


def decisions(diffs: list[float], ratios: list[float]) -> dict[str, tuple[bool, bool]]:
    """Per gate: (old method passes, new method passes) on one simulated experiment."""
    ni = [d - 0.05 for d in diffs]  # the treatment moved onto the −5 pp margin
    old_d = stats.paired_bootstrap(diffs, level=LEVEL)
    old_ni = stats.paired_bootstrap(ni, level=LEVEL)
    old_t = stats.geometric_mean_ratio(ratios, level=LEVEL)
    return {
        GATES[0]: (old_d.low is not None and old_d.low >= 0.0,
                   stats.bound_decision("correctness_bound", diffs, 0.0, LEVEL)[0]),
        GATES[1]: (old_ni.low is not None and old_ni.low >= -0.05,
                   stats.bound_decision("correctness_bound", ni, -0.05, LEVEL)[0]),
        GATES[2]: (old_t.high is not None and old_t.high <= 1.0,
                   stats.bound_decision("token_bound", ratios, 1.0, LEVEL)[0]),
    }


def aa_table(ns: list[int], sims: int, seed: int) -> list[dict[str, object]]:
    """Rows (N, gate, old passes, new passes, sims) over ``sims`` null experiments per N."""
    rows = []
    for n in ns:
        rng = random.Random(f"{seed}-{n}")
        tally = {g: [0, 0] for g in GATES}
        for _ in range(sims):
            pairs = [simulate_task(rng) for _ in range(n)]
            for g, (old, new) in decisions([d for d, _ in pairs], [r for _, r in pairs]).items():
                tally[g][0] += old
                tally[g][1] += new
        for g in GATES:
            rows.append({"n": n, "gate": g, "old": tally[g][0], "new": tally[g][1], "sims": sims})
    return rows


def simulated_power(n: int, effect: float, sims: int, seed: int) -> float:
    """Share of ``sims`` experiments of ``n`` tasks with a true ``effect`` the margin-0 gate passes."""
    rng = random.Random(f"power-{seed}-{n}-{effect}")
    hits = 0
    for _ in range(sims):
        diffs = [simulate_task(rng, effect)[0] for _ in range(n)]
        hits += stats.bound_decision("correctness_bound", diffs, 0.0, LEVEL)[0]
    return hits / sims


def _rate(k: int, n: int) -> str:
    w = stats.wilson_interval(k, n)
    assert w is not None
    return f"{k / n:6.1%} [{w.low:5.1%}, {w.high:5.1%}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--power-sims", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ns", default="6,20,50,150")
    ap.add_argument("--no-power", action="store_true", help="Only the A/A table.")
    args = ap.parse_args()
    ns = [int(x) for x in args.ns.split(",")]
    alpha = stats.alpha_of(LEVEL)
    start = time.monotonic()
    print(f"A/A pass rate of each bound gate (a pass is a false positive); {args.sims} simulated null "
          f"experiments per N, seed {args.seed}; Beta(2,2) task pass probabilities, {REPEATS} repeats; "
          f"rate [Monte Carlo 95%]; nominal {alpha:.0%}")
    print(f"{'tasks':>5} | {'gate':<32} | {'old: 90% bootstrap':<24} | {'new: sign-flip test':<24} | nominal",
          flush=True)
    for n in ns:  # one N at a time, printed as it finishes
        for r in aa_table([n], args.sims, args.seed):
            print(f"{r['n']:>5} | {r['gate']:<32} | {_rate(r['old'], r['sims']):<24} | "
                  f"{_rate(r['new'], r['sims']):<24} | {alpha:.0%}", flush=True)
    print(f"({time.monotonic() - start:.0f} s)\n", flush=True)
    if args.no_power:
        return
    sd = stats.assumed_sd(REPEATS)
    print(f"Power at 80%, one-sided {alpha:.0%}: {stats.plan(ns[0], REPEATS, alpha).assumption}")
    print(f"{'tasks':>5} | {'MDE (80% power)':>15}")
    for n in ns:
        m = stats.mde(n, sd, alpha)
        print(f"{n:>5} | {'too few tasks' if m is None else stats.format_pp(m):>15}")
    for effect in stats.EFFECTS if hasattr(stats, "EFFECTS") else (0.10, 0.05):
        need = stats.tasks_needed(effect, sd, alpha)
        sim = simulated_power(need, effect, args.power_sims, args.seed)
        print(f"tasks needed for {stats.format_pp(effect, 0)}: {need} (simulated power at {need} tasks, "
              f"p_T = min(1, p + effect), {args.power_sims} sims: {sim:.0%})")


if __name__ == "__main__":
    main()
