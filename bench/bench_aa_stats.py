"""Attacks on the decision rules at 6–30 tasks, through the package's own pure functions.

    .venv/bin/python bench/bench_aa_stats.py [--sims 1000] [--seed 0] [--ns 6,10,15,20,30]
        [--only ni,equivalence,family,coverage,power,sequential,peeking,ratios,token_coverage,more_tasks]

Simulated experiments, no model call. Every task has its own vanilla pass probability from
one of three shapes — ``beta22`` (Beta(2, 2), the planner's assumption), ``ties`` (45% of
tasks always pass, 35% always fail, 20% uniform: most tasks tie in both arms) and ``ushape``
(Beta(0.3, 0.3)) — and each arm runs ``R`` repeats (Bernoulli). A treatment effect ``δ`` is
the population mean of the per-task difference, exactly: ``prop`` spreads it over every task
(pass probabilities scaled toward 0 or 1), ``conc`` puts it on 30% of the tasks (skewed
differences, the shape that breaks symmetry). Each rate has its Monte Carlo 95% Wilson
interval; nominal is the one-sided α = 5% of the default 90% level unless said.

* ``ni``: the correctness bound gate at margin −5 pp (``stats.bound_decision``) on a
  treatment exactly 5 pp worse — old: the sign-flip test at the margin; new: the betting
  test for a bounded mean that ``bound_decision`` now uses at a non-zero margin;
* ``equivalence``: the verdict's "no difference larger than X" (``stats.verdict_for``) when
  the truth is 10 pp apart (±) — old: the sign-flip interval within ±10 pp; new: the verdict;
* ``family``: 1–3 treatments identical to vanilla (shared vanilla), any false "better"
  among the verdicts (``stats.verdicts``) — old: each verdict alone; new: with Holm;
* ``coverage``: coverage of the 90% interval shown for the mean pass-rate difference at
  δ = ±10 pp (concentrated) — before: the sign-flip interval; after: the betting interval
  for a bounded mean (``stats.difference_interval``) — and the price: mean widths;
* ``power``: the plan's minimum detectable effect at N (``stats.mde``, Beta(2, 2),
  one-sided 5%, 80%) against the simulated power of the margin-0 test at that effect;
* ``sequential``: the sequential rule (``stats._sequential_sim.endings``, the fold and the
  ``gate_decision`` the Supervisor uses) looked at after every task of a 30-task pool under
  A/A, 1 and 3 treatments: any false success or failure (nominal 10%);
* ``peeking``: a user comparing runs of 6 tasks each and looking after each (6 … 30 tasks,
  fixed-N sign-flip, better or worse): what optional stopping across ``compare`` costs;
* ``ratios``: the token bound gate at factor 1.3 (``stats.bound_decision``) and the
  ``cost_ratio`` rule at 1.3 (the one-sided sign-flip test of ``c − 1.3 · v``, as
  ``stats._cost_gate`` decides it) when the truth sits on the factor: every task × 1.3 (a
  scale null, exact), or the whole effect on 30% of the tasks (skewed); log-normal task sizes
  (σ 1 or 2) and attempt noise (σ 0.35 or 1). Shown, not changed (left: unbounded values have
  no finite-sample test of a mean without a symmetry assumption);
* ``token_coverage``: coverage of the 90% geometric-mean token-ratio interval shown (sign-flip
  on log ratios) when the true geometric-mean ratio is 1.3, every task × 1.3 or skewed (the
  whole effect on 30% of the tasks). Shown, not changed (same reason);
* ``more_tasks``: the undetermined verdict's "about N more tasks would likely decide it",
  checked: each run whose sentence gives N gets N fresh tasks from the same truth (same shape,
  same effect, 3 repeats) added to its own, and the verdict's rules (``stats.verdict_for``)
  are asked again at n + N; the share decided is what "likely" really is (target ≥ 50%).
  before: the normal-approximation count the verdict used (``stats.tasks_needed`` at the
  observed σ for the effect and for the margin minus the effect); after: the bootstrap
  through the deciding rules (``stats._more_tasks``). Also: how often a count is given, its
  median, and how often the sentence says "not reachable". ``--sims`` is capped at 300 here.
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
from pluginbench.stats._sequential_sim import endings  # noqa: E402

LEVEL = 0.90
ALPHA = stats.alpha_of(LEVEL)
SHAPES = ("beta22", "ties", "ushape")
MEAN_P = {"beta22": 0.5, "ties": 0.55, "ushape": 0.5}


def task_p(rng: random.Random, shape: str) -> float:
    """One task's vanilla pass probability of ``shape`` (module docstring)."""
    if shape == "beta22":
        return rng.betavariate(2, 2)
    if shape == "ushape":
        return rng.betavariate(0.3, 0.3)
    u = rng.random()
    return 1.0 if u < 0.45 else 0.0 if u < 0.80 else rng.random()


def treated(rng: random.Random, p: float, shape: str, delta: float, mode: str) -> float:
    """The treatment's pass probability on a task: population mean difference exactly ``delta``."""
    if delta == 0:
        return p
    share = 1.0 if mode == "prop" else 0.3
    if rng.random() >= share:
        return p
    m = MEAN_P[shape]
    if delta < 0:
        return p * (1 + delta / (share * m))
    return 1 - (1 - p) * (1 - delta / (share * (1 - m)))


def diffs(rng: random.Random, shape: str, n: int, repeats: int, delta: float = 0.0, mode: str = "prop",
          p: list[float] | None = None) -> list[float]:
    """Per-task pass-rate differences (treatment − vanilla) of one simulated run."""
    out = []
    for i in range(n):
        pv = task_p(rng, shape) if p is None else p[i]
        pt = treated(rng, pv, shape, delta, mode)
        out.append((sum(rng.random() < pt for _ in range(repeats)) - sum(rng.random() < pv for _ in range(repeats)))
                   / repeats)
    return out


def sign_flip(values: list[float], shift: float, alternative: str) -> bool:
    return stats.sign_flip_test(values, shift=shift, alternative=alternative).p <= ALPHA  # type: ignore[arg-type]


def doc_of(arms: dict[str, list[float]]) -> dict:
    """A minimal complete results document: vanilla and the treatments with these per-task differences."""
    n = len(next(iter(arms.values())))
    tasks = [f"t{i:02d}" for i in range(n)]

    def summary(e: stats.Estimate) -> dict:
        return {"estimate": e.estimate, "low": e.low, "high": e.high, "tasks": e.tasks, "status": e.status,
                "level": e.level, "min_tasks": e.min_tasks}

    return {"arms": ["vanilla", *arms], "tasks": [], "run": {"attempts_total": 1, "attempts_complete": 1},
            "per_task": {}, "costs": {},
            "deltas": {a: {"against": "vanilla",
                           "per_task": {t: {"pass_rate_difference": d} for t, d in zip(tasks, ds, strict=True)},
                           "summary": {"pass_rate": summary(stats.difference_interval(ds, LEVEL)),
                                       "tokens": {"estimate": None}, "dollars": {}}}
                       for a, ds in arms.items()}}


def rate(k: int, n: int) -> str:
    w = stats.wilson_interval(k, n)
    assert w is not None
    return f"{k / n:6.1%} [{w.low:5.1%}, {w.high:5.1%}]"


def ni(ns: list[int], sims: int, seed: int) -> None:
    print(f"\nNon-inferiority gate at -5 pp, treatment exactly 5 pp worse; {sims} runs per cell; pass = false positive "
          "(nominal 5%)")
    print(f"{'shape':<7} {'R':>1} {'tasks':>5} {'mode':<4} | {'old: sign-flip at margin':<24} | {'new: bound_decision':<24}")
    for shape in SHAPES:
        for repeats in (1, 3):
            for n in ns:
                for mode in ("prop", "conc"):
                    rng = random.Random(f"ni-{seed}-{shape}-{repeats}-{n}-{mode}")
                    old = new = 0
                    for _ in range(sims):
                        d = diffs(rng, shape, n, repeats, -0.05, mode)
                        old += sign_flip(d, -0.05, "greater")
                        new += stats.bound_decision("correctness_bound", d, -0.05, LEVEL)[0]
                    print(f"{shape:<7} {repeats:>1} {n:>5} {mode:<4} | {rate(old, sims):<24} | {rate(new, sims):<24}",
                          flush=True)


def equivalence(ns: list[int], sims: int, seed: int) -> None:
    print(f"\nEquivalence claim ('no difference larger than X', margin 10 pp) when the truth is 10 pp apart "
          f"(concentrated); {sims} runs per cell, half at +10, half at -10 pp; a claim is false (nominal 5%)")
    print(f"{'shape':<7} {'R':>1} {'tasks':>5} | {'old: sign-flip within':<24} | {'new: verdict_for':<24}")
    for shape in ("beta22", "ties"):
        for repeats in (1, 3):
            for n in ns:
                rng = random.Random(f"eq-{seed}-{shape}-{repeats}-{n}")
                old = new = 0
                for i in range(sims):
                    d = diffs(rng, shape, n, repeats, 0.10 if i % 2 else -0.10, "conc")
                    old += (sign_flip(d, -0.10, "greater") and sign_flip(d, 0.10, "less")
                            and not sign_flip(d, 0.0, "greater") and not sign_flip(d, 0.0, "less"))
                    new += stats.verdict_for(doc_of({"t": d}), "t").kind == "equivalent"
                print(f"{shape:<7} {repeats:>1} {n:>5} | {rate(old, sims):<24} | {rate(new, sims):<24}", flush=True)


def family(ns: list[int], sims: int, seed: int) -> None:
    print(f"\nSeveral treatments identical to vanilla (shared vanilla, Beta(2, 2), 3 repeats); {sims} runs per cell; "
          "any false 'better' among the verdicts (nominal 5%)")
    print(f"{'tasks':>5} {'k':>1} | {'old: each alone':<24} | {'new: verdicts (Holm)':<24}")
    for n in ns:
        for k in (1, 2, 3):
            rng = random.Random(f"fam-{seed}-{n}-{k}")
            old = new = 0
            for _ in range(sims):
                p = [task_p(rng, "beta22") for _ in range(n)]
                van = [sum(rng.random() < q for _ in range(3)) for q in p]
                arms = {f"t{j}": [(sum(rng.random() < q for _ in range(3)) - v) / 3 for q, v in zip(p, van, strict=True)]
                        for j in range(k)}
                old += any(sign_flip(d, 0.0, "greater") for d in arms.values())
                new += any(v.kind == "better" for v in stats.verdicts(doc_of(arms)))
            print(f"{n:>5} {k:>1} | {rate(old, sims):<24} | {rate(new, sims):<24}", flush=True)


WIDTH_NS = (6, 10, 30)
WIDTH_RUNS = 200


def coverage(ns: list[int], sims: int, seed: int) -> None:
    print(f"\nCoverage of the 90% interval shown for the mean pass-rate difference (the truth inside it), "
          f"δ = ±10 pp concentrated on 30% of the tasks; {sims} runs per cell (nominal 90%). before: the sign-flip "
          "interval (both one-sided sign-flip tests at δ); after: stats.difference_interval (the betting interval "
          f"for a bounded mean). Mean width on the first {WIDTH_RUNS} runs of a cell at {', '.join(map(str, WIDTH_NS))} "
          "tasks (before: stats.mean_interval)")
    print(f"{'shape':<7} {'R':>1} {'tasks':>5} | {'before: sign-flip':<24} | {'after: bounded mean':<24} | "
          f"{'width before':>12} | {'width after':>11}")
    for shape in ("beta22", "ties"):
        for repeats in (1, 3):
            for n in ns:
                rng = random.Random(f"cov-{seed}-{shape}-{repeats}-{n}")
                before = after = 0
                w_before: list[float] = []
                w_after: list[float] = []
                for i in range(sims):
                    delta = 0.10 if i % 2 else -0.10
                    d = diffs(rng, shape, n, repeats, delta, "conc")
                    before += not (sign_flip(d, delta, "greater") or sign_flip(d, delta, "less"))
                    iv = stats.difference_interval(d, LEVEL)
                    assert iv.low is not None and iv.high is not None
                    after += iv.low <= delta <= iv.high
                    if n in WIDTH_NS and i < WIDTH_RUNS:
                        old = stats.mean_interval(d, LEVEL)
                        assert old.low is not None and old.high is not None
                        w_before.append(old.high - old.low)
                        w_after.append(iv.high - iv.low)
                widths = (f"{stats.format_pp(sum(w_before) / len(w_before)).lstrip('+'):>12} | "
                          f"{stats.format_pp(sum(w_after) / len(w_after)).lstrip('+'):>11}") if w_before else \
                    f"{'':>12} | {'':>11}"
                print(f"{shape:<7} {repeats:>1} {n:>5} | {rate(before, sims):<24} | {rate(after, sims):<24} | {widths}",
                      flush=True)


def power(ns: list[int], sims: int, seed: int) -> None:
    print(f"\nThe plan's 80% power at its minimum detectable effect (Beta(2, 2), effect spread over tasks, exact mean), "
          f"simulated through the margin-0 sign-flip test; {sims} runs per cell")
    for repeats in (1, 2, 3):
        cells = []
        for n in ns:
            m = stats.mde(n, stats.assumed_sd(repeats), ALPHA)
            if m is None or m >= 0.5:
                cells.append(f"{n}: MDE {'-' if m is None else stats.format_pp(m)} (not simulated)")
                continue
            rng = random.Random(f"pow-{seed}-{repeats}-{n}")
            hits = sum(sign_flip(diffs(rng, "beta22", n, repeats, m, "prop"), 0.0, "greater") for _ in range(sims))
            cells.append(f"{n}: MDE {stats.format_pp(m)} → {rate(hits, sims)}")
        print(f"R={repeats} | " + " | ".join(cells), flush=True)


def sequential(sims: int, seed: int) -> None:
    print(f"\nSequential rule under A/A, looked at after every task of a 30-task pool (min_tasks 6); {sims} runs per "
          "cell; any false success or failure of the family (nominal 10%)")
    for shape in SHAPES:
        for repeats in (1, 3):
            cells = []
            for k in (1, 3):
                rng = random.Random(f"seq-{seed}-{shape}-{repeats}-{k}")
                rule = stats.StoppingRule(level=LEVEL, min_tasks=6, max_tasks=None, smallest_effect=0.05)
                ends = endings(rule, [diffs(rng, shape, 30, repeats) for _ in range(sims)], k)
                cells.append(f"{k} treatment(s): {rate(sum(e in ('success', 'failure') for _, e in ends), sims)}")
            print(f"{shape:<7} R={repeats} | " + " | ".join(cells), flush=True)


def peeking(sims: int, seed: int) -> None:
    print(f"\nOptional stopping across compare: runs of 6 tasks added one at a time, the fixed-N verdict read after "
          f"each (6, 12, … 30 tasks); {sims} runs; any better or worse (nominal 10%)")
    for repeats in (1, 3):
        rng = random.Random(f"peek-{seed}-{repeats}")
        any_look = last = 0
        for _ in range(sims):
            d = diffs(rng, "beta22", 30, repeats)
            looks = [sign_flip(d[:n], 0.0, "greater") or sign_flip(d[:n], 0.0, "less") for n in (6, 12, 18, 24, 30)]
            any_look += any(looks)
            last += looks[-1]
        print(f"R={repeats} | looked after every 6 tasks {rate(any_look, sims)} | looked once at 30 {rate(last, sims)}",
              flush=True)


def _arm(rng: random.Random, size: float, sigma: float, repeats: int) -> float:
    """One arm's mean tokens (or dollars) on a task of ``size``: ``repeats`` log-normal attempts."""
    return sum(size * rng.lognormvariate(0.0, sigma) for _ in range(repeats)) / repeats


def ratios(ns: list[int], sims: int, seed: int) -> None:
    print(f"\nRatio gates at factor 1.3 with the truth on the factor; {sims} runs per cell; a pass is a false positive "
          "(nominal 5%)")
    f = 1.3
    for sig_task, sig_att in ((1.0, 0.35), (2.0, 1.0)):
        for repeats in (1, 3):
            for n in ns:
                rng = random.Random(f"ratio-{seed}-{sig_task}-{repeats}-{n}")
                scale = skew = cost = 0
                for _ in range(sims):
                    rs, rk, tc, vc = [], [], [], []
                    for _ in range(n):
                        base = rng.lognormvariate(0.0, sig_task)
                        rs.append(_arm(rng, base * f, sig_att, repeats) / _arm(rng, base, sig_att, repeats))
                        rk.append(_arm(rng, base * (f ** (1 / 0.3) if rng.random() < 0.3 else 1.0), sig_att, repeats)
                                  / _arm(rng, base, sig_att, repeats))
                        tc.append(_arm(rng, base * (1 + (f - 1) / 0.3 if rng.random() < 0.3 else 1.0), sig_att, repeats))
                        vc.append(_arm(rng, base, sig_att, repeats))
                    scale += stats.bound_decision("token_bound", rs, f, LEVEL)[0]
                    skew += stats.bound_decision("token_bound", rk, f, LEVEL)[0]
                    cost += sign_flip([c - f * v for c, v in zip(tc, vc, strict=True)], 0.0, "less")
                print(f"tasks σ {sig_task} attempts σ {sig_att} R={repeats} n={n:>2} | tokens, scale null "
                      f"{rate(scale, sims)} | tokens, skewed {rate(skew, sims)} | cost_ratio, skewed {rate(cost, sims)}",
                      flush=True)


def token_coverage(ns: list[int], sims: int, seed: int) -> None:
    print(f"\nCoverage of the 90% token-ratio interval shown (geometric mean, sign-flip on log ratios) with the true "
          f"geometric-mean ratio 1.3: every task × 1.3 (symmetric) or the whole effect on 30% of the tasks (skewed "
          f"log ratios, an asymmetric null); log-normal task sizes and attempt noise (σ 0.1: nearly noiseless attempts, the "
          f"skew undiluted); {sims} runs per cell "
          "(nominal 90%). Shown, not changed.")
    f = 1.3
    for sig_task, sig_att in ((1.0, 0.1), (1.0, 0.35), (2.0, 1.0)):
        for repeats in (1, 3):
            for n in ns:
                rng = random.Random(f"tokcov-{seed}-{sig_task}-{repeats}-{n}")
                scale = skew = 0
                for _ in range(sims):
                    rs, rk = [], []
                    for _ in range(n):
                        base = rng.lognormvariate(0.0, sig_task)
                        rs.append(_arm(rng, base * f, sig_att, repeats) / _arm(rng, base, sig_att, repeats))
                        rk.append(_arm(rng, base * (f ** (1 / 0.3) if rng.random() < 0.3 else 1.0), sig_att, repeats)
                                  / _arm(rng, base, sig_att, repeats))
                    for logs, is_scale in (([math.log(r) for r in rs], True), ([math.log(r) for r in rk], False)):
                        inside = not (sign_flip(logs, math.log(f), "greater") or sign_flip(logs, math.log(f), "less"))
                        scale += inside and is_scale
                        skew += inside and not is_scale
                print(f"tasks σ {sig_task} attempts σ {sig_att} R={repeats} n={n:>2} | every task ×1.3 "
                      f"{rate(scale, sims)} | skewed {rate(skew, sims)}", flush=True)


def old_more(d: list[float]) -> int | None:
    """The count the verdict gave before (normal approximation at the observed σ)."""
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n >= 3 else 0.0
    sd = sd if sd > 0 else stats.assumed_sd(3)
    needs = []
    if abs(mean) > 1e-9:
        needs.append(stats.tasks_needed(abs(mean), sd, ALPHA))
    if abs(mean) < 0.10:
        needs.append(stats.tasks_needed(0.10 - abs(mean), sd, ALPHA))
    return max(1, min(needs) - n) if needs else None


def _decided(d: list[float]) -> bool:
    return stats.verdict_for(doc_of({"t": d}), "t").kind in stats.DECIDED


def more_tasks(ns: list[int], sims: int, seed: int) -> None:
    sims = min(sims, 300)
    print(f"\n'About N more tasks would likely decide it', checked: undetermined runs at n tasks (3 repeats) get N fresh "
          f"tasks from the same truth and the verdict is asked again; {sims} runs per cell. given: runs whose sentence "
          "gives a count; median N; decided at n + N (target >= 50%); not reachable: sentence says so (after only)")
    print(f"{'shape':<7} {'effect':>6} {'tasks':>5} | {'before: given':>13} {'median N':>8} {'decided at n+N':<24} | "
          f"{'after: given':>12} {'median N':>8} {'decided at n+N':<24} {'not reachable':>13}")
    cpu = 0.0
    calls = 0
    for shape in ("ties", "beta22"):
        for delta in (0.0, 0.10):
            for n in ns:
                rng = random.Random(f"more-{seed}-{shape}-{delta}-{n}")
                got = {"before": [0, 0, []], "after": [0, 0, []]}
                unreachable = 0
                for _ in range(sims):
                    p = [task_p(rng, shape) for _ in range(n + 500)]
                    d = diffs(rng, shape, n, 3, delta, "prop", p)
                    t0 = time.process_time()
                    v = stats.verdict_for(doc_of({"t": d}), "t")
                    cpu += time.process_time() - t0
                    calls += 1
                    if v.kind != "undetermined":
                        continue
                    unreachable += "not reachable" in v.headline
                    fresh = diffs(rng, shape, 500, 3, delta, "prop", p[n:])
                    for name, k in (("before", old_more(d)), ("after", v.more_tasks)):
                        if k is None:
                            continue
                        row = got[name]
                        row[0] += 1
                        row[1] += _decided(d + fresh[:k])
                        row[2].append(k)

                def cell(row: list) -> str:
                    if not row[0]:
                        return f"{0:>4} {'-':>8} {'-':<24}"
                    ks = sorted(row[2])
                    return f"{row[0]:>4} {ks[len(ks) // 2]:>8} {rate(row[1], row[0]):<24}"

                print(f"{shape:<7} {delta * 100:>+5.0f}% {n:>5} | {'':>8} {cell(got['before'])} | {'':>7} "
                      f"{cell(got['after'])} {unreachable:>13}", flush=True)
    print(f"verdict_for with the count: {cpu / max(1, calls) * 1000:.1f} ms CPU per verdict (mean over {calls})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ns", default="6,10,15,20,30")
    ap.add_argument("--only", default="ni,equivalence,family,coverage,power,sequential,peeking,ratios,token_coverage,"
                                      "more_tasks")
    args = ap.parse_args()
    ns = [int(x) for x in args.ns.split(",")]
    only = set(args.only.split(","))
    start = time.process_time()
    for name, run in (("ni", lambda: ni(ns, args.sims, args.seed)),
                      ("equivalence", lambda: equivalence(ns, args.sims, args.seed)),
                      ("family", lambda: family(ns, args.sims, args.seed)),
                      ("coverage", lambda: coverage(ns, args.sims, args.seed)),
                      ("power", lambda: power(ns, args.sims, args.seed)),
                      ("sequential", lambda: sequential(args.sims, args.seed)),
                      ("peeking", lambda: peeking(args.sims, args.seed)),
                      ("ratios", lambda: ratios(ns, args.sims, args.seed)),
                      ("token_coverage", lambda: token_coverage(ns, args.sims, args.seed)),
                      ("more_tasks", lambda: more_tasks(ns, args.sims, args.seed))):
        if name in only:
            run()
    print(f"\n({time.process_time() - start:.0f} CPU s)")


if __name__ == "__main__":
    main()
