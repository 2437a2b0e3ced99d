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
−5 pp judged at its boundary (the per-task differences moved onto −5 pp as ``calibrate``
moves them, ``d · 0.95 − 0.05``, i.e. a treatment exactly 5 pp worse whose differences are
symmetric about it: the easy null; ``bench/bench_aa_stats.py`` has the realistic ones, tied
and skewed), and a token bound gate with factor 1. A false positive is a pass.

Intervals a reader decides on (issue 22 items 5 and 7), the same null data:

* code Δ, lower is better: per attempt a count (unused-code candidates, complexity added)
  drawn Poisson with a task rate ~ LogNormal(1, 1) times a per-attempt Gamma(2, 1/2) factor
  (over-dispersed, many ties at 0), the task median of 3 repeats per arm, the paired task
  deltas through ``projections._report_code.paired_delta`` (the report's own function); a
  false positive is a green "better" reading. Old: the previous page's plain Δ below 0;
* code Δ, higher is better: changed-line coverage per attempt Beta(a, b) around a task mean
  ~ Beta(2, 2) (bounded, skewed), the same way; a false positive is a green "better";
* dollars cheaper: per-task mean dollars per attempt of each arm (the token model above ×
  a fixed price) through ``stats.ratio_of_means_interval``; a false positive is an interval
  wholly below ×1 ("credibly cheaper"), which is the rule the ``cost_ratio`` gate now decides
  by. Old: the ``cost_ratio`` gate at factor 1 as it was, comparing the point ratio of mean
  dollars per attempt.
Each rate has its Monte Carlo 95% Wilson interval; the new method must stay at or below
nominal within that error. The power table follows: the plan
(``stats.plan``) and, as a check, the simulated power at the tasks it asks for.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pluginbench import stats  # noqa: E402
from pluginbench.projections._report_code import paired_delta  # noqa: E402

LEVEL = 0.90
REPEATS = 3
GATES = ("better (margin 0)", "non-inferior (−5 pp, at margin)", "tokens (factor 1)",
         "code Δ, lower better (counts)", "code Δ, higher better (coverage)", "dollars cheaper (×1)")
USD_PER_TOKEN = 3e-6


def _poisson(rng: random.Random, lam: float) -> int:
    """Knuth's Poisson draw (small rates) or a rounded normal one (large)."""
    if lam > 50:
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def simulate_code_task(rng: random.Random) -> tuple[float, float]:
    """One null task's paired (count delta, coverage delta) of the task medians of 3 repeats per arm."""
    rate = math.exp(rng.gauss(1.0, 1.0))
    mean = rng.betavariate(2.0, 2.0)
    k = 6.0  # coverage concentration around the task mean

    def arm() -> tuple[float, float]:
        counts = [_poisson(rng, rate * rng.gammavariate(2.0, 0.5)) for _ in range(REPEATS)]
        cover = [rng.betavariate(mean * k + 0.01, (1 - mean) * k + 0.01) for _ in range(REPEATS)]
        return statistics.median(counts), statistics.median(cover)

    (cv, gv), (ct, gt) = arm(), arm()
    return ct - cv, gt - gv


#: Up to this many tasks the new readings come from the report's own interval functions
#: (exact enumeration, fast); above, from the one-sided test at the no-difference point that
#: those intervals invert (the same decision: the upper end is below 0 exactly when the
#: "less" test at 0 rejects), so N = 150 costs one test instead of a bisection of tests.
#: The equivalence is checked on every draw up to this many tasks (``--check-intervals-up-to``;
#: the interval bisection costs ~60 tests, so the default keeps N = 20 quick).
INTERVAL_MAX = 12
MISMATCHES: list[str] = []


def _rejects_below(values: list[float]) -> bool:
    need = stats.min_tasks(stats.alpha_of(LEVEL))
    return len(values) >= need and stats.sign_flip_test(values, alternative="less").p <= stats.alpha_of(LEVEL)


def code_decisions(counts: list[float], cover: list[float]) -> dict[str, tuple[bool, bool]]:
    """(old, new) green "better" readings of the two code deltas."""
    by_test = (_rejects_below(counts), _rejects_below([-c for c in cover]))
    if len(counts) <= INTERVAL_MAX:
        lower = paired_delta(counts, "lower", LEVEL)["reading"] == "better"
        higher = paired_delta(cover, "higher", LEVEL)["reading"] == "better"
        if (lower, higher) != by_test:
            MISMATCHES.append(f"code n={len(counts)}: interval {(lower, higher)} test {by_test}")
    return {
        GATES[3]: (math.fsum(counts) < 0, by_test[0]),
        GATES[4]: (math.fsum(cover) > 0, by_test[1]),
    }


def dollar_decision(usd_t: list[float], usd_v: list[float]) -> tuple[bool, bool]:
    """(the point cost_ratio gate at factor 1 passes, the interval is wholly below ×1)."""
    point = stats.cost_ratio(math.fsum(usd_t), len(usd_t), math.fsum(usd_v), len(usd_v))
    new = _rejects_below([t - v for t, v in zip(usd_t, usd_v, strict=True)])
    if len(usd_t) <= INTERVAL_MAX:
        iv = stats.ratio_of_means_interval(usd_t, usd_v, LEVEL)
        if (iv.high is not None and iv.high < 1.0) != new:
            MISMATCHES.append(f"dollars n={len(usd_t)}: interval high {iv.high} test {new}")
    return (point is not None and point <= 1.0, new)


def simulate_task(rng: random.Random, effect: float = 0.0, tokens: list[tuple[float, float]] | None = None,
                  ) -> tuple[float, float]:
    """One task's (pass-rate difference, token ratio) of treatment vs vanilla; ``tokens``
    collects the two mean token totals (treatment, vanilla) when given."""
    p = rng.betavariate(2.0, 2.0)
    pt = min(1.0, max(0.0, p + effect))
    base = math.exp(rng.gauss(10.0, 0.8))
    arm = lambda q: (  # noqa: E731
        sum(rng.random() < q for _ in range(REPEATS)) / REPEATS,
        sum(base * math.exp(rng.gauss(0.0, 0.35)) for _ in range(REPEATS)) / REPEATS,
    )
    (rv, tv), (rt, tt) = arm(p), arm(pt)
    if tokens is not None:
        tokens.append((tt, tv))
    return rt - rv, tt / tv


def decisions(diffs: list[float], ratios: list[float]) -> dict[str, tuple[bool, bool]]:
    """Per gate: (old method passes, new method passes) on one simulated experiment."""
    ni = [d * 0.95 - 0.05 for d in diffs]  # the treatment moved onto the −5 pp margin, within ±1 (as calibrate)
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
        code_rng = random.Random(f"code-{seed}-{n}")
        tally = {g: [0, 0] for g in GATES}
        for _ in range(sims):
            tokens: list[tuple[float, float]] = []
            pairs = [simulate_task(rng, tokens=tokens) for _ in range(n)]
            got = decisions([d for d, _ in pairs], [r for _, r in pairs])
            code = [simulate_code_task(code_rng) for _ in range(n)]
            got.update(code_decisions([c for c, _ in code], [v for _, v in code]))
            got[GATES[5]] = dollar_decision([t * USD_PER_TOKEN for t, _ in tokens],
                                            [v * USD_PER_TOKEN for _, v in tokens])
            for g, (old, new) in got.items():
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
    ap.add_argument("--check-intervals-up-to", type=int, default=INTERVAL_MAX,
                    help="Also decide through the report's interval functions, and count disagreements, up to this N.")
    args = ap.parse_args()
    globals()["INTERVAL_MAX"] = args.check_intervals_up_to
    ns = [int(x) for x in args.ns.split(",")]
    alpha = stats.alpha_of(LEVEL)
    start = time.monotonic()
    print(f"A/A pass rate of each bound gate (a pass is a false positive); {args.sims} simulated null "
          f"experiments per N, seed {args.seed}; Beta(2,2) task pass probabilities, {REPEATS} repeats; "
          f"rate [Monte Carlo 95%]; nominal {alpha:.0%}")
    print(f"{'tasks':>5} | {'gate':<32} | {'old (bootstrap / point)':<24} | {'new: sign-flip test':<24} | nominal",
          flush=True)
    for n in ns:  # one N at a time, printed as it finishes
        for r in aa_table([n], args.sims, args.seed):
            print(f"{r['n']:>5} | {r['gate']:<32} | {_rate(r['old'], r['sims']):<24} | "
                  f"{_rate(r['new'], r['sims']):<24} | {alpha:.0%}", flush=True)
    print(f"({time.monotonic() - start:.0f} s; interval vs test disagreements at N <= {INTERVAL_MAX}: "
          f"{len(MISMATCHES)}{': ' + '; '.join(MISMATCHES[:3]) if MISMATCHES else ''})\n", flush=True)
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
